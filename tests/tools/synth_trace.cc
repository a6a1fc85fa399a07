// synth_trace: writes a large synthetic training trace for benchmarks.
//
//   synth_trace [--events N] [--kernels-per-step K] [--devices D] OUT.sqlite
//
// The trace looks like a captured eager-mode training loop: one device per
// rank-local GPU, a Python main thread pushing NVTX "step N" ranges with the
// children data/forward/backward/optimizer, one cudaLaunchKernel api row per
// kernel (correlated), an H2D batch copy per step, a few allocations, and a
// cudaStreamSynchronize every 10 steps. Kernel names are drawn from a pool of
// realistic demangled names. The event count N counts every row written
// (kernels + api + memcpy + sync + nvtx + memory); the generator stops once N
// is reached, at a step boundary. Deterministic: same arguments, same trace.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "store/trace_writer.h"

namespace {

const char* kKernelNames[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
    "3ul>)",
    "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
    "nvjet_hsh_128x256_64x4_2x1_v_bz_coopB_TNN",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
    "float>(int, "
    "float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, "
    "c10::BFloat16*)",
    "void at::native::(anonymous "
    "namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, "
    "float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 "
    "const*, c10::BFloat16*, int)",
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t>, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
    "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, "
    "128, 128, 8, 4, 2, 2, false, false, cutlass::bfloat16_t>, true, true, false, false, false, "
    "true, true>(Flash_bwd_params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#3}::"
    "operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, ...)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<"
    "float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::"
    "{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(...)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::"
    "(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<"
    "float, 4, (at::native::ADAM_MODE)1, false>, ...>(...)",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::"
    "{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, "
    "...>(...)",
    "void at::native::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
    "true>(...)",
    "void at::native::embedding_backward_cuda_kernel<float, long>(...)",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
};
constexpr int kNumNames = sizeof(kKernelNames) / sizeof(kKernelNames[0]);

}  // namespace

int main(int argc, char** argv) {
  using namespace stepscope;
  int64_t events = 10'000'000;
  int kernels_per_step = 1000;
  int devices = 1;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--events") && i + 1 < argc) {
      events = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--kernels-per-step") && i + 1 < argc) {
      kernels_per_step = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--devices") && i + 1 < argc) {
      devices = std::atoi(argv[++i]);
    } else if (argv[i][0] != '-') {
      out = argv[i];
    } else {
      std::fprintf(stderr, "synth_trace: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (out.empty() || kernels_per_step < 8 || devices < 1) {
    std::fprintf(
        stderr,
        "usage: synth_trace [--events N] [--kernels-per-step K] [--devices D] OUT.sqlite\n");
    return 2;
  }
  std::remove(out.c_str());
  auto wr = TraceWriter::Create(out);
  if (!wr.ok()) {
    std::fprintf(stderr, "synth_trace: %s\n", wr.status().message().c_str());
    return 1;
  }
  TraceWriter& w = **wr;
  w.SetMeta("source", "fixture");
  w.SetMeta("clock", "CLOCK_REALTIME");
  w.SetMeta("command_line", "python3 train_gpt.py (synthetic)");
  StringId names[kNumNames];
  for (int i = 0; i < kNumNames; ++i) names[i] = w.Intern(kKernelNames[i]);
  const StringId launch = w.Intern("cudaLaunchKernel");
  const StringId memcpy_async = w.Intern("cudaMemcpyAsync");
  const StringId stream_sync = w.Intern("cudaStreamSynchronize");
  const StringId malloc_name = w.Intern("cudaMalloc");
  const StringId phases[4] = {w.Intern("data"), w.Intern("forward"), w.Intern("backward"),
                              w.Intern("optimizer")};
  for (int d = 0; d < devices; ++d) {
    DeviceRecord dev{};
    dev.id = static_cast<uint32_t>(d);
    dev.name = w.Intern("NVIDIA H100 80GB HBM3");
    std::snprintf(dev.uuid, sizeof(dev.uuid), "GPU-synthetic-%04d", d);
    dev.cc_major = 9;
    dev.cc_minor = 0;
    dev.sm_count = 132;
    dev.global_memory_bytes = 85'000'000'000ull;
    w.AddDevice(dev);
  }
  const uint32_t tid = 4242;
  w.SetThreadName(tid, w.Intern("python3"));
  int64_t written = 0;
  uint32_t corr = 1;
  int64_t cpu = 1'700'000'000'000'000'000;  // a CLOCK_REALTIME-like origin
  int64_t gpu = cpu + 50'000;
  const int64_t start = cpu;
  // A few allocations up front.
  for (int d = 0; d < devices; ++d) {
    for (int i = 0; i < 8; ++i) {
      ApiRecord a{cpu, cpu + 20'000, tid, corr, 0, malloc_name, 0, ApiDomain::kRuntime, {}};
      MemoryRecord m{};
      m.ts_ns = cpu + 10'000;
      m.address = 0x7f0000000000ull + static_cast<uint64_t>(d) * (1ull << 36) + (uint64_t(i) << 30);
      m.bytes = 2ull << 30;
      m.device = static_cast<uint32_t>(d);
      m.correlation = corr++;
      m.op = MemoryOp::kAlloc;
      m.memory_kind = MemoryKind::kDevice;
      w.AddApi(a);
      w.AddMemory(m);
      cpu += 30'000;
      written += 2;
    }
  }
  uint64_t rng = 88172645463325252ull;
  auto next_rand = [&rng]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  for (int step = 0; written < events; ++step) {
    const int64_t step_start = cpu;
    std::vector<NvtxRecord> ranges;
    const int per_phase[4] = {0, kernels_per_step * 3 / 10, kernels_per_step * 6 / 10,
                              kernels_per_step - kernels_per_step * 9 / 10};
    for (int phase = 0; phase < 4; ++phase) {
      const int64_t phase_start = cpu;
      if (phase == 0) {
        // The batch copy: pinned H2D, async.
        ApiRecord a{cpu, cpu + 6'000, tid, corr, 0, memcpy_async, 0, ApiDomain::kRuntime, {}};
        w.AddApi(a);
        gpu = std::max(gpu, cpu + 4'000);
        MemcpyRecord m{};
        m.start_ns = gpu;
        m.end_ns = gpu + 3'000;
        m.bytes = 32'832;
        m.device = 0;
        m.stream = 7;
        m.correlation = corr++;
        m.copy_kind = CopyKind::kHostToDevice;
        m.src_kind = MemoryKind::kPinned;
        m.dst_kind = MemoryKind::kDevice;
        m.is_async = 1;
        w.AddMemcpy(m);
        gpu = m.end_ns + 1'500;
        cpu += 8'000;
        written += 2;
      }
      for (int k = 0; k < per_phase[phase]; ++k) {
        const uint32_t dev = static_cast<uint32_t>(k % devices);
        const int name = phase == 3 && k + 1 == per_phase[phase]
                             ? kNumNames - 5
                             : static_cast<int>(next_rand() % (kNumNames - 1));
        ApiRecord a{cpu, cpu + 4'000, tid, corr, 211, launch, 0, ApiDomain::kRuntime, {}};
        w.AddApi(a);
        const int64_t dur = 3'000 + static_cast<int64_t>(next_rand() % 60'000);
        gpu = std::max(gpu, cpu + 3'000);
        KernelRecord kr{};
        kr.start_ns = gpu;
        kr.end_ns = gpu + dur;
        kr.device = dev;
        kr.stream = 7;
        kr.correlation = corr++;
        kr.name = names[name];
        kr.grid_x = 1024;
        kr.grid_y = kr.grid_z = 1;
        kr.block_x = 256;
        kr.block_y = kr.block_z = 1;
        kr.registers_per_thread = 64;
        w.AddKernel(kr);
        gpu = kr.end_ns + 1'800;
        cpu += 6'000;
        written += 2;
      }
      ranges.push_back(NvtxRecord{phase_start, cpu, tid, tid, kNoString, phases[phase], 0, 0,
                                  NvtxKind::kPushPop, 1, 0, 0});
      cpu += 500;
    }
    if (step % 10 == 9) {
      // A host synchronization: the CPU waits for the GPU to drain.
      ApiRecord a{cpu, std::max(cpu, gpu) + 5'000, tid, corr, 131, stream_sync,
                  0,   ApiDomain::kRuntime,        {}};
      SyncRecord s{cpu, a.end_ns - 1'000, tid, corr++, 0, 7, 0, SyncType::kStreamSynchronize, {}};
      w.AddApi(a);
      w.AddSync(s);
      cpu = a.end_ns + 1'000;
      written += 2;
    }
    const std::string name = "step " + std::to_string(step);
    w.AddNvtx(NvtxRecord{step_start, cpu, tid, tid, kNoString, w.Intern(name), 0, 0,
                         NvtxKind::kPushPop, 0, 0, 0});
    for (const NvtxRecord& r : ranges) w.AddNvtx(r);
    written += 1 + static_cast<int64_t>(ranges.size());
    cpu += 2'000;
    // The CPU may not run more than ~1 step ahead (a full launch queue blocks).
    if (gpu - cpu > 40'000'000) cpu = gpu - 40'000'000;
    if (step % 50 == 0) {
      Status st = w.Commit();
      if (!st.ok()) {
        std::fprintf(stderr, "synth_trace: %s\n", st.message().c_str());
        return 1;
      }
    }
  }
  w.SetMeta("start_ns", std::to_string(start));
  w.SetMeta("end_ns", std::to_string(std::max(cpu, gpu)));
  Status st = w.Finalize();
  if (!st.ok()) {
    std::fprintf(stderr, "synth_trace: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("%s: %lld rows\n", out.c_str(), static_cast<long long>(written));
  return 0;
}
