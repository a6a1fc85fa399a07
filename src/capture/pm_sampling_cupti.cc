// The CUPTI side of the GPU metrics (pm_sampling.h): PM sampling through
// cupti_pmsampling.h, the metric configuration and evaluation through the
// profiler host API (cupti_profiler_host.h, as roofline/inject/range_profiler.cc
// does for the range profiler), and the glue to the session.
//
// Per device, once: the chip name and its counter availability (before
// sampling is enabled: CUPTI may refuse the query while a session is active),
// a host object of type PM_SAMPLING, the metrics of format/gpu_metric_names.h
// that the chip lists, a config image that must fit one pass (optional metrics
// dropped from the end until it does), then cuptiPmSamplingEnable,
// cuptiPmSamplingSetConfig (GPU time-interval trigger, keep-oldest hardware
// buffer) and a counter data image for the samples of a few decode periods.
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "capture/pm_sampling.h"
#include "capture/session.h"
#include "common/log.h"
#include "format/gpu_metric_names.h"

namespace stepscope::pm {
namespace {

// The hardware buffer PM samples land in between two decodes.
constexpr size_t kHardwareBufferBytes = 64u << 20;

std::string CuptiError(const char* call, CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::string s = std::string(call) + ": " + (text ? text : "unknown error") + " (CUPTI error " +
                  std::to_string(static_cast<int>(r)) + ")";
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
      r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
    s += "; ERR_NVGPUCTRPERM: this user may not read the GPU performance counters (the driver's "
         "NVreg_RestrictProfilingToAdminUsers=1; see "
         "https://developer.nvidia.com/ERR_NVGPUCTRPERM, or run as root)";
  }
  return s;
}

#define STEPSCOPE_PM_CALL(call, params)     \
  do {                                      \
    const CUptiResult r_ = call(&(params)); \
    if (r_ != CUPTI_SUCCESS) {              \
      *why = CuptiError(#call, r_);         \
      return false;                         \
    }                                       \
  } while (0)

struct DeviceState {
  CUpti_PmSampling_Object* object = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::string> metrics;
  std::vector<const char*> metric_ptrs;
  std::vector<uint8_t> config;
  std::vector<uint8_t> counter_data;
};

class CuptiBackend : public Backend {
 public:
  bool Open(uint32_t device, const std::vector<std::string>& wanted, int64_t interval_ns,
            std::vector<std::string>* metrics, std::string* why) override;
  bool Start(uint32_t device, std::string* why) override {
    CUpti_PmSampling_Start_Params p{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    p.pPmSamplingObject = devices_[device].object;
    STEPSCOPE_PM_CALL(cuptiPmSamplingStart, p);
    return true;
  }
  bool Stop(uint32_t device, std::string* why) override {
    CUpti_PmSampling_Stop_Params p{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
    p.pPmSamplingObject = devices_[device].object;
    STEPSCOPE_PM_CALL(cuptiPmSamplingStop, p);
    return true;
  }
  bool Decode(uint32_t device, std::vector<Sample>* out, bool* lost, std::string* why) override;
  void Close(uint32_t device, bool at_exit) override;

 private:
  bool OpenDevice(uint32_t device, const std::vector<std::string>& wanted, int64_t interval_ns,
                  std::vector<std::string>* metrics, std::string* why);
  bool Availability(uint32_t device, std::string* chip, std::vector<uint8_t>* image,
                    std::string* why);
  bool HostObject(const std::string& chip, const std::vector<uint8_t>& image,
                  CUpti_Profiler_Host_Object** host, std::string* why);
  std::vector<std::string> Listed(CUpti_Profiler_Host_Object* host,
                                  const std::vector<std::string>& wanted);
  // Config image of d->metrics in one pass; false (with *why) when it does not fit.
  bool Config(DeviceState* d, const std::string& chip, const std::vector<uint8_t>& image,
              std::string* why);
  bool InitCounterData(DeviceState* d, std::string* why);
  bool ReadSamples(DeviceState* d, std::vector<Sample>* out, std::string* why);

  std::map<uint32_t, DeviceState> devices_;
  bool profiler_initialized_ = false;
};

bool CuptiBackend::Availability(uint32_t device, std::string* chip, std::vector<uint8_t>* image,
                                std::string* why) {
  if (!profiler_initialized_) {
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    STEPSCOPE_PM_CALL(cuptiProfilerInitialize, init);
    profiler_initialized_ = true;
  }
  CUpti_Device_GetChipName_Params cn{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  cn.deviceIndex = device;
  STEPSCOPE_PM_CALL(cuptiDeviceGetChipName, cn);
  *chip = cn.pChipName ? cn.pChipName : "";
  CUpti_PmSampling_GetCounterAvailability_Params av{
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
  av.deviceIndex = device;
  STEPSCOPE_PM_CALL(cuptiPmSamplingGetCounterAvailability, av);
  image->assign(av.counterAvailabilityImageSize, 0);
  av.pCounterAvailabilityImage = image->data();
  STEPSCOPE_PM_CALL(cuptiPmSamplingGetCounterAvailability, av);
  return true;
}

bool CuptiBackend::HostObject(const std::string& chip, const std::vector<uint8_t>& image,
                              CUpti_Profiler_Host_Object** host, std::string* why) {
  CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  hi.pChipName = chip.c_str();
  hi.pCounterAvailabilityImage = image.data();
  STEPSCOPE_PM_CALL(cuptiProfilerHostInitialize, hi);
  *host = hi.pHostObject;
  return true;
}

void DeinitHost(CUpti_Profiler_Host_Object* host) {
  if (!host) return;
  CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

// The wanted metrics whose base metric (the name before the first '.') the
// chip lists for PM sampling; all of them when the listing fails.
std::vector<std::string> CuptiBackend::Listed(CUpti_Profiler_Host_Object* host,
                                              const std::vector<std::string>& wanted) {
  std::vector<std::string> base;
  for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
    CUpti_Profiler_Host_GetBaseMetrics_Params bm{
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    bm.pHostObject = host;
    bm.metricType = static_cast<CUpti_MetricType>(type);
    if (cuptiProfilerHostGetBaseMetrics(&bm) != CUPTI_SUCCESS) continue;
    for (size_t i = 0; i < bm.numMetrics; ++i) base.emplace_back(bm.ppMetricNames[i]);
  }
  if (base.empty()) return wanted;
  std::vector<std::string> out;
  for (const std::string& m : wanted) {
    if (std::find(base.begin(), base.end(), m.substr(0, m.find('.'))) != base.end())
      out.push_back(m);
  }
  return out;
}

bool CuptiBackend::Config(DeviceState* d, const std::string& chip,
                          const std::vector<uint8_t>& image, std::string* why) {
  if (!HostObject(chip, image, &d->host, why)) return false;
  d->metric_ptrs.clear();
  for (const std::string& m : d->metrics) d->metric_ptrs.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = d->host;
  add.ppMetricNames = d->metric_ptrs.data();
  add.numMetrics = d->metric_ptrs.size();
  STEPSCOPE_PM_CALL(cuptiProfilerHostConfigAddMetrics, add);
  CUpti_Profiler_Host_GetConfigImageSize_Params cs{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cs.pHostObject = d->host;
  STEPSCOPE_PM_CALL(cuptiProfilerHostGetConfigImageSize, cs);
  d->config.assign(cs.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params ci{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  ci.pHostObject = d->host;
  ci.pConfigImage = d->config.data();
  ci.configImageSize = d->config.size();
  STEPSCOPE_PM_CALL(cuptiProfilerHostGetConfigImage, ci);
  CUpti_Profiler_Host_GetNumOfPasses_Params np{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.pConfigImage = d->config.data();
  np.configImageSize = d->config.size();
  STEPSCOPE_PM_CALL(cuptiProfilerHostGetNumOfPasses, np);
  if (np.numOfPasses > 1) {
    *why = "the metrics need " + std::to_string(np.numOfPasses) + " passes; PM sampling has one";
    return false;
  }
  return true;
}

// Drops the last optional metric (format/gpu_metric_names.h), else the last one.
void DropOne(std::vector<std::string>* metrics) {
  for (size_t i = metrics->size(); i-- > 0;) {
    const GpuMetricDef* def = FindGpuMetric((*metrics)[i]);
    if (!def || !def->core) {
      metrics->erase(metrics->begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  if (!metrics->empty()) metrics->pop_back();
}

bool CuptiBackend::InitCounterData(DeviceState* d, std::string* why) {
  CUpti_PmSampling_CounterDataImage_Initialize_Params ci{
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ci.pPmSamplingObject = d->object;
  ci.counterDataSize = d->counter_data.size();
  ci.pCounterData = d->counter_data.data();
  STEPSCOPE_PM_CALL(cuptiPmSamplingCounterDataImageInitialize, ci);
  return true;
}

bool CuptiBackend::Open(uint32_t device, const std::vector<std::string>& wanted,
                        int64_t interval_ns, std::vector<std::string>* metrics, std::string* why) {
  if (OpenDevice(device, wanted, interval_ns, metrics, why)) return true;
  Close(device, /*at_exit=*/false);  // nothing stays enabled
  return false;
}

bool CuptiBackend::OpenDevice(uint32_t device, const std::vector<std::string>& wanted,
                              int64_t interval_ns, std::vector<std::string>* metrics,
                              std::string* why) {
  std::string chip;
  std::vector<uint8_t> image;
  if (!Availability(device, &chip, &image, why)) return false;
  DeviceState& d = devices_[device];
  CUpti_Profiler_Host_Object* probe = nullptr;
  if (!HostObject(chip, image, &probe, why)) return false;
  d.metrics = Listed(probe, wanted);
  DeinitHost(probe);
  std::string last_why;
  while (!d.metrics.empty()) {
    if (Config(&d, chip, image, &last_why)) break;
    DeinitHost(d.host);
    d.host = nullptr;
    DropOne(&d.metrics);
  }
  if (d.metrics.empty()) {
    *why = "no metric of the list can be PM-sampled on " + chip +
           (last_why.empty() ? std::string() : " (last try: " + last_why + ")");
    return false;
  }
  CUpti_PmSampling_Enable_Params en{CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
  en.deviceIndex = device;
  STEPSCOPE_PM_CALL(cuptiPmSamplingEnable, en);
  d.object = en.pPmSamplingObject;
  CUpti_PmSampling_SetConfig_Params sc{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  sc.pPmSamplingObject = d.object;
  sc.configSize = d.config.size();
  sc.pConfig = d.config.data();
  sc.hardwareBufferSize = kHardwareBufferBytes;
  sc.samplingInterval = static_cast<uint64_t>(interval_ns);
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  STEPSCOPE_PM_CALL(cuptiPmSamplingSetConfig, sc);
  // Room for a few decode periods of samples; a fuller buffer is decoded in rounds.
  const int64_t per_period = kDecodePeriodNs / std::max<int64_t>(interval_ns, 1);
  CUpti_PmSampling_GetCounterDataSize_Params ds{
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pPmSamplingObject = d.object;
  ds.pMetricNames = d.metric_ptrs.data();
  ds.numMetrics = d.metric_ptrs.size();
  ds.maxSamples = static_cast<uint32_t>(std::clamp<int64_t>(4 * per_period, 64, 20000));
  STEPSCOPE_PM_CALL(cuptiPmSamplingGetCounterDataSize, ds);
  d.counter_data.assign(ds.counterDataSize, 0);
  if (!InitCounterData(&d, why)) return false;
  *metrics = d.metrics;
  return true;
}

// The completed samples of the counter data image, evaluated.
bool CuptiBackend::ReadSamples(DeviceState* d, std::vector<Sample>* out, std::string* why) {
  CUpti_PmSampling_GetCounterDataInfo_Params info{
      CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = d->counter_data.data();
  info.counterDataImageSize = d->counter_data.size();
  STEPSCOPE_PM_CALL(cuptiPmSamplingGetCounterDataInfo, info);
  for (size_t i = 0; i < info.numCompletedSamples; ++i) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params si{
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    si.pPmSamplingObject = d->object;
    si.pCounterDataImage = d->counter_data.data();
    si.counterDataImageSize = d->counter_data.size();
    si.sampleIndex = i;
    STEPSCOPE_PM_CALL(cuptiPmSamplingCounterDataGetSampleInfo, si);
    Sample s;
    s.start_ts = si.startTimestamp;
    s.end_ts = si.endTimestamp;
    s.values.assign(d->metric_ptrs.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = d->host;
    ev.pCounterDataImage = d->counter_data.data();
    ev.counterDataImageSize = d->counter_data.size();
    ev.rangeIndex = i;
    ev.ppMetricNames = d->metric_ptrs.data();
    ev.numMetrics = d->metric_ptrs.size();
    ev.pMetricValues = s.values.data();
    STEPSCOPE_PM_CALL(cuptiProfilerHostEvaluateToGpuValues, ev);
    out->push_back(std::move(s));
  }
  return true;
}

bool CuptiBackend::Decode(uint32_t device, std::vector<Sample>* out, bool* lost, std::string* why) {
  DeviceState& d = devices_[device];
  *lost = false;
  // The image holds a few periods; a fuller hardware buffer takes more rounds.
  for (int round = 0; round < 64; ++round) {
    CUpti_PmSampling_DecodeData_Params dd{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    dd.pPmSamplingObject = d.object;
    dd.pCounterDataImage = d.counter_data.data();
    dd.counterDataImageSize = d.counter_data.size();
    const CUptiResult r = cuptiPmSamplingDecodeData(&dd);
    // OUT_OF_MEMORY: the hardware buffer overflowed; what it kept is decoded.
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) {
      *why = CuptiError("cuptiPmSamplingDecodeData", r);
      return false;
    }
    if (r == CUPTI_ERROR_OUT_OF_MEMORY || dd.overflow) *lost = true;
    if (!ReadSamples(&d, out, why)) return false;
    if (!InitCounterData(&d, why)) return false;
    if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
  }
  return true;
}

void CuptiBackend::Close(uint32_t device, bool at_exit) {
  auto it = devices_.find(device);
  if (it == devices_.end()) return;
  if (at_exit) {
    // Stopped and decoded already; the objects go with the process (see
    // Backend::Close). The buffers CUPTI was given stay allocated too.
    it->second.object = nullptr;
    it->second.host = nullptr;
    static_cast<void>(new DeviceState(std::move(it->second)));  // leaked on purpose
    devices_.erase(it);
    return;
  }
  if (it->second.object) {
    CUpti_PmSampling_Disable_Params p{CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
    p.pPmSamplingObject = it->second.object;
    cuptiPmSamplingDisable(&p);
  }
  DeinitHost(it->second.host);
  devices_.erase(it);
}

#undef STEPSCOPE_PM_CALL

std::atomic<Sampler*> g_sampler{nullptr};
std::once_flag g_sampler_once;

Sampler* StartSampler() {
  std::call_once(g_sampler_once, [] {
    Session& s = Session::Get();
    std::vector<std::string> wanted;
    for (const GpuMetricDef& d : kGpuMetricDefs) wanted.emplace_back(d.name);
    Sampler::Hooks hooks;
    hooks.sink = [](const MetricValue& v) { Session::Get().PutGpuMetric(v); };
    hooks.warn = [](const std::string& why) {
      LogWarn("%s; the trace goes on without them", why.c_str());
    };
    hooks.note = [](const std::string& what) { LogVerbose("%s", what.c_str()); };
    hooks.now_ns = [] { return Session::Get().NowNs(); };
    // Leaked on purpose, as the session: its thread is joined by Shutdown.
    auto* sampler = new Sampler(std::make_unique<CuptiBackend>(),
                                s.config().gpu_metrics_interval_ns, std::move(wanted), hooks);
    g_sampler.store(sampler, std::memory_order_release);
    sampler->SetRecording(s.recording());
  });
  return g_sampler.load(std::memory_order_acquire);
}

}  // namespace

bool GpuMetricsWanted() {
  Session& s = Session::Get();
  return s.active() && s.config().cuda && s.config().gpu_metrics_interval_ns > 0;
}

void GpuMetricsOnContext(void* cu_context) {
  try {
    if (!GpuMetricsWanted()) return;
    uint32_t device = 0;
    if (cuptiGetDeviceId(static_cast<CUcontext>(cu_context), &device) != CUPTI_SUCCESS) return;
    if (Sampler* s = StartSampler()) s->AddDevice(device);
  } catch (...) {
    // std::function / allocation failures: no metrics, the program runs on.
  }
}

void GpuMetricsSetRecording(bool on) {
  if (Sampler* s = g_sampler.load(std::memory_order_acquire)) s->SetRecording(on);
}

void GpuMetricsShutdown() {
  if (Sampler* s = g_sampler.load(std::memory_order_acquire)) s->Shutdown(/*at_exit=*/true);
}

}  // namespace stepscope::pm
