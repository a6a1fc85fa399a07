// CUPTI setup: what happens when the CUDA driver loads the tracer
// (CUDA_INJECTION64_PATH -> InitializeInjection, during cuInit).
//
// Order matters: subscribe first (detects another CUPTI client: nsys,
// torch.profiler, DCGM), then register the buffer callbacks, then enable the
// activity kinds. The API records are enabled per callback id, only for the
// chosen set (launches, graph launch, memcpy/memset, synchronization, stream
// waits, allocation families): recording every runtime and driver call costs
// ~19% on a PyTorch step, the chosen set a small fraction of that.
#include <cupti.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "capture/api_callbacks.h"
#include "capture/cupti_records.h"
#include "capture/cupti_setup.h"
#include "capture/pm_sampling.h"
#include "capture/self_time.h"
#include "capture/session.h"
#include "common/log.h"

namespace stepscope {
namespace {

CUpti_SubscriberHandle g_subscriber = nullptr;
// True once CUPTI accepted the unified-memory counter configuration.
std::atomic<bool> g_um_configured{false};
// Unified-memory counters are wanted: the program made a managed allocation,
// or `--trace um` asked for them from the start (system-allocated memory,
// docs/um.md). Enabling them in a program without unified memory cost 2.0 s
// of a 0.95 s run on a lent H100 (2026-11-24), so they wait for the first
// cudaMallocManaged/cuMemAllocManaged.
std::atomic<bool> g_um_wanted{false};
// The unified-memory kind is enabled once a context exists: enabling it inside
// cuInit (where the injection runs) returns CUPTI_ERROR_NOT_READY (seen on the
// lent H200, driver 580, CUDA 13.0), so a failure before the first context is
// retried when CUPTI reports one (resource callback) and nothing is said until
// that retry fails too.
std::atomic<bool> g_um_enabled{false};
std::atomic<bool> g_context_seen{false};
// Recording windows with CUPTI detached outside them (STEPSCOPE_DETACH, the
// default with a window; CaptureConfig::DetachesOutsideWindows):
//
//  * before the first window the tracer does not subscribe (InitializeCupti
//    only checks CUPTI's version): no subscriber, no activity kind, no
//    callback, so the driver runs as with no tool. CUPTI's library is loaded
//    (it is linked) and the tracer read one CUPTI timestamp at start (its
//    clock offset, session.cc); nothing of CUPTI runs on the program's calls.
//  * a window opens: the tracer subscribes (AttachCuptiForWindow), then the
//    kinds and callbacks go on (SetRecording). The attach is CUPTI's
//    documented dynamic attach: cuptiSubscribe after CUDA is running, from the
//    program's thread (the --steps hook's stepscope_attach(), an NVTX push of
//    the capture range) or the timer thread (--delay). What it costs once
//    (subscribe, callback tables, device records dumped again with
//    cuptiActivityEnableAndDump, kernel instrumentation as the kinds come on)
//    is not measured on a GPU yet. Buffer attributes that CUPTI takes only
//    before the first context (zeroed buffers, device buffer size) stay at
//    CUPTI's defaults after a late attach (costlier clearing, not wrong records).
//  * a window ends: the kinds and callbacks go off, then the detach is
//    requested (RequestDetach): both API domains' callbacks go on (they return
//    at once, recording nothing) so that the next API exit callback can run
//    cuptiFinalize, where CUPTI documents it as safe (any other place needs the
//    program's GPU work synchronized first). That callback is the first exit
//    of a synchronizing call (the window's kernels are done; the --steps hook
//    synchronizes right after its cudaProfilerStop), or of any call once
//    kDetachGraceNs passed. It flushes every buffer (forced), finalizes, and
//    CUPTI is gone from the process: cuptiFinalize drops the subscriber, the
//    kinds, the callbacks and the instrumentation the kinds put in place.
//  * a program that opens windows itself with cudaProfilerStart
//    (--capture-range cudaProfilerApi without --steps) is watched: nothing
//    else sees that call, so outside its windows the tracer keeps a fresh
//    subscription whose only callbacks are cudaProfilerStart/Stop and the
//    managed allocations, no kind ever enabled in it (the timer thread
//    subscribes again right after each window's finalize, woken by it; a
//    cudaProfilerStart in that short gap is missed). Not bare; its cost
//    is not measured on a GPU yet. Once the program calls stepscope_attach()
//    itself before its cudaProfilerStart (it announces its windows, as
//    bench/overhead_phases.py does), it is no longer watched.
//  * any failure (subscribe, finalize) disables the session with one warning;
//    the program runs on untraced.
//
// Correlation ids may start again after a finalize: capture/correlation_epochs.h.
//
// g_detached: no subscription (before the first window, or finalized); no
// CUPTI call may be made then but the attach (a call would start CUPTI again).
std::atomic<bool> g_detached{false};
// A window ended: the next API exit callback (synchronizing, or after the
// grace) finalizes CUPTI. Claimed with exchange(false) by whoever acts on it.
std::atomic<bool> g_detach_pending{false};
std::atomic<int64_t> g_detach_requested_ns{0};
constexpr int64_t kDetachGraceNs = 1'000'000'000;
// InitializeCupti ran (the driver loaded the tracer, cuda is traced, the CUPTI
// version matches): only then may a window attach.
std::atomic<bool> g_cupti_usable{false};

// The program announces its windows: it called the exported stepscope_attach()
// before a cudaProfilerStart (bench/overhead_phases.py does; the --steps hook
// too, which hook_window knows before the first window).
std::atomic<bool> g_announced{false};

// --capture-range cudaProfilerApi without --steps, in a program that does not
// announce its windows: its own cudaProfilerStart must be seen, so CUPTI stays
// subscribed (standing callbacks only) outside the windows (top of this file).
bool WatchesProfilerRange(const CaptureConfig& c) {
  return c.range == CaptureConfig::Range::kCudaProfilerApi && !c.hook_window && !g_announced;
}

std::string ResultString(CUptiResult r) {
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  return msg ? msg : ("CUPTI error " + std::to_string(static_cast<int>(r)));
}

// Enables (or disables) API activity records for every callback id of the
// chosen set (STEPSCOPE_API_MODE=activity); the first failure goes to *err.
void ToggleApis(CUpti_CallbackDomain domain, uint32_t max_cbid, bool on, CUptiResult* err) {
  for (uint32_t cbid = 1; cbid < max_cbid; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
    if (!IsChosenApi(domain, name)) continue;
    CUptiResult r = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cuptiActivityEnableRuntimeApi(cbid, on)
                                                          : cuptiActivityEnableDriverApi(cbid, on);
    if (r != CUPTI_SUCCESS && *err == CUPTI_SUCCESS) *err = r;
  }
}

std::vector<CUpti_ActivityKind> DataKinds(const CaptureConfig& c) {
  std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                           CUPTI_ACTIVITY_KIND_MEMSET};
  if (!c.diag_off.kernels) kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (!c.diag_off.sync && !c.sync_from_api) kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (!c.diag_off.overhead) kinds.push_back(CUPTI_ACTIVITY_KIND_OVERHEAD);
  if (g_um_configured && g_um_wanted && !c.diag_off.um)
    kinds.push_back(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  if (c.memory && !c.diag_off.memory) {
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
  }
  return kinds;
}

// Outcome of enabling the unified-memory kind. Before any context exists a
// failure is expected (NOT_READY) and retried at the first context; after
// that, one warning.
void NoteUnifiedMemoryEnable(CUptiResult r) {
  if (r == CUPTI_SUCCESS) {
    if (!g_um_enabled.exchange(true)) LogVerbose("unified-memory activity enabled");
    return;
  }
  if (!g_context_seen.load()) {
    LogVerbose("unified-memory activity not enabled yet (%s); retried at the first context",
               ResultString(r).c_str());
    return;
  }
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    LogWarn(
        "unified-memory records cannot be enabled here (%s): no migrations or faults in this "
        "trace",
        ResultString(r).c_str());
  }
}

// A context was created: retry the unified-memory kind if it is wanted,
// recording and not on yet.
void ConfigureUnifiedMemory(const CaptureConfig& c);

void OnContextCreated() {
  g_context_seen = true;
  if (g_um_wanted.load()) Session::Get().StartUvmCounters();  // `--trace um`
  if (!g_um_configured || !g_um_wanted || g_um_enabled.load()) return;
  // Configure again now that cuInit has finished: the configuration made inside
  // it was accepted, yet enabling still answered NOT_READY at the first context
  // (H200, 2026-11-23); other CUPTI clients configure after cuInit.
  ConfigureUnifiedMemory(Session::Get().config());
  if (!g_um_configured) return;
  if (!Session::Get().recording()) return;  // the next recording window enables it
  NoteUnifiedMemoryEnable(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
}

// Turns the recorded activity kinds on or off (recording windows).
void ToggleActivities(bool on) {
  const CaptureConfig& c = Session::Get().config();
  pm::GpuMetricsSetRecording(on && !c.diag_off.gpu_metrics);
  if (g_detached.load()) return;
  CUptiResult err = CUPTI_SUCCESS;
  for (CUpti_ActivityKind k : DataKinds(c)) {
    CUptiResult r = on ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
    if (k == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) {
      if (on) NoteUnifiedMemoryEnable(r);
      if (!on) g_um_enabled = false;
      continue;
    }
    // MEMORY_POOL and OVERHEAD are optional on some setups.
    if (r != CUPTI_SUCCESS && err == CUPTI_SUCCESS && k != CUPTI_ACTIVITY_KIND_MEMORY_POOL &&
        k != CUPTI_ACTIVITY_KIND_OVERHEAD) {
      err = r;
    }
  }
  if (!c.diag_off.api && c.api_via_callbacks) {
    ToggleApiCallbacks(g_subscriber, on, !c.diag_off.driver, c.runtime_launches);
  } else if (!c.diag_off.api) {
    ToggleApis(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, on, &err);
    ToggleApis(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, on, &err);
  }
  if (err != CUPTI_SUCCESS && on) {
    const char* msg = nullptr;
    cuptiGetResultString(err, &msg);
    LogWarn("some CUPTI activity kinds could not be enabled (%s); the trace may be incomplete",
            msg ? msg : "unknown error");
  }
}

// Every CUPTI callback runs behind an exception barrier: nothing reaches the
// program; the session turns itself off with one warning.
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = nullptr;
  *size = 0;
  try {
    *buffer = Session::Get().AllocateBuffer(size);
  } catch (...) {
    Session::Get().Disable("internal error in the CUPTI buffer callback");
  }
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                              size_t valid) {
  try {
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped);
    Session::Get().OnBufferCompleted(buffer, valid, dropped);
  } catch (...) {
    Session::Get().Disable("internal error in the CUPTI buffer callback");
  }
}

void OnCallbackImpl(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
void RequestDetach(Session& s);
void OnPendingDetach(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* info);

// API callbacks (and the cudaProfilerStart/Stop capture range).
void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
  SelfTimer self_time;  // the tracer's own time on the program's thread
  try {
    OnCallbackImpl(domain, cbid, data);
  } catch (...) {
    Session::Get().Disable("internal error in the CUPTI API callback");
  }
}

void OnCallbackImpl(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      OnContextCreated();
      pm::GpuMetricsOnContext(static_cast<const CUpti_ResourceData*>(data)->context);
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (g_detach_pending.load(std::memory_order_relaxed)) {
    OnPendingDetach(domain, cbid, info);
    return;
  }
  Session& s = Session::Get();
  if (!s.profiler_range_pending()) {
    OnApiCallback(domain, cbid, info);
    return;
  }
  if (info->callbackSite != CUPTI_API_EXIT) {
    OnApiCallback(domain, cbid, info);
    return;
  }
  bool start = false, stop = false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    start = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
    stop = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    stop = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
  }
  if (start) s.SetRecording(true);
  if (stop) {
    cuptiActivityFlushAll(0);
    s.SetRecording(false);
    if (s.config().DetachesOutsideWindows()) RequestDetach(s);
  }
  if (!start && !stop) OnApiCallback(domain, cbid, info);
}

bool IsProfilerStart(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API
             ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
             : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
}

// Calls after which the GPU work queued before them (on the stream, event or
// whole device they wait for) is done.
bool IsSynchronizing(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020;
  }
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize;
}

// The callbacks that stay on while attached outside a window: the
// cudaProfilerApi range's start/stop and the first managed allocation.
void EnableStandingCallbacks(const CaptureConfig& c) {
  if (c.range == CaptureConfig::Range::kCudaProfilerApi) {
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
  if (!c.um_at_start && (c.um || c.um_gpu_faults || c.um_cpu_faults)) {
    // At the first managed allocation: these two callbacks stay on.
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000);
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
  }
}

// A window opened again before its predecessor's detach ran: the API domains
// go back to the standing callbacks (SetRecording then adds the chosen set).
// False when the detach was already claimed.
bool CancelDetach(const CaptureConfig& c) {
  if (!g_detach_pending.exchange(false)) return false;
  cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  EnableStandingCallbacks(c);
  return true;
}

// At an API exit callback (where CUPTI documents cuptiFinalize as safe), with
// the window's records delivered: CUPTI leaves the process. `last_raw`: the
// correlation id of that call (the newest of the epoch). try_lock: another
// thread holding the mutex is flushing or attaching; a later callback detaches.
void DetachNow(Session& s, uint32_t last_raw) {
  std::unique_lock<std::mutex> lk(s.cupti_mutex(), std::try_to_lock);
  if (!lk.owns_lock() || !g_detach_pending.exchange(false)) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  s.SetCuptiActive(false);
  g_detached = true;
  const CUptiResult r = cuptiFinalize();
  g_subscriber = nullptr;
  g_um_configured = false;
  g_um_enabled = false;
  s.NewCorrelationEpoch(last_raw);
  if (WatchesProfilerRange(s.config())) s.WakeTimer();  // it subscribes again (WatchForWindow)
  if (r != CUPTI_SUCCESS) {
    s.Disable("cannot detach CUPTI at the recording window's end (cuptiFinalize: " +
              ResultString(r) + ")");
    return;
  }
  LogVerbose("CUPTI detached until the next recording window");
}

// A window ended (its kinds and callbacks are off): the next API exit
// callback that may finalize does (OnPendingDetach). No mutex: the subscriber
// stays valid until a DetachNow claims the pending flag set last here, and
// this may run inside a CUPTI callback (cudaProfilerStop's exit).
void RequestDetach(Session& s) {
  if (g_detached.load() || !s.cupti_active() || g_detach_pending.load()) return;
  g_detach_requested_ns.store(s.NowNs(), std::memory_order_relaxed);
  const CUptiResult a = cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  const CUptiResult b = cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  if (a != CUPTI_SUCCESS && b != CUPTI_SUCCESS) {
    // No callback would come to finalize: the kinds are off; stay attached.
    LogVerbose("CUPTI stays attached after the recording window (%s)", ResultString(a).c_str());
    return;
  }
  g_detach_pending.store(true);
}

// API callbacks while a detach is pending (both domains on, nothing recorded).
void OnPendingDetach(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* info) {
  if (info->callbackSite != CUPTI_API_EXIT) return;
  Session& s = Session::Get();
  if (IsProfilerStart(domain, cbid) && s.profiler_range_pending()) {
    // The program's next window, before the detach ran: stay attached. No
    // mutex: winning the pending flag (CancelDetach) is what keeps DetachNow
    // from finalizing, and the subscriber valid.
    if (CancelDetach(s.config())) s.SetRecording(true);
    return;
  }
  if (!IsSynchronizing(domain, cbid) &&
      s.NowNs() - g_detach_requested_ns.load(std::memory_order_relaxed) < kDetachGraceNs) {
    return;
  }
  DetachNow(s, info->correlationId);
}

// Before the buffer callbacks are registered and before any context exists
// (InitializeInjection runs inside cuInit), as CUPTI asks for these.
CUptiResult SetBufferAttributes(const CaptureConfig& c) {
  uint8_t zeroed = c.zeroed_buffers ? 1 : 0;
  size_t size = sizeof(zeroed);
  CUptiResult r =
      cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
  if (r == CUPTI_SUCCESS && c.device_buffer_bytes > 0) {
    size_t bytes = c.device_buffer_bytes;
    size = sizeof(bytes);
    r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes);
  }
  return r;
}

// Unified-memory counters (docs/um.md). Configured once, before the kind is
// enabled, as CUPTI requires. The driver emits these records only for
// unified memory (managed allocations, and system-allocated memory where
// CUPTI reports it): a program without it produces none, and nothing here
// touches the launch path. Systems where CUPTI cannot profile unified memory
// (CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED*: some virtualized GPUs, multi-GPU
// without peer access) run on without these records; the warning is printed
// only when page faults were asked for explicitly.
void ConfigureUnifiedMemory(const CaptureConfig& c) {
  // CUPTI's kind only for what the driver's totals cannot give (per-migration
  // records, fault groups, CPU fault addresses): enabled at all, even for
  // thrashing/throttling/remote maps only, it stretched a fault-bound kernel
  // from 37 to 61 ms (lent H100, 2026-11-24, tests/gpu/um_batch.sh).
  if (!c.um_migrations && !c.um_gpu_faults && !c.um_cpu_faults) return;
  auto config = [](CUpti_ActivityUnifiedMemoryCounterKind kind) {
    CUpti_ActivityUnifiedMemoryCounterConfig u{};
    u.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    u.kind = kind;
    u.deviceId = 0;
    u.enable = 1;
    return u;
  };
  // What was asked for first (a failure of the rest retries with these only);
  // migrations only with um-migrations (their bytes come from the driver's
  // totals by default, capture/uvm_counters.h).
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> wanted;
  if (c.um_migrations) {
    wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD));
    wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH));
  }
  if (c.um_gpu_faults)
    wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT));
  if (c.um_cpu_faults)
    wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT));
  const size_t essential = wanted.size();
  wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING));
  wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING));
  wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP));
  if (c.um_migrations)
    wanted.push_back(config(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD));
  CUptiResult r = cuptiActivityConfigureUnifiedMemoryCounter(wanted.data(),
                                                             static_cast<uint32_t>(wanted.size()));
  if (r != CUPTI_SUCCESS) {  // retry with what was asked for only
    r = cuptiActivityConfigureUnifiedMemoryCounter(wanted.data(), static_cast<uint32_t>(essential));
  }
  g_um_configured = r == CUPTI_SUCCESS;
  if (g_um_configured.load()) {
    LogVerbose("CUPTI unified-memory records on (migrations %s, gpu faults %s, cpu faults %s)",
               c.um_migrations ? "on" : "off", c.um_gpu_faults ? "on" : "off",
               c.um_cpu_faults ? "on" : "off");
  } else if (c.um_gpu_faults || c.um_cpu_faults || c.um_migrations) {
    LogWarn("unified-memory migrations or page faults cannot be recorded here (%s)",
            ResultString(r).c_str());
  } else {
    LogVerbose("unified-memory counters unavailable (%s)", ResultString(r).c_str());
  }
}

}  // namespace

bool UnifiedMemoryActivityOn() { return g_um_enabled.load(std::memory_order_relaxed); }

// The first managed allocation (its API exit callback, on the program's
// thread; the allocation exists, its pages are not populated yet, so the
// migrations of its first touch are recorded).
void OnFirstManagedAllocation() {
  Session& s = Session::Get();
  const CaptureConfig& c = s.config();
  if (!c.um && !c.um_gpu_faults && !c.um_cpu_faults) return;
  g_context_seen = true;  // an allocation needs a context
  if (g_um_wanted.exchange(true)) return;
  s.StartUvmCounters();
  if (!g_um_configured) ConfigureUnifiedMemory(c);
  if (!g_um_configured || !s.recording()) return;  // the next recording window enables it
  NoteUnifiedMemoryEnable(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
}

// Subscribes to CUPTI and sets up the buffer callbacks and the callbacks
// that stay on (capture range, first managed allocation). On failure the
// session is off, with one warning. `first`: inside cuInit, before any
// context (the buffer attributes must be set then); a later attach (a
// window's, after the detach) keeps CUPTI's defaults where they can no longer
// be set, and has CUPTI dump the device records it emitted at cuInit.
CUptiResult Subscribe(Session& s, bool first) {
  CUptiResult r = s.config().diag_off.subscribe
                      ? CUPTI_SUCCESS
                      : cuptiSubscribe(&g_subscriber,
                                       reinterpret_cast<CUpti_CallbackFunc>(&OnCallback), nullptr);
  if (r != CUPTI_SUCCESS) {
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      s.Disable(
          "CUPTI is already in use by another profiler (nsys, torch.profiler or DCGM); "
          "stepscope records no CUDA activity");
    } else {
      s.Disable("cannot subscribe to CUPTI: " + ResultString(r));
    }
    return r;
  }
  r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (r == CUPTI_SUCCESS) {
    const CUptiResult a = SetBufferAttributes(s.config());
    if (first) r = a;
  }
  if (r == CUPTI_SUCCESS) r = cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted);
  if (r == CUPTI_SUCCESS) {
    r = first ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE)
              : cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE);
  }
  if (r != CUPTI_SUCCESS) {
    s.Disable("CUPTI setup failed: " + ResultString(r));
    cuptiUnsubscribe(g_subscriber);
    return r;
  }
  EnableStandingCallbacks(s.config());
  return CUPTI_SUCCESS;
}

// Subscribes (Subscribe) and turns on what comes with it: the unified-memory
// configuration, the activity toggle; the caller holds the CUPTI mutex after
// start. False (the session off, warned) when CUPTI refused.
bool Attach(Session& s, bool first) {
  if (Subscribe(s, first) != CUPTI_SUCCESS) return false;
  const CaptureConfig& c = s.config();
  if (c.um_at_start && !g_um_wanted.load()) {
    // `--trace um`: from the start. Context creation is where the kind can
    // be enabled (above); a late attach finds the context there already.
    g_um_wanted = true;
    if (!first) {
      g_context_seen = true;
      s.StartUvmCounters();
    }
  }
  if (g_um_wanted.load()) ConfigureUnifiedMemory(c);
  if ((c.um_at_start && g_um_configured) || pm::GpuMetricsWanted()) {
    // --gpu-metrics: the sampler opens each device at its context's creation.
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  g_detached = false;
  s.SetCuptiActive(true);
  return true;
}

int InitializeCupti() {
  Session& s = Session::Get();
  if (!s.config().cuda && s.active()) return 1;
  if (!s.EnsureStarted()) return 1;  // warned already; the program runs untraced
  if (!s.config().cuda) return 1;
  // The collector decodes records as the structs of cupti_records.h; a CUPTI
  // of another CUDA major (a program that loaded its own copy) writes others.
  uint32_t version = 0;
  if (cuptiGetVersion(&version) == CUPTI_SUCCESS && !cupti::RecordLayoutMatches(version)) {
    s.Disable("the CUPTI loaded in this process (API version " + std::to_string(version) +
              ") is not CUDA " + std::to_string(cupti::kCudaMajor) +
              "'s, whose activity records stepscope decodes; stepscope records no CUDA activity");
    return 1;
  }
  s.SetActivityToggle(&ToggleActivities);
  g_cupti_usable = true;
  const CaptureConfig& c = s.config();
  if (c.DetachesOutsideWindows() && !s.recording() && !WatchesProfilerRange(c)) {
    // Nothing of CUPTI until the window opens (AttachCuptiForWindow). Never
    // with --gpu-metrics (DetachesOutsideWindows): CUPTI stays attached.
    g_detached = true;
    LogVerbose("CUPTI not attached until the recording window opens");
    return 1;
  }
  if (!Attach(s, /*first=*/true)) return 1;
  if (s.recording()) ToggleActivities(true);
  return 1;
}

int AttachCuptiForWindow(bool announced) {
  try {
    Session& s = Session::Get();
    if (announced) g_announced = true;
    if (!s.active() || !g_cupti_usable.load()) return 0;
    std::lock_guard<std::mutex> lk(s.cupti_mutex());
    if (CancelDetach(s.config())) return 1;  // the last window's detach had not run yet
    if (!g_detached.load()) return s.cupti_active() ? 1 : 0;
    if (!Attach(s, /*first=*/false)) return 0;
    LogVerbose("CUPTI attached for the recording window");
    return 1;
  } catch (...) {
    Session::Get().Disable("internal error while attaching CUPTI for the recording window");
    return 0;
  }
}

void DetachCuptiAfterWindow() {
  try {
    Session& s = Session::Get();
    if (s.config().DetachesOutsideWindows() && g_cupti_usable.load()) RequestDetach(s);
  } catch (...) {
    Session::Get().Disable("internal error while detaching CUPTI after the recording window");
  }
}

void WatchForWindow() {
  try {
    Session& s = Session::Get();
    const CaptureConfig& c = s.config();
    if (!g_detached.load() || !g_cupti_usable.load() || !c.DetachesOutsideWindows() ||
        !WatchesProfilerRange(c) || !s.profiler_range_pending() || !s.active()) {
      return;
    }
    std::lock_guard<std::mutex> lk(s.cupti_mutex());
    if (g_detached.load() && Attach(s, /*first=*/false)) {
      LogVerbose("CUPTI subscribed again for the program's next cudaProfilerStart");
    }
  } catch (...) {
    Session::Get().Disable("internal error while watching for the next recording window");
  }
}

}  // namespace stepscope
