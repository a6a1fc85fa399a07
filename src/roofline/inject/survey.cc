// Survey mode: a small recorder of what roofline's kernel selection needs
// (roofline/selection.h): kernels with their GPU times (CUPTI activity),
// the runtime and driver launch calls that created them (so kernels can be
// placed in a step by their launch time), and NVTX push/pop ranges (the
// "step N" ranges). Records are kept in memory and written as a stepscope
// trace when the program exits. Timestamps are all CUPTI's clock.
#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/strings.h"
#include "roofline/inject/inject.h"
#include "roofline/profile_io.h"
#include "store/trace_writer.h"

namespace stepscope::inject {

namespace {

struct Kernel {
  KernelRecord r;
  std::string name;  // as CUPTI gives it (mangled when C++)
};
struct Api {
  ApiRecord r;
  std::string name;
};
struct Range {
  NvtxRecord r;
  std::string name;
};

struct Survey {
  std::mutex mu;
  std::vector<Kernel> kernels;
  std::vector<Api> apis;
  std::vector<Range> ranges;
  std::vector<int> devices_seen;
  int64_t dropped = 0;
  std::string out_path;
};
Survey* g = nullptr;

struct OpenCall {
  int64_t start;
};
thread_local std::vector<OpenCall> t_calls;
thread_local std::vector<size_t> t_ranges;  // indices into g->ranges of open push/pop ranges

constexpr size_t kBufferBytes = 8u << 20;

void BufferCompletedImpl(uint8_t* buffer, size_t valid);

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

// Behind an exception barrier (DisableAfterError): nothing reaches the program.
void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  try {
    BufferCompletedImpl(buffer, valid);
  } catch (...) {
    DisableAfterError("the CUPTI buffer callback");
  }
}

void BufferCompletedImpl(uint8_t* buffer, size_t valid) {
  CUpti_Activity* rec = nullptr;
  std::vector<Kernel> batch;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
    Kernel x{};
    x.r.start_ns = static_cast<int64_t>(k->start);
    x.r.end_ns = static_cast<int64_t>(k->end);
    x.r.device = k->deviceId;
    x.r.context = k->contextId;
    x.r.stream = k->streamId;
    x.r.correlation = k->correlationId;
    x.r.grid_x = k->gridX;
    x.r.grid_y = k->gridY;
    x.r.grid_z = k->gridZ;
    x.r.block_x = k->blockX;
    x.r.block_y = k->blockY;
    x.r.block_z = k->blockZ;
    x.r.static_smem_bytes = k->staticSharedMemory;
    x.r.dynamic_smem_bytes = k->dynamicSharedMemory;
    x.r.registers_per_thread = k->registersPerThread;
    x.r.graph_id = k->graphId;
    x.r.graph_node_id = k->graphNodeId;
    x.name = k->name ? k->name : "";
    batch.push_back(std::move(x));
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  {
    std::lock_guard<std::mutex> lock(g->mu);
    for (Kernel& k : batch) g->kernels.push_back(std::move(k));
    g->dropped += static_cast<int64_t>(dropped);
  }
  std::free(buffer);
}

bool IsRuntimeLaunch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
      return true;
    default:
      return false;
  }
}

void OnLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* d) {
  if (d->callbackSite == CUPTI_API_ENTER) {
    t_calls.push_back({NowNs()});
    return;
  }
  if (t_calls.empty()) return;
  Api a{};
  a.r.start_ns = t_calls.back().start;
  t_calls.pop_back();
  a.r.end_ns = NowNs();
  a.r.tid = Tid();
  a.r.correlation = d->correlationId;
  a.r.cbid = cbid;
  a.r.domain = domain == CUPTI_CB_DOMAIN_DRIVER_API ? ApiDomain::kDriver : ApiDomain::kRuntime;
  a.name = d->functionName ? d->functionName : "";
  uint32_t dev = 0;
  bool new_device = false;
  if (d->context && cuptiGetDeviceId(d->context, &dev) == CUPTI_SUCCESS) new_device = true;
  std::lock_guard<std::mutex> lock(g->mu);
  g->apis.push_back(std::move(a));
  if (new_device) {
    bool seen = false;
    for (int x : g->devices_seen) seen = seen || x == static_cast<int>(dev);
    if (!seen) g->devices_seen.push_back(static_cast<int>(dev));
  }
}

std::string NvtxMessage(const nvtxEventAttributes_t* attr) {
  if (!attr) return "";
  if (attr->messageType == NVTX_MESSAGE_TYPE_ASCII && attr->message.ascii)
    return attr->message.ascii;
  return "";
}

void OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  std::string name;
  bool push = false, pop = false;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      auto* p = static_cast<const nvtxRangePushA_params*>(d->functionParams);
      name = p && p->message ? p->message : "";
      push = true;
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx: {
      auto* p = static_cast<const nvtxRangePushEx_params*>(d->functionParams);
      name = p ? NvtxMessage(p->eventAttrib) : "";
      push = true;
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      auto* p = static_cast<const nvtxDomainRangePushEx_params*>(d->functionParams);
      name = p ? NvtxMessage(p->core.eventAttrib) : "";
      push = true;
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      pop = true;
      break;
    default:
      return;
  }
  int64_t now = NowNs();
  std::lock_guard<std::mutex> lock(g->mu);
  if (push) {
    Range r{};
    r.r.start_ns = now;
    r.r.end_ns = -1;
    r.r.tid = r.r.end_tid = Tid();
    r.r.kind = NvtxKind::kPushPop;
    r.r.depth = static_cast<uint8_t>(std::min<size_t>(t_ranges.size(), 255));
    r.name = std::move(name);
    t_ranges.push_back(g->ranges.size());
    g->ranges.push_back(std::move(r));
  } else if (pop && !t_ranges.empty()) {
    g->ranges[t_ranges.back()].r.end_ns = now;
    t_ranges.pop_back();
  }
}

}  // namespace

bool SurveyStart(CUpti_SubscriberHandle sub) {
  const char* out = std::getenv("STEPSCOPE_ROOFLINE_TRACE");
  if (!out || !*out) {
    ReportError("survey mode needs STEPSCOPE_ROOFLINE_TRACE (the trace to write)", 0);
    return false;
  }
  g = new Survey();
  g->out_path = out;
  CUptiResult r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r == CUPTI_SUCCESS) r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r == CUPTI_SUCCESS) r = EnableDriverLaunchCallbacks(sub);
  for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
                              CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
                              CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000}) {
    if (r == CUPTI_SUCCESS) r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  }
  if (r == CUPTI_SUCCESS) r = cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_NVTX);
  if (r != CUPTI_SUCCESS) {
    ReportError(ExplainCuptiError(static_cast<int>(r), "enabling kernel tracing", MpsActive()),
                static_cast<int>(r));
    return false;
  }
  return true;
}

void SurveyCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!g) return;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    OnNvtx(cbid, static_cast<const CUpti_NvtxData*>(data));
  } else if ((domain == CUPTI_CB_DOMAIN_DRIVER_API && IsDriverLaunch(cbid)) ||
             (domain == CUPTI_CB_DOMAIN_RUNTIME_API && IsRuntimeLaunch(cbid))) {
    OnLaunch(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
  }
}

void SurveyFinish() {
  if (!g) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g->mu);
  auto w = TraceWriter::Create(g->out_path);
  if (!w.ok()) {
    ReportError("cannot write the survey trace: " + w.status().message(), 0);
    return;
  }
  TraceWriter& t = **w;
  t.SetMeta("source", "roofline-survey");
  t.SetMeta("clock", "CUPTI timestamp");
  t.SetMeta("pid", std::to_string(::getpid()));
  for (const Kernel& k : g->kernels) {
    KernelRecord r = k.r;
    bool mangled = StartsWith(k.name, "_Z");
    r.name = t.Intern(mangled ? Demangle(k.name) : k.name);
    r.mangled_name = mangled ? t.Intern(k.name) : kNoString;
    t.AddKernel(r);
  }
  for (const Api& a : g->apis) {
    ApiRecord r = a.r;
    r.name = t.Intern(a.name);
    t.AddApi(r);
  }
  for (const Range& n : g->ranges) {
    NvtxRecord r = n.r;
    r.name = t.Intern(n.name);
    t.AddNvtx(r);
  }
  for (int ordinal : g->devices_seen) {
    DeviceRecord d{};
    d.id = static_cast<uint32_t>(ordinal);
    std::string name, uuid;
    DeviceIdentity(ordinal, &name, &uuid);
    d.name = t.Intern(name);
    std::snprintf(d.uuid, sizeof(d.uuid), "%s", uuid.c_str());
    t.AddDevice(d);
  }
  t.SetStat("cupti_dropped_records", g->dropped, "activity records CUPTI dropped (buffers full)");
  Status st = t.Finalize();
  if (!st.ok()) ReportError("cannot finish the survey trace: " + st.message(), 0);
}

}  // namespace stepscope::inject
