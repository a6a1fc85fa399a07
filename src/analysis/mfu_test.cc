// MFU (analysis/mfu.h) and the kernel classes (common/kernel_names.h).
#include "analysis/mfu.h"

#include <gtest/gtest.h>

#include <memory>

namespace stepscope {
namespace {

TEST(KernelClass, RealKernelNames) {
  auto cls = [](const char* name) { return ClassifyKernelClass(name, ClassifyKernelName(name)); };
  // From the bundled H200/H100 fixtures.
  EXPECT_EQ(cls("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT"), KernelClass::kGemm);
  EXPECT_EQ(cls("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nn_align1>(Params)"),
            KernelClass::kGemm);
  EXPECT_EQ(cls("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64"),
            KernelClass::kAttention);
  EXPECT_EQ(cls("void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*)"),
            KernelClass::kAttention);
  EXPECT_EQ(cls("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, "
                "false, false, cutlass::bfloat16_t>>(Flash_fwd_params)"),
            KernelClass::kAttention);
  EXPECT_EQ(
      cls("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
          "(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous "
          "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>>()"),
      KernelClass::kOptimizer);
  EXPECT_EQ(cls("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            KernelClass::kCommunication);
  // The loss's softmax is not attention; a layer norm is elementwise work.
  EXPECT_EQ(cls("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, "
                "float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*)"),
            KernelClass::kElementwise);
  EXPECT_EQ(cls("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, "
                "float, false>(int, float)"),
            KernelClass::kElementwise);
  EXPECT_STREQ(KernelClassName(KernelClass::kOptimizer), "optimizer");
}

// Three "step N" ranges of 1000 ns on an H100; in each a GEMM (400 ns) and, inside an
// `optimizer.step` range, an elementwise kernel (100 ns).
std::unique_ptr<TraceModel> ThreeSteps(const char* gpu) {
  TraceModel::Records r;
  r.strings = {"",
               "nvjet_sm90_tst_128x128_h_bz_NNT",
               "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>(int)",
               "cudaLaunchKernel",
               "step 1",
               "step 2",
               "step 3",
               "optimizer.step AdamW(foreach=False)",
               gpu};
  DeviceRecord d{};
  d.id = 0;
  d.name = 8;
  r.devices.push_back(d);
  uint32_t corr = 1;
  auto launch = [&](StringId name, int64_t cpu, int64_t start, int64_t dur) {
    r.apis.push_back({cpu, cpu + 5, 7, corr, 0, 3, 0, ApiDomain::kRuntime, {}});
    KernelRecord k{};
    k.start_ns = start;
    k.end_ns = start + dur;
    k.stream = 7;
    k.correlation = corr++;
    k.name = name;
    r.kernels.push_back(k);
  };
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 1000 * (s + 1);
    r.nvtx.push_back(
        {t, t + 900, 7, 7, 0, static_cast<StringId>(4 + s), 0, 0, NvtxKind::kPushPop, 0, 0, 0});
    launch(1, t + 10, t + 100, 400);
    r.nvtx.push_back({t + 20, t + 40, 7, 7, 0, 7, 0, 0, NvtxKind::kPushPop, 1, 0, 0});
    launch(2, t + 25, t + 600, 100);
  }
  return TraceModel::FromRecords(std::move(r));
}

TEST(Mfu, ModelFlopsOverTheMedianStepAndTheDatasheetPeak) {
  auto m = ThreeSteps("NVIDIA H100 80GB HBM3");
  auto steps = DetectSteps(*m, StepOptions{});
  ASSERT_TRUE(steps.ok());
  MfuOptions o;
  o.has_model = true;
  o.model.total = 500e3;
  o.model.gemm = 400e3;
  o.model.attention = 100e3;
  const MfuReport r = ComputeMfu(*m, *steps, o);
  EXPECT_EQ(r.flop_source, "model");
  EXPECT_EQ(r.peak_key, "tensor_bf16");
  EXPECT_EQ(r.peak_label, "datasheet");
  EXPECT_DOUBLE_EQ(r.peak.value, 989.5e12);
  ASSERT_GT(r.median_step_ns, 0);
  EXPECT_NEAR(r.mfu_pct, 100.0 * 500e3 / (r.median_step_ns * 1e-9 * 989.5e12), 1e-9);
  // The median step's classes: the GEMM, and the elementwise kernel launched inside the
  // optimizer.step range counted as optimizer.
  const MfuClass& gemm = r.classes[static_cast<int>(KernelClass::kGemm)];
  const MfuClass& opt = r.classes[static_cast<int>(KernelClass::kOptimizer)];
  EXPECT_EQ(gemm.gpu_ns, 400);
  EXPECT_EQ(gemm.kernels, 1);
  EXPECT_DOUBLE_EQ(gemm.model_flops, 400e3);
  EXPECT_EQ(opt.gpu_ns, 100);
  EXPECT_EQ(r.classes[static_cast<int>(KernelClass::kElementwise)].gpu_ns, 0);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].cls, KernelClass::kGemm);
  EXPECT_NE(MfuLine(r).find("MFU: "), std::string::npos);
}

TEST(Mfu, BenchPeakFirstThenNoSourceThenUnknownGpu) {
  auto m = ThreeSteps("NVIDIA H100 80GB HBM3");
  auto steps = DetectSteps(*m, StepOptions{});
  ASSERT_TRUE(steps.ok());
  MfuOptions o;
  o.has_model = true;
  o.model.total = 1e6;
  o.bench[0] =
      BenchResults{"NVIDIA H100 80GB HBM3", "h", "2026-11-27T00:00:00Z", {{"tensor_bf16", 800e12}}};
  MfuReport r = ComputeMfu(*m, *steps, o);
  EXPECT_EQ(r.peak_label, "bench");
  EXPECT_DOUBLE_EQ(r.peak.value, 800e12);
  EXPECT_NE(r.peak_note.find("989.5"), std::string::npos);  // the datasheet figure beside it
  // fp32: the CUDA-core peak of the table (no fp32 bench value).
  o.dtype = "fp32";
  r = ComputeMfu(*m, *steps, o);
  EXPECT_EQ(r.peak_key, "fp32");
  EXPECT_DOUBLE_EQ(r.peak.value, 67e12);
  // No model, no counters: no FLOP source, no MFU.
  r = ComputeMfu(*m, *steps, MfuOptions{});
  EXPECT_EQ(r.flop_source, "");
  EXPECT_FALSE(r.has_mfu());
  EXPECT_NE(MfuLine(r).find("no FLOP source"), std::string::npos);
  // A GPU in neither the table nor the bench file: no peak, never another GPU's.
  auto other = ThreeSteps("Some Future GPU");
  auto st2 = DetectSteps(*other, StepOptions{});
  ASSERT_TRUE(st2.ok());
  MfuOptions o2;
  o2.has_model = true;
  o2.model.total = 1e6;
  r = ComputeMfu(*other, *st2, o2);
  EXPECT_FALSE(r.peak.known());
  EXPECT_FALSE(r.has_mfu());
}

TEST(Mfu, CountersAreALowerBoundOverTheirStep) {
  auto m = ThreeSteps("NVIDIA H100 80GB HBM3");
  auto steps = DetectSteps(*m, StepOptions{});
  ASSERT_TRUE(steps.ok());
  MfuOptions o;
  MeasuredKernel k;
  k.name = "nvjet_sm90_tst_128x128_h_bz_NNT";
  k.step = 2;
  k.step_gpu_ns = 400;
  k.flops = 2e9;
  k.duration_ns = 4000;  // 500 TFLOP/s
  k.bound = "tensor_bf16";
  k.pct_of_bound = 50;
  o.measured = {k};
  const MfuReport r = ComputeMfu(*m, *steps, o);
  EXPECT_EQ(r.flop_source, "roofline counters");
  EXPECT_DOUBLE_EQ(r.flops_per_step, 500e12 * 400e-9);
  EXPECT_NE(r.flop_detail.find("80.0% of step 2"), std::string::npos) << r.flop_detail;
  const MfuClass& gemm = r.classes[static_cast<int>(KernelClass::kGemm)];
  EXPECT_DOUBLE_EQ(gemm.measured_flops, 500e12 * 400e-9);
  ASSERT_FALSE(r.top.empty());
  EXPECT_TRUE(r.top[0].measured);
  EXPECT_DOUBLE_EQ(r.top[0].flops_per_s, 500e12);
  EXPECT_EQ(r.top[0].bound, "tensor_bf16");
}

}  // namespace
}  // namespace stepscope
