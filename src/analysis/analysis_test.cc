// Unit tests of the analysis core on models built in memory (no SQLite).
#include <gtest/gtest.h>

#include <cstdio>

#include "analysis/model/gaps.h"
#include "analysis/model/steps.h"
#include "analysis/model/summary.h"
#include "analysis/model/timeline.h"
#include "analysis/model/trace_model.h"
#include "analysis/output.h"
#include "analysis/rules/rules.h"
#include "common/kernel_names.h"

namespace stepscope {
namespace {

TEST(Summary, MedianAndSampleStddev) {
  std::vector<int64_t> v = {300, 100, 200, 400};
  DurationStats s = Summarize(&v);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.total, 1000);
  EXPECT_EQ(s.min, 100);
  EXPECT_EQ(s.max, 400);
  EXPECT_DOUBLE_EQ(s.mean, 250.0);
  EXPECT_DOUBLE_EQ(s.median, 250.0);      // mean of the two middle values
  EXPECT_NEAR(s.stddev, 129.0994, 1e-3);  // sqrt(50000 / 3)
  std::vector<int64_t> one = {7};
  EXPECT_DOUBLE_EQ(Summarize(&one).stddev, 0.0);
  std::vector<int64_t> none;
  EXPECT_EQ(Summarize(&none).count, 0);
}

TEST(KernelNames, Categories) {
  EXPECT_EQ(ClassifyKernelName(
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
                .category,
            OpCategory::kCommunication);
  EXPECT_EQ(ClassifyKernelName("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT").category,
            OpCategory::kCompute);
}

TEST(KernelNames, GemmPrecisionIsTheInputType) {
  EXPECT_EQ(ClassifyKernelName("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT").gemm,
            GemmPrecision::kLow);
  EXPECT_EQ(ClassifyKernelName("nvjet_sss_128x64_v_bz_NNT").gemm, GemmPrecision::kFp32);
  // bf16 autocast GEMMs on H200 (CUDA 13), from the real fixtures.
  EXPECT_EQ(ClassifyKernelName("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT").gemm,
            GemmPrecision::kLow);
  EXPECT_EQ(ClassifyKernelName("nvjet_sm90_sss_128x128_64x4_h_bz_NNT").gemm, GemmPrecision::kFp32);
  EXPECT_EQ(ClassifyKernelName("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64").gemm,
            GemmPrecision::kLow);  // fp32 accumulate is not an fp32 GEMM
  EXPECT_EQ(ClassifyKernelName("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32").gemm,
            GemmPrecision::kFp32);
  EXPECT_EQ(ClassifyKernelName("ampere_sgemm_128x64_nn").gemm, GemmPrecision::kFp32);
  EXPECT_EQ(ClassifyKernelName(
                "void cutlass::Kernel<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)")
                .gemm,
            GemmPrecision::kFp32);
  EXPECT_EQ(ClassifyKernelName("cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4").gemm,
            GemmPrecision::kTf32);
  EXPECT_EQ(ClassifyKernelName("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n").gemm,
            GemmPrecision::kTf32);
  EXPECT_EQ(ClassifyKernelName(
                "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, "
                "false, false, cutlass::bfloat16_t>>(Flash_fwd_params)")
                .gemm,
            GemmPrecision::kNotGemm);
  EXPECT_EQ(
      ClassifyKernelName("void at::native::vectorized_elementwise_kernel<4, float>(int)").gemm,
      GemmPrecision::kNotGemm);
}

TEST(KernelNames, BaseName) {
  EXPECT_EQ(KernelBaseName("void at::native::(anonymous namespace)::k<float>(int, float*)"),
            "at::native::(anonymous namespace)::k<float>");
  EXPECT_EQ(KernelBaseName("ncclDevKernel_AllReduce(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_AllReduce");
}

// A model with one thread, two "step N" ranges and kernels launched inside them.
std::unique_ptr<TraceModel> TwoSteps(int64_t host_gap) {
  TraceModel::Records r;
  r.strings = {"",
               "gemm",
               "add",
               "cudaLaunchKernel",
               "step 1",
               "step 2",
               "nccl_AllReduce",
               "cudaStreamSynchronize"};
  DeviceRecord d{};
  d.id = 0;
  d.cc_major = 9;
  r.devices.push_back(d);
  uint32_t corr = 1;
  int64_t cpu = 1000;
  auto launch = [&](StringId name, int64_t start, int64_t dur) {
    r.apis.push_back({cpu, cpu + 5, 7, corr, 0, 3, 0, ApiDomain::kRuntime, {}});
    KernelRecord k{};
    k.start_ns = start;
    k.end_ns = start + dur;
    k.stream = 7;
    k.correlation = corr++;
    k.name = name;
    r.kernels.push_back(k);
    cpu += 10;
  };
  // step 1: host 1000..1030; GPU 1010..1110 (gemm) 1112..1212 (allreduce)
  launch(1, 1010, 100);
  launch(6, 1112, 100);
  r.nvtx.push_back({1000, 1030, 7, 7, 0, 4, 0, 0, NvtxKind::kPushPop, 0, 0, 0});
  // step 2 starts after host_gap; its first kernel starts 5 ns after its launch.
  cpu = 1030 + host_gap;
  const int64_t s2 = cpu;
  launch(2, std::max<int64_t>(1214, cpu + 5), 50);
  r.nvtx.push_back({s2, s2 + 20, 7, 7, 0, 5, 0, 0, NvtxKind::kPushPop, 0, 0, 0});
  return TraceModel::FromRecords(std::move(r));
}

TEST(TraceModel, DerivedIndices) {
  auto m = TwoSteps(10);
  ASSERT_EQ(m->gpu_ops().size(), 3u);
  EXPECT_EQ(m->gpu_ops()[1].category, OpCategory::kCommunication);
  EXPECT_EQ(m->ApiByCorrelation(2), 1u);
  EXPECT_EQ(m->api_range()[0], 0u);  // inside "step 1"
  EXPECT_EQ(m->RangeAt(7, 1029), 0u);
  EXPECT_EQ(m->RangeAt(7, 1035), kNone);
  EXPECT_EQ(m->origin_ns(), 1000);
  EXPECT_EQ(m->end_ns(), 1264);
}

TEST(Timeline, BreakdownPriorities) {
  TraceModel::Records r;
  r.strings = {"", "gemm", "ncclKernel_AllReduce"};
  KernelRecord a{}, b{};
  a.start_ns = 0;
  a.end_ns = 100;
  a.name = 1;
  b.start_ns = 50;  // overlaps the compute kernel for 50 ns
  b.end_ns = 200;
  b.name = 2;
  r.kernels = {a, b};
  MemcpyRecord c{};
  c.start_ns = 180;
  c.end_ns = 300;
  r.memcpys = {c};
  auto m = TraceModel::FromRecords(std::move(r));
  const Breakdown w = m->Timeline(-1).Window(0, 400);
  EXPECT_EQ(w.compute, 100);
  EXPECT_EQ(w.communication, 100);
  EXPECT_EQ(w.memory, 100);
  EXPECT_EQ(w.idle, 100);
  const Breakdown part = m->Timeline(0).Window(90, 190);
  EXPECT_EQ(part.compute, 10);
  EXPECT_EQ(part.communication, 90);
  EXPECT_EQ(part.memory, 0);
}

TEST(Steps, WindowsTileTheGpuTimeline) {
  auto m = TwoSteps(500);
  auto set = DetectSteps(*m, {});
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(set->steps.size(), 2u);
  EXPECT_EQ(set->method, "nvtx");
  EXPECT_EQ(set->steps[0].number, 1);
  EXPECT_EQ(set->steps[0].start_ns, 1000);
  EXPECT_EQ(set->steps[0].end_ns, 1212);
  // Step 2 starts where step 1's GPU work ended and includes the wait for its launch.
  EXPECT_EQ(set->steps[1].start_ns, 1212);
  EXPECT_EQ(set->steps[1].end_ns, 1530 + 5 + 50);
  EXPECT_EQ(set->steps[1].breakdown.busy, 50);
  EXPECT_EQ(set->steps[0].breakdown.communication, 100);
  EXPECT_EQ(set->steps[0].top_kernels.size(), 2u);
}

TEST(Gaps, HostWaitAndKernelWait) {
  auto m = TwoSteps(500);
  GapTotals totals;
  GapOptions opt;
  opt.keep_kernel_wait = true;
  auto gaps = FindGpuGaps(*m, m->Timeline(0), 0, opt, nullptr, &totals);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].cause, GapCause::kKernelWait);  // 1110..1112, launched at 1010
  EXPECT_EQ(gaps[1].cause, GapCause::kHostWait);    // 1212..1535, launched at 1530
  EXPECT_EQ(gaps[1].length(), 1535 - 1212);
  EXPECT_EQ(totals.by_cause[0], 1535 - 1212);
  EXPECT_EQ(totals.by_cause[2], 2);
}

TEST(Gaps, SyncWait) {
  TraceModel::Records r;
  r.strings = {"", "gemm", "cudaLaunchKernel", "cudaStreamSynchronize"};
  r.apis.push_back({0, 5, 7, 1, 0, 2, 0, ApiDomain::kRuntime, {}});
  r.apis.push_back(
      {10, 105, 7, 2, 0, 3, 0, ApiDomain::kRuntime, {}});  // blocks until the GPU is done
  r.apis.push_back({300, 305, 7, 3, 0, 2, 0, ApiDomain::kRuntime, {}});
  r.syncs.push_back({11, 104, 7, 2, 1, 7, 0, SyncType::kStreamSynchronize, {}});
  KernelRecord a{}, b{};
  a.start_ns = 5;
  a.end_ns = 100;
  a.correlation = 1;
  a.name = 1;
  b.start_ns = 310;
  b.end_ns = 400;
  b.correlation = 3;
  b.name = 1;
  r.kernels = {a, b};
  auto m = TraceModel::FromRecords(std::move(r));
  auto gaps = FindGpuGaps(*m, m->Timeline(0), 0, {}, nullptr, nullptr);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].cause, GapCause::kSyncWait);
  EXPECT_EQ(gaps[0].blocking_api, 1u);
}

// CUPTI records cudaEventQuery as an event sync, but a query never blocks:
// the gap after it is host-wait, not sync-wait.
TEST(Gaps, EventQueryIsNoSync) {
  TraceModel::Records r;
  r.strings = {"", "gemm", "cudaLaunchKernel", "cudaEventQuery"};
  r.apis.push_back({0, 5, 7, 1, 0, 2, 0, ApiDomain::kRuntime, {}});
  r.apis.push_back({100, 105, 7, 2, 0, 3, 0, ApiDomain::kRuntime, {}});
  r.apis.push_back({300, 305, 7, 3, 0, 2, 0, ApiDomain::kRuntime, {}});
  r.syncs.push_back({101, 104, 7, 2, 1, 7, 0, SyncType::kEventSynchronize, {}});
  KernelRecord a{}, b{};
  a.start_ns = 5;
  a.end_ns = 100;
  a.correlation = 1;
  a.name = 1;
  b.start_ns = 310;
  b.end_ns = 400;
  b.correlation = 3;
  b.name = 1;
  r.kernels = {a, b};
  auto m = TraceModel::FromRecords(std::move(r));
  auto gaps = FindGpuGaps(*m, m->Timeline(0), 0, {}, nullptr, nullptr);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].cause, GapCause::kHostWait);
  EXPECT_TRUE(IsQueryApiName("cudaEventQuery"));
  EXPECT_FALSE(IsQueryApiName("cudaEventSynchronize"));
}

// GPU-side copies of step annotations (Kineto's gpu_user_annotation) and
// zero-length step ranges are never steps.
TEST(Steps, GpuSideAndZeroLengthRangesAreNoSteps) {
  auto base = TwoSteps(500);
  TraceModel::Records r;
  r.strings = {"",
               "gemm",
               "add",
               "cudaLaunchKernel",
               "step 1",
               "step 2",
               "nccl_AllReduce",
               "cudaStreamSynchronize",
               "gpu_user_annotation",
               "step 3"};
  for (const KernelRecord& k : base->kernels()) r.kernels.push_back(k);
  for (const ApiRecord& a : base->apis()) r.apis.push_back(a);
  for (const NvtxRecord& n : base->nvtx()) r.nvtx.push_back(n);
  r.nvtx.push_back({1010, 1212, 7, 7, 8, 4, 0, 0, NvtxKind::kPushPop, 0, 0, 0});  // GPU-side
  r.nvtx.push_back({1600, 1600, 7, 7, 0, 9, 0, 0, NvtxKind::kPushPop, 0, 0, 0});  // zero-length
  auto m = TraceModel::FromRecords(std::move(r));
  auto set = DetectSteps(*m, {});
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(set->steps.size(), 2u);
  EXPECT_EQ(set->dropped.gpu_side, 1);
  EXPECT_EQ(set->dropped.zero_length, 1);
  EXPECT_EQ(set->stats.count, 2);
}

TEST(Rules, DataLoadingRangeNamesAreWholeWords) {
  for (const char* yes : {"data", "DataLoader", "load_batch", "get_batch", "prefetch next",
                          "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"}) {
    EXPECT_TRUE(IsDataLoadingRangeName(yes)) << yes;
  }
  for (const char* no :
       {"DistributedDataParallel.forward", "aten::batch_norm", "cudnn_convolution_backward_data",
        "forward", "input_layernorm", "batch_isend_irecv", "metadata"}) {
    EXPECT_FALSE(IsDataLoadingRangeName(no)) << no;
  }
}

// A copy without its issuing call (imported traces) is not called
// synchronous: sync_memcpy says it could not decide.
TEST(Rules, SyncMemcpyNeedsTheIssuingCall) {
  for (uint8_t is_async : {uint8_t{0}, uint8_t{1}, kAsyncUnknown}) {
    TraceModel::Records r;
    r.strings = {"", "gemm", "cudaLaunchKernel", "cudaMemcpy"};
    r.apis.push_back({0, 5, 7, 1, 0, 2, 0, ApiDomain::kRuntime, {}});
    r.apis.push_back({10, 200, 7, 2, 0, 3, 0, ApiDomain::kRuntime, {}});
    r.apis.push_back({300, 305, 7, 3, 0, 2, 0, ApiDomain::kRuntime, {}});
    KernelRecord a{}, b{};
    a.start_ns = 5;
    a.end_ns = 100;
    a.correlation = 1;
    a.name = 1;
    b.start_ns = 310;
    b.end_ns = 400;
    b.correlation = 3;
    b.name = 1;
    r.kernels = {a, b};
    MemcpyRecord c{};
    c.start_ns = 110;
    c.end_ns = 190;
    c.correlation = 2;
    c.copy_kind = CopyKind::kDeviceToHost;
    c.src_kind = MemoryKind::kDevice;
    c.dst_kind = MemoryKind::kPinned;
    c.is_async = is_async;
    r.memcpys = {c};
    auto m = TraceModel::FromRecords(std::move(r));
    AnalyzeOptions opt;
    opt.all = true;
    auto a_or = Analyze(*m, opt);
    ASSERT_TRUE(a_or.ok());
    bool sync_memcpy = false;
    for (const Finding& f : a_or->findings) sync_memcpy |= f.rule == "sync_memcpy";
    EXPECT_EQ(sync_memcpy, is_async == 0) << int(is_async);
    EXPECT_EQ(a_or->undecided.size(), is_async == kAsyncUnknown ? 1u : 0u) << int(is_async);
  }
}

// A kernel that repeats at a uniform spacing is a step anchor, unless every
// repetition was launched inside one and the same forward range (the layers
// of one forward call; a "train" range around a loop is no such evidence).
// An input copy right before an anchor belongs to its step.
TEST(Steps, KernelSequenceNotInsideOneCall) {
  for (StringId enclosing : {StringId{0}, StringId{4}, StringId{6}}) {
    const bool one_call = enclosing == 4;
    TraceModel::Records r;
    r.strings = {"",     "attn", "mlp", "cudaLaunchKernel", "LlamaModel.forward", "cudaMemcpyAsync",
                 "train"};
    uint32_t corr = 1;
    int64_t t = 0;
    for (int layer = 0; layer < 4; ++layer) {
      r.apis.push_back({t, t + 2, 7, corr, 0, 5, 0, ApiDomain::kRuntime, {}});
      MemcpyRecord c{};
      c.start_ns = t + 5;
      c.end_ns = t + 8;
      c.correlation = corr++;
      c.is_async = 1;
      r.memcpys.push_back(c);
      for (StringId name : {StringId{1}, StringId{2}}) {
        r.apis.push_back({t + 10, t + 12, 7, corr, 0, 3, 0, ApiDomain::kRuntime, {}});
        KernelRecord k{};
        k.start_ns = t + 20;
        k.end_ns = t + 60;
        k.correlation = corr++;
        k.name = name;
        r.kernels.push_back(k);
        t += 100;
      }
    }
    if (enclosing != 0) {
      r.nvtx.push_back({-1, t + 10, 7, 7, 0, enclosing, 0, 0, NvtxKind::kPushPop, 0, 0, 0});
    }
    auto m = TraceModel::FromRecords(std::move(r));
    auto set = DetectSteps(*m, {});
    ASSERT_TRUE(set.ok());
    if (one_call) {
      EXPECT_TRUE(set->steps.empty());
      EXPECT_NE(set->note.find("'LlamaModel.forward'"), std::string::npos) << set->note;
    } else {
      ASSERT_EQ(set->method, "kernel-sequence");
      ASSERT_EQ(set->steps.size(), 4u);
      EXPECT_EQ(set->steps[1].range_start_ns, 205);  // the copy before the anchor
      EXPECT_EQ(set->steps[0].range_end_ns, 205);
    }
  }
}

}  // namespace
}  // namespace stepscope

// The output convention (analysis/output.h): one JSON shape, file names.
namespace stepscope {
namespace {

std::vector<NamedTable> TwoTables() {
  Table a({{"x"}}), b({{"y"}});
  a.AddRow({int64_t{1}});
  b.AddRow({Cell(0.5)});
  return {{"first", "First", a, ""}, {"second", "Second", b, ""}};
}

TEST(Output, JsonIsAnObjectOfNamedTablesForOneTableToo) {
  std::vector<NamedTable> t = TwoTables();
  EXPECT_EQ(RenderTables({t[0]}, OutputFormat::kJson), "{\n\"first\": [\n {\"x\": 1}\n]\n}\n");
  EXPECT_EQ(RenderTables(t, OutputFormat::kJson),
            "{\n\"first\": [\n {\"x\": 1}\n],\n\"second\": [\n {\"y\": 0.5}\n]\n}\n");
  EXPECT_EQ(RenderTables({}, OutputFormat::kJson), "{}\n");
}

TEST(Output, PathsFollowNsysStats) {
  std::vector<NamedTable> t = TwoTables();
  OutputSpec s;
  s.format = OutputFormat::kCsv;
  s.path = "out.csv";
  EXPECT_EQ(OutputPaths(t, s), (std::vector<std::string>{"out_first.csv", "out_second.csv"}));
  EXPECT_EQ(OutputPaths({t[0]}, s), (std::vector<std::string>{"out.csv"}));
  s.path = "dir/";
  EXPECT_EQ(OutputPaths(t, s), (std::vector<std::string>{"dir/first.csv", "dir/second.csv"}));
  s.format = OutputFormat::kJson;
  s.path = "all.json";
  EXPECT_EQ(OutputPaths(t, s), (std::vector<std::string>{"all.json"}));
}

TEST(Output, ExistingFilesNeedForce) {
  const std::string path = ::testing::TempDir() + "stepscope_output_test.json";
  std::remove(path.c_str());
  OutputSpec s;
  s.format = OutputFormat::kJson;
  s.path = path;
  ASSERT_TRUE(WriteTables(TwoTables(), s).ok());
  auto again = WriteTables(TwoTables(), s);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(again.status().message().find("pass -f"), std::string::npos);
  s.force = true;
  EXPECT_TRUE(WriteTables(TwoTables(), s).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace stepscope
