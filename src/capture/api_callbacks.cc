#include "capture/api_callbacks.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "capture/pageable_copy.h"
#include "capture/python_callstack.h"
#include "capture/self_time.h"
#include "capture/session.h"

namespace stepscope {
namespace {

const char* const kRuntimePrefixes[] = {"cudaLaunch",
                                        "cudaGraphLaunch",
                                        "cudaMemcpy",
                                        "cudaMemset",
                                        "cudaStreamSynchronize",
                                        "cudaDeviceSynchronize",
                                        "cudaEventSynchronize",
                                        "cudaStreamWaitEvent",
                                        "cudaMalloc",
                                        "cudaFree",
                                        "cudaHostAlloc",
                                        "cudaMallocHost",
                                        "cudaFreeHost",
                                        "cudaMemPoolTrimTo",
                                        "cudaMemPrefetch",
                                        "cudaMemAdvise"};
const char* const kDriverPrefixes[] = {"cuLaunch",
                                       "cuGraphLaunch",
                                       "cuMemcpy",
                                       "cuMemset",
                                       "cuStreamSynchronize",
                                       "cuCtxSynchronize",
                                       "cuEventSynchronize",
                                       "cuStreamWaitEvent",
                                       "cuMemAlloc",
                                       "cuMemFree",
                                       "cuMemHostAlloc",
                                       "cuMemCreate",
                                       "cuMemRelease",
                                       "cuMemMap",
                                       "cuMemUnmap",
                                       "cuMemPrefetch",
                                       "cuMemAdvise"};

uint32_t ThreadId() {
  static thread_local uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

// The size an allocation call asked for, and the kind of memory; false when
// `cbid` is not an allocation function.
bool AllocationRequest(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                       uint64_t* bytes, MemoryKind* kind) {
  if (!params) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
        *bytes = static_cast<const cudaMalloc_v3020_params*>(params)->size;
        *kind = MemoryKind::kDevice;
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
        *bytes = static_cast<const cudaMallocAsync_v11020_params*>(params)->size;
        *kind = MemoryKind::kDevice;
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
        *bytes = static_cast<const cudaMallocAsync_ptsz_v11020_params*>(params)->size;
        *kind = MemoryKind::kDevice;
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
        *bytes = static_cast<const cudaMallocFromPoolAsync_v11020_params*>(params)->size;
        *kind = MemoryKind::kDevice;
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
        *bytes = static_cast<const cudaMallocManaged_v6000_params*>(params)->size;
        *kind = MemoryKind::kManaged;
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
        *bytes = static_cast<const cudaMallocHost_v3020_params*>(params)->size;
        *kind = MemoryKind::kPinned;
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
        *bytes = static_cast<const cudaHostAlloc_v3020_params*>(params)->size;
        *kind = MemoryKind::kPinned;
        return true;
      default:
        return false;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
      *bytes = static_cast<const cuMemAlloc_v2_params*>(params)->bytesize;
      *kind = MemoryKind::kDevice;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
      *bytes = static_cast<const cuMemAllocAsync_params*>(params)->bytesize;
      *kind = MemoryKind::kDevice;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
      *bytes = static_cast<const cuMemCreate_params*>(params)->size;
      *kind = MemoryKind::kDevice;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
      *bytes = static_cast<const cuMemAllocManaged_params*>(params)->bytesize;
      *kind = MemoryKind::kManaged;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc:
      *bytes = static_cast<const cuMemHostAlloc_params*>(params)->bytesize;
      *kind = MemoryKind::kPinned;
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
      *bytes = static_cast<const cuMemAllocHost_v2_params*>(params)->bytesize;
      *kind = MemoryKind::kPinned;
      return true;
    default:
      return false;
  }
}

// A driver function, from the libcuda.so.1 already loaded in this process. Not
// dlsym(RTLD_DEFAULT): the CUDA runtime dlopens the driver with RTLD_LOCAL, so
// its symbols are not in the global scope (that lookup found nothing).
void* DriverSymbol(const char* name) {
  static void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle) return dlsym(handle, name);
  return dlsym(RTLD_DEFAULT, name);
}

// Out of memory: record the request and the device's free/total memory now,
// and have the writer commit at once, because an abort usually follows. The
// driver functions are looked up at run time (the tracer does not link
// libcuda: it must load on machines without a driver).
void RecordOom(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* info,
               const ApiRecord& api) {
  uint64_t bytes = 0;
  MemoryKind kind = MemoryKind::kUnknown;
  if (!AllocationRequest(domain, cbid, info->functionParams, &bytes, &kind)) return;
  using MemGetInfo = int (*)(size_t*, size_t*);
  using CtxGetDevice = int (*)(int*);
  static auto mem_get_info = reinterpret_cast<MemGetInfo>(DriverSymbol("cuMemGetInfo_v2"));
  static auto ctx_get_device = reinterpret_cast<CtxGetDevice>(DriverSymbol("cuCtxGetDevice"));
  OomRecord o{};
  o.ts_ns = api.end_ns;
  o.requested_bytes = bytes;
  o.memory_kind = kind;
  o.free_bytes = o.total_bytes = -1;
  size_t free_b = 0, total_b = 0;
  if (mem_get_info && mem_get_info(&free_b, &total_b) == 0) {
    o.free_bytes = static_cast<int64_t>(free_b);
    o.total_bytes = static_cast<int64_t>(total_b);
  }
  int dev = 0;
  if (ctx_get_device && ctx_get_device(&dev) == 0) o.device = static_cast<uint32_t>(dev);
  o.tid = api.tid;
  o.correlation = api.correlation;
  o.cbid = api.cbid;
  o.domain = api.domain;
  o.return_code = api.return_code;
  Session::Get().AddOom(o);
}

// Whether a call gets its thread's Python stack (python_callstack.h), by
// (domain, cbid), worked out from the name once per function.
StackPolicy PolicyFor(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  constexpr uint32_t kMax = 4096;
  static std::atomic<uint8_t> cache[2][kMax];
  const int d = domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0;
  if (cbid >= kMax) return StackPolicy::kNone;
  uint8_t v = cache[d][cbid].load(std::memory_order_relaxed);
  if (v == 0) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) name = nullptr;
    v = static_cast<uint8_t>(StackPolicyForName(name)) + 1;
    cache[d][cbid].store(v, std::memory_order_relaxed);
  }
  return static_cast<StackPolicy>(v - 1);
}

// What CUDA knows of a host pointer (pageable_copy.h): one
// cuPointerGetAttribute, kUnknown without the driver's function.
HostMemory DriverPointerQuery(const void* p) {
  using GetAttribute = int (*)(void*, int, unsigned long long);
  static const auto get = reinterpret_cast<GetAttribute>(DriverSymbol("cuPointerGetAttribute"));
  if (!get) return HostMemory::kUnknown;
  unsigned int type = 0;
  return HostMemoryFromResult(
      get(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<unsigned long long>(p)));
}

// Called at the call's entry, before its start time is read: a blocking call
// is about to wait for the GPU, so reading its stack there overlaps work the
// thread would wait for anyway (after the call returned, the same read delayed
// the thread's next launch). A stack costs a 24-45 us median on HF loops (lent
// H200, CPython 3.12, 2026-11-28, after the walk's line and stamp cuts). Its
// cost is this call's own tracer_ns, spent before its start.
void MaybePutPythonStack(Session& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const CUpti_CallbackData* info) {
  const CaptureConfig& c = s.config();
  if (!c.python_stacks) return;
  switch (PolicyFor(domain, cbid)) {
    case StackPolicy::kAlways:
      break;
    case StackPolicy::kIfPageable:
      if (!IsPageableAsyncCopy(domain, cbid, info->functionParams, DriverPointerQuery)) return;
      break;
    case StackPolicy::kLaunch: {
      static thread_local uint32_t launches = 0;
      if (c.python_stack_launch_every <= 0 ||
          ++launches % static_cast<uint32_t>(c.python_stack_launch_every) != 0) {
        return;
      }
      break;
    }
    default:
      return;
  }
  // A failure here turns stacks off, not the tracer.
  static std::atomic<bool> broken{false};
  if (broken.load(std::memory_order_relaxed)) return;
  try {
    s.PutPythonStack(s.MapCorrelation(info->correlationId), ThreadId());
  } catch (...) {
    broken = true;
  }
}

}  // namespace

bool IsManagedAllocation(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
          cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000) ||
         (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
          cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
}

bool IsChosenApi(CUpti_CallbackDomain domain, const char* name) {
  if (!name) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    for (const char* p : kRuntimePrefixes) {
      if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    for (const char* p : kDriverPrefixes) {
      if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
    }
  }
  return false;
}

bool IsRuntimeLaunch(const char* name) {
  return std::strncmp(name, "cudaLaunch", 10) == 0 ||
         std::strncmp(name, "cudaGraphLaunch", 15) == 0;
}

void ToggleApiCallbacks(CUpti_SubscriberHandle subscriber, bool on, bool driver,
                        bool runtime_launches) {
  struct {
    CUpti_CallbackDomain domain;
    uint32_t max;
  } domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  for (const auto& d : domains) {
    if (!driver && d.domain == CUPTI_CB_DOMAIN_DRIVER_API) continue;
    for (uint32_t cbid = 1; cbid < d.max; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(d.domain, cbid, &name) != CUPTI_SUCCESS) continue;
      if (!IsChosenApi(d.domain, name)) continue;
      if (!on && IsManagedAllocation(d.domain, cbid)) continue;  // stays on (unified memory)
      if (!runtime_launches && d.domain == CUPTI_CB_DOMAIN_RUNTIME_API && IsRuntimeLaunch(name))
        continue;
      cuptiEnableCallback(on ? 1 : 0, subscriber, d.domain, cbid);
    }
  }
}

// Correlation id of the traced runtime call in progress on this thread. The
// runtime implements its calls with driver calls (cudaLaunchKernel ->
// cuLaunchKernel) that CUPTI's driver callbacks also see, with the same
// correlation id: such a nested driver call is the same call, not a second
// one, so it is not recorded. (An id, not a depth counter: a missed exit
// callback cannot leave it stuck.)
thread_local uint32_t t_runtime_correlation = 0;

void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData* info) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && t_runtime_correlation != 0 && info->correlationId == t_runtime_correlation)
    return;
  Session& s = Session::Get();
  // Diagnostics (bench/launch_cost.py): CUPTI's callback cost alone, and
  // without the ring.
  if (s.config().diag_off.api_work) return;
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (runtime) t_runtime_correlation = info->correlationId;
    const CaptureConfig& c = s.config();
    if (s.recording() && c.api_via_callbacks && !c.diag_off.api && !c.diag_off.api_put) {
      MaybePutPythonStack(s, domain, cbid, info);
    }
    *info->correlationData = static_cast<uint64_t>(s.NowNs());
    return;
  }
  if (runtime) t_runtime_correlation = 0;
  if (IsManagedAllocation(domain, cbid)) {
    OnFirstManagedAllocation();  // acts once
    // API activity records mode: this callback is only for the line above.
    if (!s.config().api_via_callbacks || s.config().diag_off.api) return;
  }
  if (!s.recording()) return;
  ApiRecord r{};
  r.start_ns = static_cast<int64_t>(*info->correlationData);
  r.end_ns = s.NowNs();
  r.correlation = s.MapCorrelation(info->correlationId);
  r.cbid = cbid;
  r.domain = domain == CUPTI_CB_DOMAIN_DRIVER_API ? ApiDomain::kDriver : ApiDomain::kRuntime;
  r.return_code =
      info->functionReturnValue ? *static_cast<const int32_t*>(info->functionReturnValue) : 0;
  r.tid = ThreadId();
  r.tracer_ns = TakeSelfTime();
  if (s.config().diag_off.api_put) return;
  s.PutApi(r);
  // cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY are both 2.
  if (r.return_code == 2) RecordOom(domain, cbid, info, r);
}

}  // namespace stepscope
