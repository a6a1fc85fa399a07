// Counter values -> work -> bound, with counter sets shaped like a Hopper
// range-profiler result (metric names as CUPTI reports them on GH100; values
// chosen so every derived number can be checked by hand in the comments).
#include "roofline/roofline_model.h"
#include "roofline/roofline_report.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

Ceilings H100Like() {
  Ceilings c;
  c.gpu_name = "NVIDIA H100 80GB HBM3";
  c.values["dram_bw"] = {3.0e12, ""};
  c.values["l2_bw"] = {8.0e12, ""};
  c.values["tensor_bf16"] = {790e12, ""};
  c.values["tensor_fp16"] = {790e12, ""};
  c.values["fp32"] = {60e12, ""};
  c.values["fp64"] = {30e12, ""};
  return c;
}

// A 4096^3 bf16 GEMM: 2*4096^3 = 137,438,953,472 tensor ops in 200 us.
std::map<std::string, double> GemmCounters() {
  return {{"gpu__time_duration.sum", 200000},
          {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 137438953472.0},
          {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 0},
          {"dram__bytes_read.sum", 80e6},
          {"dram__bytes_write.sum", 20e6},
          {"lts__t_bytes.sum", 900e6},
          {"l1tex__t_bytes.sum", 1.2e9},
          {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 1000}};
}

TEST(Model, GemmIsComputeBoundByTensorBf16) {
  KernelWork w = WorkFromCounters(GemmCounters());
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorBf16)], 137438953472.0);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kFp32)], 2000.0);  // 2 per FFMA
  EXPECT_DOUBLE_EQ(w.dram_bytes(), 100e6);
  RooflineResult r = Evaluate(w, H100Like());
  EXPECT_DOUBLE_EQ(r.flops, 137438955472.0);
  // 137438955472 / 200e-6 s = 687.19 TFLOP/s
  EXPECT_NEAR(r.flops_per_s / 1e12, 687.194777, 1e-5);
  EXPECT_NEAR(r.intensity_dram, 1374.38955472, 1e-6);
  EXPECT_NEAR(r.intensity_l2, 152.71, 0.01);
  EXPECT_EQ(r.precision, "tensor_bf16");
  EXPECT_EQ(r.bound, "tensor_bf16");
  EXPECT_EQ(r.bound_kind, "compute");
  // t_compute = 137438953472/790e12 + 2000/60e12 = 173.973 us (+3e-5 us) -> 86.99 % of 200 us.
  EXPECT_NEAR(r.pct_of_bound, 86.9867, 1e-3);
  EXPECT_TRUE(r.notes.empty());
}

TEST(Model, ElementwiseIsBoundByDram) {
  // A bf16 GELU over 2^25 elements: each element read and written once (2 B
  // each), math in fp32 on the CUDA cores: ~8 FFMA + 4 FMUL + 2 FADD per element.
  const double n = 33554432;
  std::map<std::string, double> m = {{"gpu__time_duration.sum", 60000},
                                     {"dram__bytes_read.sum", 2 * n},
                                     {"dram__bytes_write.sum", 2 * n},
                                     {"lts__t_bytes.sum", 4 * n},
                                     {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 8 * n},
                                     {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 4 * n},
                                     {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 2 * n}};
  RooflineResult r = Evaluate(WorkFromCounters(m), H100Like());
  EXPECT_DOUBLE_EQ(r.flops, 22 * n);        // 2*8 + 4 + 2 per element
  EXPECT_DOUBLE_EQ(r.intensity_dram, 5.5);  // 22 / 4 bytes
  EXPECT_EQ(r.precision, "fp32");
  EXPECT_EQ(r.bound, "dram_bw");
  EXPECT_EQ(r.bound_kind, "memory");
  // t_dram = 134217728 B / 3e12 = 44.739 us; of 60 us = 74.56 %.
  EXPECT_NEAR(r.pct_of_bound, 74.5654, 1e-3);
  EXPECT_NEAR(r.dram_bytes_per_s / 1e12, 2.23696, 1e-5);
  // Attainable at AI 5.5: min(60e12 fp32, 3e12 * 5.5) = 16.5 TFLOP/s.
  EXPECT_DOUBLE_EQ(r.attainable_flops_per_s, 16.5e12);
}

TEST(Model, L2BoundWhenL2TrafficDominates) {
  // Working set in L2: little DRAM traffic, much L2 traffic.
  std::map<std::string, double> m = {{"gpu__time_duration.sum", 150000},
                                     {"dram__bytes_read.sum", 1e6},
                                     {"lts__t_bytes.sum", 1e9},
                                     {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1e8}};
  RooflineResult r = Evaluate(WorkFromCounters(m), H100Like());
  EXPECT_EQ(r.bound, "l2_bw");  // 125 us > 0.33 us DRAM > 1.67 us compute
  EXPECT_EQ(r.bound_kind, "memory");
  EXPECT_NEAR(r.pct_of_bound, 100.0 * 125.0 / 150.0, 1e-9);
}

TEST(Model, MixedPrecisionSumsComputeTimes) {
  // 30e9 fp32 FLOPs (0.5 ms at 60 TF) + 316e9 bf16 tensor FLOPs (0.4 ms at 790 TF).
  std::map<std::string, double> m = {{"gpu__time_duration.sum", 2e6},
                                     {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 30e9},
                                     {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 316e9}};
  RooflineResult r = Evaluate(WorkFromCounters(m), H100Like());
  EXPECT_EQ(r.bound_kind, "compute");
  EXPECT_EQ(r.precision, "tensor_bf16");      // most FLOPs
  EXPECT_EQ(r.bound, "fp32");                 // most time
  EXPECT_NEAR(r.bound_time_ns, 0.9e6, 1e-3);  // 0.5 ms + 0.4 ms
  EXPECT_NEAR(r.pct_of_bound, 45.0, 1e-9);
}

TEST(Model, AggregateTensorCounterWinsOverDstVariantsAndSparsitySplits) {
  std::map<std::string, double> m = {{"sm__ops_path_tensor_src_fp16.sum", 100},
                                     {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 40},
                                     {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 60},
                                     {"sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum", 60},
                                     {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 7},
                                     {"sm__ops_path_tensor_src_bf16_dst_bf16.sum", 3},
                                     {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 5},
                                     {"sm__ops_path_tensor_src_fp8.sum", 11},
                                     {"sm__ops_path_tensor_src_fp64.sum", 13},
                                     {"sm__ops_path_tensor_src_int8.sum", 1000},
                                     {"sm__ops_path_tensor_src_fp4_dst_fp32.sum", 17}};
  KernelWork w = WorkFromCounters(m);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorFp16)],
                   100);  // not 100 + 40 + 60 + 60
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorBf16)], 10);  // no aggregate: 7 + 3
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorTf32)], 5);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorFp8)], 11);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorFp64)], 13);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kTensorOther)], 17);
  EXPECT_DOUBLE_EQ(w.tensor_int_ops, 1000);
  EXPECT_DOUBLE_EQ(w.total_flops(), 156);  // integer ops are not FLOPs
}

TEST(Model, SassFormulasCountFmaTwice) {
  std::map<std::string, double> m;
  const char* p = "sm__sass_thread_inst_executed_op_";
  auto put = [&](const char* op, double v) { m[std::string(p) + op + "_pred_on.sum"] = v; };
  put("dadd", 1), put("dmul", 2), put("dfma", 3);
  put("fadd", 10), put("fmul", 20), put("ffma", 30);
  put("hadd", 100), put("hmul", 200), put("hfma", 300);
  KernelWork w = WorkFromCounters(m);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kFp64)], 1 + 2 + 6);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kFp32)], 10 + 20 + 60);
  EXPECT_DOUBLE_EQ(w.flops[static_cast<int>(Precision::kFp16)], 100 + 200 + 600);
}

TEST(Model, MissingCeilingIsANoteNotAGuess) {
  std::map<std::string, double> m = {{"gpu__time_duration.sum", 1000},
                                     {"sm__ops_path_tensor_src_fp8.sum", 1e9},
                                     {"dram__bytes_read.sum", 1e6}};
  RooflineResult r = Evaluate(WorkFromCounters(m), H100Like());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "no ceiling for tensor_fp8");
  EXPECT_EQ(r.bound, "dram_bw");  // the only roof it can be placed under
}

TEST(Model, NothingMeasuredIsUnknown) {
  RooflineResult r = Evaluate(WorkFromCounters({{"gpu__time_duration.sum", 1000}}), H100Like());
  EXPECT_EQ(r.bound_kind, "unknown");
  EXPECT_EQ(r.bound, "");
  EXPECT_EQ(r.pct_of_bound, 0);
  EXPECT_EQ(r.intensity_dram, 0);
}

TEST(Model, InstancesAddUp) {
  KernelWork a = WorkFromCounters(GemmCounters());
  KernelWork b = a;
  a.Add(b);
  EXPECT_EQ(a.instances, 2);
  EXPECT_DOUBLE_EQ(a.duration_ns, 400000);
  RooflineResult one = Evaluate(b, H100Like()), two = Evaluate(a, H100Like());
  EXPECT_DOUBLE_EQ(one.flops_per_s, two.flops_per_s);  // rates do not change
  EXPECT_DOUBLE_EQ(one.pct_of_bound, two.pct_of_bound);
}

TEST(Model, TensorMetricNameFilter) {
  EXPECT_TRUE(IsTensorOpsMetric("sm__ops_path_tensor_src_bf16_dst_fp32"));
  EXPECT_TRUE(IsTensorOpsMetric("sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
  EXPECT_FALSE(IsTensorOpsMetric("sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on"));
  EXPECT_FALSE(IsTensorOpsMetric("sm__ops_path_tensor_src_bf16_dst_fp32.avg"));
  EXPECT_FALSE(IsTensorOpsMetric("sm__ops_path_tensor_src_"));
  EXPECT_FALSE(IsTensorOpsMetric("sm__inst_executed_pipe_tensor.sum"));
}

TEST(Model, CountersJsonRoundTrip) {
  auto back = CountersFromJson(CountersJson(GemmCounters()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, GemmCounters());
  EXPECT_FALSE(CountersFromJson("[1]").ok());
}

// Launches alternate metric groups: "all" (FLOPs; time and bytes under
// kernel replay) and "memory" (time and bytes, one unreplayed run). Time and
// bytes come from the memory launches only, FLOPs from the others; each is
// a mean over the launches it came from.
TEST(RooflineReport, TimeAndBytesFromTheMemoryLaunches) {
  Selection sel;
  sel.targets.resize(1);
  sel.targets[0].name = "k";
  ProfileResults res;
  auto inst = [](int64_t launch, const char* group, std::map<std::string, double> c) {
    ProfileInstance i;
    i.target = 0;
    i.launch_index = launch;
    i.ranges = 1;
    i.group = group;
    i.counters = std::move(c);
    return i;
  };
  const std::string ffma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
  res.instances.push_back(
      inst(4, "all", {{"gpu__time_duration.sum", 900}, {"dram__bytes_read.sum", 99}, {ffma, 7}}));
  res.instances.push_back(
      inst(5, "memory", {{"gpu__time_duration.sum", 100}, {"dram__bytes_read.sum", 10}}));
  res.instances.push_back(
      inst(6, "all", {{"gpu__time_duration.sum", 700}, {"dram__bytes_read.sum", 77}, {ffma, 9}}));
  res.instances.push_back(
      inst(7, "memory", {{"gpu__time_duration.sum", 300}, {"dram__bytes_read.sum", 30}}));
  std::vector<std::string> warnings;
  RooflineReport r = BuildReport(sel, res, &warnings);
  ASSERT_EQ(r.entries.size(), 1u);
  const RooflineEntry& e = r.entries[0];
  EXPECT_EQ(e.instances, 4);
  EXPECT_EQ(e.first_launch_index, 4);
  // Means x 4 launches: 200 ns and 20 bytes (memory launches), 8 FFMA (all).
  EXPECT_DOUBLE_EQ(e.counters.at("gpu__time_duration.sum"), 800);
  EXPECT_DOUBLE_EQ(e.counters.at("dram__bytes_read.sum"), 80);
  EXPECT_DOUBLE_EQ(e.counters.at(ffma), 32);
  // Without memory launches (--one-run, or a kernel the memory run missed) the
  // replayed values are used.
  res.instances.resize(1);
  r = BuildReport(sel, res, &warnings);
  EXPECT_DOUBLE_EQ(r.entries[0].counters.at("dram__bytes_read.sum"), 99);
  EXPECT_TRUE(IsMemoryGroupMetric("dram__bytes_write.sum"));
  EXPECT_TRUE(IsMemoryGroupMetric("gpu__time_duration.sum"));
  EXPECT_FALSE(IsMemoryGroupMetric("sm__ops_path_tensor_src_bf16.sum"));
}

}  // namespace
}  // namespace stepscope
