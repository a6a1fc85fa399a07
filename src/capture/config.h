// CaptureConfig: what the injected tracer does, read from the environment
// that `stepscope profile` sets up (the tracer has no other input). The
// variables are named in common/env_contract.h; ToEnv() is the launcher's
// side (what it writes), FromEnv() the tracer's (what it reads).
//
//   STEPSCOPE_OUTPUT          output pattern (see output_path.h); default stepscope_%p
//   STEPSCOPE_TRACE           categories: cuda,nvtx,memory (default), host-mem, um,
//                             um-migrations, um-gpu-faults, um-cpu-faults
//   STEPSCOPE_UM              off: no unified-memory records; driver: the driver's totals
//                             only, whatever um-* categories ask (default: totals with cuda)
//   STEPSCOPE_UM_DRIVER       off: not the driver's totals
//   STEPSCOPE_DELAY_NS        start recording this long after the tracer starts
//   STEPSCOPE_DURATION_NS     stop recording this long after recording started
//   STEPSCOPE_CAPTURE_RANGE   cudaProfilerApi | nvtx:NAME (record only inside the range)
//   STEPSCOPE_DETACH          on (default) | off: with a window, CUPTI is detached outside it
//                             (--detach-outside-window; docs/capture.md, "Recording windows")
//   STEPSCOPE_WINDOW_STEPS    W:N (--steps): the iteration hook announces the window's start
//                             (stepscope_attach) before its cudaProfilerStart
//   STEPSCOPE_GPU_METRICS     GPU metrics by CUPTI PM sampling every this many ns while
//                             recording (capture/pm_sampling.h); unset: off
//   STEPSCOPE_OVERWRITE_BEFORE_NS  replace existing files older than this (--force-overwrite)
//   STEPSCOPE_COLLECTOR       the collector's socket (set by `stepscope profile`); unset:
//                             the tracer starts `stepscope _collect` itself
//   STEPSCOPE_COLLECTOR_TOKEN the session token the collector asks of every tracer
//                             (set by `stepscope profile`; capture/handshake.h, Trust)
//   STEPSCOPE_BUFFER_MB       cap on CUPTI buffer memory (shared buffer slots; default 512)
//   STEPSCOPE_RING_MB         size of the shared ring for API/NVTX/OOM records (default 32)
//   STEPSCOPE_COMMIT_MS       commit interval of the collector (default 250)
//   STEPSCOPE_API_MODE        callback (default) | activity: how API calls are recorded
//   STEPSCOPE_RUNTIME_LAUNCHES 1: launches recorded as runtime calls too (cudaLaunchKernel)
//   STEPSCOPE_SYNC_MODE       api (default) | cupti: sync rows derived from the sync API
//                             calls, or CUPTI SYNCHRONIZATION records (costlier)
//   STEPSCOPE_SAMPLE_HZ       host sampling rate the collector uses for this process
//                             (default 200; 0 off; docs/capture.md, "Host capture")
//   STEPSCOPE_PYTHON_STACKS   on (default) | off | launches=N: the Python stack of the
//                             thread at blocking and allocation CUDA calls (and 1 launch in N)
//   STEPSCOPE_DIAG_OFF        diagnostics only: parts of the capture to switch off, to
//                             attribute overhead (api, sync, overhead, flush, subscribe,
//                             kernels, stacks, memory, um, nvtx,
//                             sampling: the collector's host sampling, driver:
//                             driver-domain API callbacks,
//                             apiwork: callbacks that return at once, apiput: no ring write,
//                             rtlaunch: launches from the driver domain only, rtlaunch_on: and from
//                             the runtime domain, gpumetrics: no PM sampling in the window)
//   STEPSCOPE_DIAG_CYCLE      diagnostics only: "PARTS;PARTS;..." (PARTS as in DIAG_OFF,
//                             `none` for nothing): recording window k switches off the
//                             k-th set (mod n), so that one process compares them
//                             (bench/overhead_phases.py --cycle)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepscope {

struct CaptureConfig {
  enum class Range { kNone, kCudaProfilerApi, kNvtx };

  std::string output_pattern = "stepscope_%p";
  bool cuda = true;
  bool nvtx = true;
  bool memory = true;
  bool host = false;      // host: the collector samples the threads (STEPSCOPE_SAMPLE_HZ)
  bool host_mem = false;  // host-mem: malloc/mmap above a threshold (LD_PRELOAD interposer)
  // Unified memory (CUPTI UNIFIED_MEMORY_COUNTER, docs/um.md): migrations,
  // thrashing, throttling and remote maps come with `cuda`; GPU fault groups
  // and CPU page faults are their own categories (nsys documents both as
  // costly and leaves them off by default; so do we).
  bool um = true;
  // `--trace um` (STEPSCOPE_TRACE ...,um): counters on from the first context,
  // for memory that no managed allocation announces (system-allocated / ATS
  // memory on Grace Hopper). Otherwise they are enabled at the program's first
  // cudaMallocManaged / cuMemAllocManaged.
  bool um_at_start = false;
  bool um_gpu_faults = false;
  bool um_cpu_faults = false;
  // `--trace ...,um-migrations`: CUPTI's record of every migration (address,
  // cause, copy time). Off by default: the driver reports each migration to
  // CUPTI through a queue that roughly doubles fault handling (lent H100,
  // 2026-11-24: a fault-bound kernel 32 ms bare, 60 ms with the records);
  // the driver's totals below give the bytes at no such cost.
  bool um_migrations = false;
  // With `um`: the nvidia-uvm driver's migration and fault totals, sampled
  // every millisecond (capture/uvm_counters.h). STEPSCOPE_UM_DRIVER=off.
  bool um_driver_totals = true;
  int64_t delay_ns = 0;
  int64_t duration_ns = 0;
  Range range = Range::kNone;
  std::string range_nvtx_name;
  // `--gpu-metrics`: CUPTI PM sampling of each device in use every this many
  // ns while recording (capture/pm_sampling.h); 0: off.
  int64_t gpu_metrics_interval_ns = 0;
  int64_t overwrite_before_ns = 0;
  std::string collector;        // socket name; empty: start our own collector
  std::string collector_token;  // sent in the hello (STEPSCOPE_COLLECTOR_TOKEN)
  size_t buffer_bytes = 8u << 20;
  size_t max_buffer_memory = 512u << 20;
  size_t ring_bytes = 32u << 20;
  int64_t commit_interval_ns = 250'000'000;
  // CUPTI buffer tuning: buffers handed to CUPTI already zeroed (the writer
  // thread clears them), so that CUPTI does not clear them on the application
  // thread; device_buffer_bytes 0 keeps CUPTI's default device buffer size.
  bool zeroed_buffers = true;
  size_t device_buffer_bytes = 0;
  bool api_via_callbacks = true;
  // Kernel and graph launches are recorded from the driver-domain callbacks
  // only (the runtime's cudaLaunchKernel calls cuLaunchKernel, which CUPTI
  // reports with the same correlation id): one callback pair per launch
  // instead of two, 0.18-0.23 us less per launch on a lent H200
  // (bench/launch_cost.py --in-process, docs/PERFORMANCE.md). Records then
  // name the driver function (cuLaunchKernel). STEPSCOPE_RUNTIME_LAUNCHES=1:
  // both domains, the runtime name kept.
  bool runtime_launches = false;
  int sample_hz = 200;
  bool python_stacks = true;
  int python_stack_launch_every = 0;  // 0: no stacks on launches
  bool sync_from_api = true;
  // Diagnostics (STEPSCOPE_DIAG_OFF): the parts left out.
  struct DiagOff {
    bool api = false, sync = false, overhead = false, flush = false, subscribe = false,
         kernels = false, memory = false, um = false, nvtx = false, sampling = false,
         driver = false, api_work = false, api_put = false, gpu_metrics = false;
  } diag_off;
  // STEPSCOPE_DIAG_CYCLE: the sets of parts, one per recording window, in turn.
  std::vector<std::string> diag_cycle;
  // STEPSCOPE_DETACH (--detach-outside-window, default on): with a recording
  // window (Windowed()), CUPTI is detached (cuptiFinalize) outside it and
  // attached when a window opens (capture/cupti_setup.h, DetachesOutsideWindows).
  // off: subscribed for the whole run, kinds and callbacks off outside windows.
  bool detach_outside_window = true;
  // STEPSCOPE_WINDOW_STEPS set (--steps): the window's start is announced by
  // the iteration hook, which calls the exported stepscope_attach() before its
  // cudaProfilerStart, so nothing of CUPTI needs to watch for it.
  bool hook_window = false;

  // A recording window of any kind: --delay, --duration or a capture range
  // (--steps is a cudaProfilerApi range). Without one the whole run records.
  bool Windowed() const { return delay_ns > 0 || duration_ns > 0 || range != Range::kNone; }
  // CUPTI is detached outside the recording windows (the default with one).
  // Not with --gpu-metrics: the PM sampling objects are made once per device
  // under the first subscription, and whether they survive a cuptiFinalize
  // has not been run on a GPU; CUPTI then stays attached, as with `off`.
  bool DetachesOutsideWindows() const {
    return detach_outside_window && Windowed() && gpu_metrics_interval_ns == 0;
  }

  // Switches off one diagnostics part (a DIAG_OFF name); false if unknown.
  bool SetDiagPart(std::string_view part);
  // Recording window `k` of a DIAG_CYCLE run: the fields a part can change
  // (diag_off, python_stacks, runtime_launches) reset to `base`'s, then the
  // k-th set applied. Changed only while recording is off (no API
  // callback is enabled then); diagnostics only.
  void ApplyDiagCycle(const CaptureConfig& base, uint64_t k);

  // Parses the environment. Unknown categories or ranges are reported in
  // `warning` (the tracer prints it once) and ignored.
  static CaptureConfig FromEnv(std::string* warning);

  // The launcher's settings as the environment FromEnv reads: the output
  // pattern, the categories, host sampling, Python stacks, the recording
  // window, --force-overwrite and the collector, one (name, value) each in
  // the order of STEPSCOPE_CONTRACT_VARS; "" where a setting is off (the
  // variable is cleared: the launcher decides the whole contract).
  std::vector<std::pair<std::string, std::string>> ToEnv() const;

  // The categories (STEPSCOPE_TRACE_CATEGORIES) as the comma list of
  // STEPSCOPE_TRACE, in that order: all of them, or only those the tracer
  // records itself (the trace's meta.trace_categories).
  std::string TraceCategories(bool recorded_by_tracer_only = false) const;
  // Sets the categories of a comma list (STEPSCOPE_TRACE); unknown names are
  // added to `warning` (when given) and ignored.
  void SetTraceCategories(std::string_view list, std::string* warning);
  // STEPSCOPE_PYTHON_STACKS: on | off | launches=N.
  std::string PythonStacksText() const;
  // STEPSCOPE_CAPTURE_RANGE: cudaProfilerApi | nvtx:NAME | "".
  std::string RangeText() const;
  // `--gpu-metrics off|on|INTERVAL` (INTERVAL as 500us, 1ms; on: the
  // default): the sampling interval in ns, 0 for off. False for a spec
  // outside [kGpuMetricsMinNs, kGpuMetricsMaxNs] or not one of these.
  static bool ParseGpuMetrics(std::string_view spec, int64_t* interval_ns);
  static constexpr int64_t kGpuMetricsDefaultNs = 1'000'000;
  static constexpr int64_t kGpuMetricsMinNs = 10'000;
  static constexpr int64_t kGpuMetricsMaxNs = 1'000'000'000;
};

}  // namespace stepscope
