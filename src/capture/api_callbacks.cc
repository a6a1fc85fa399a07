#include "capture/api_callbacks.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "capture/session.h"

namespace stepscope {
namespace {

const char* const kRuntimePrefixes[] = {
    "cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset", "cudaStreamSynchronize",
    "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaMalloc", "cudaFree",
    "cudaHostAlloc", "cudaMallocHost", "cudaFreeHost", "cudaMemPoolTrimTo"};
const char* const kDriverPrefixes[] = {
    "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuStreamSynchronize", "cuCtxSynchronize",
    "cuEventSynchronize", "cuStreamWaitEvent", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc",
    "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap"};

struct ThreadApiBuffer {
  std::mutex mu;
  std::vector<ApiRecord> records;
  uint32_t tid = 0;
};

std::mutex g_buffers_mu;
std::vector<ThreadApiBuffer*>& AllBuffers() {
  static auto* v = new std::vector<ThreadApiBuffer*>();
  return *v;
}

ThreadApiBuffer* MyBuffer() {
  // Never freed: a thread's last records are drained after it exits.
  static thread_local ThreadApiBuffer* buf = [] {
    auto* b = new ThreadApiBuffer();
    b->tid = static_cast<uint32_t>(syscall(SYS_gettid));
    b->records.reserve(4096);
    std::lock_guard<std::mutex> lk(g_buffers_mu);
    AllBuffers().push_back(b);
    return b;
  }();
  return buf;
}

}  // namespace

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

void ToggleApiCallbacks(CUpti_SubscriberHandle subscriber, bool on) {
  struct {
    CUpti_CallbackDomain domain;
    uint32_t max;
  } domains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  for (const auto& d : domains) {
    for (uint32_t cbid = 1; cbid < d.max; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(d.domain, cbid, &name) != CUPTI_SUCCESS) continue;
      if (IsChosenApi(d.domain, name)) cuptiEnableCallback(on ? 1 : 0, subscriber, d.domain, cbid);
    }
  }
}

void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* info) {
  Session& s = Session::Get();
  if (info->callbackSite == CUPTI_API_ENTER) {
    *info->correlationData = static_cast<uint64_t>(s.NowNs());
    return;
  }
  if (!s.recording()) return;
  ApiRecord r{};
  r.start_ns = static_cast<int64_t>(*info->correlationData);
  r.end_ns = s.NowNs();
  r.correlation = info->correlationId;
  r.cbid = cbid;
  r.domain = domain == CUPTI_CB_DOMAIN_DRIVER_API ? ApiDomain::kDriver : ApiDomain::kRuntime;
  r.return_code = info->functionReturnValue ? *static_cast<const int32_t*>(info->functionReturnValue) : 0;
  ThreadApiBuffer* b = MyBuffer();
  r.tid = b->tid;
  std::lock_guard<std::mutex> lk(b->mu);
  b->records.push_back(r);
}

void DrainApiRecords(std::vector<ApiRecord>* out) {
  std::vector<ThreadApiBuffer*> buffers;
  {
    std::lock_guard<std::mutex> lk(g_buffers_mu);
    buffers = AllBuffers();
  }
  for (ThreadApiBuffer* b : buffers) {
    std::lock_guard<std::mutex> lk(b->mu);
    out->insert(out->end(), b->records.begin(), b->records.end());
    b->records.clear();
  }
}

}  // namespace stepscope
