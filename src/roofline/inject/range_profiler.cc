// Profile mode: hardware counters for selected kernel launches with the CUPTI
// range profiler (CUDA 13 cuptiRangeProfiler* API).
//
// How: every driver kernel-launch call is intercepted (API callbacks). When
// a launch matches a target (kernel name, grid, block) that still wants
// instances, the callback on entry starts the range profiler in auto-range,
// kernel-replay mode, so that this one launch becomes one range and CUPTI
// replays it once per counter pass (saving and restoring the memory it
// touches, so the program's results do not change); on exit it stops,
// decodes, evaluates the metrics and writes one result line. All other
// launches run untouched.
//
// Auto range profiles every kernel of the context while started, so the
// profiled launch must be alone: launches on other threads take a shared
// lock for the duration of their launch call, the profiled launch an
// exclusive one. The range count of every decode is reported so the CLI can
// flag an instance that is not exactly one kernel.
//
// What is collected depends on STEPSCOPE_ROOFLINE_GROUP: "all" (default)
// every metric, in many passes by kernel replay; "memory" only time and
// memory traffic, in one pass, so the launch runs once in the program's own
// cache state. Kernel replay restores the kernel's memory before every pass
// after the first and leaves L2 full of lines the restore wrote: counted in
// such a replay, DRAM bytes of a layernorm read 62-85% above ncu's. The CLI
// runs the program once per group and takes time and bytes from the memory
// run (roofline_report.cc); FLOP counts do not depend on cache state. Before
// each memory-only launch L2 is flushed (l2_flush.h), as ncu's default
// --cache-control all does: without it a layernorm whose input an earlier
// kernel left in L2 counted 0.1 MB read and 9.3 MB written (other kernels'
// dirty lines), ncu 12.6 MB read. STEPSCOPE_ROOFLINE_CACHE=none: no flush. (One
// range profiler object cannot switch configs: on the H200 a second
// cuptiRangeProfilerSetConfig left every FLOP counter of later launches at
// zero, and re-creating the object inside the launch callback killed the
// program.)
//
// The one-time setup (chip name, counter availability, metric config image,
// counter data image) happens at the first matching launch, in its context.
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/env_contract.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "roofline/inject/inject.h"
#include "roofline/inject/l2_flush.h"
#include "roofline/profile_io.h"
#include "roofline/roofline_model.h"

namespace stepscope::inject {

namespace {

constexpr size_t kMaxRanges = 8;

struct Profiler {
  ProfileTargets targets;
  std::vector<int> seen;      // matching launches per target
  std::vector<int> profiled;  // instances profiled per target
  std::mutex mu;              // guards seen/profiled/launch_counts/match cache
  std::unordered_map<std::string, int64_t> launch_counts;         // per kernel function
  std::unordered_map<std::string, std::vector<int>> match_cache;  // symbol -> candidate targets
  std::shared_mutex launch_lock;
  std::atomic<bool> disabled{false};
  std::atomic<int> remaining{0};

  // Range profiler state (set up once, in the first profiled context).
  CUcontext ctx = nullptr;
  CUpti_RangeProfiler_Object* object = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::string> metrics;  // this run's: all, or time and memory only
  std::vector<const char*> metric_ptrs;
  std::vector<uint8_t> config;
  std::vector<uint8_t> counter_data;
  bool memory_only = false;  // STEPSCOPE_ROOFLINE_GROUP=memory
  bool flush_l2 = true;      // before memory-only launches; STEPSCOPE_ROOFLINE_CACHE=none: no
};
Profiler* g = nullptr;

// What the entry callback of this thread's current launch did.
struct Pending {
  char lock = 'n';  // 'n' none, 's' shared, 'x' exclusive (profiled)
  int target = -1;
  int64_t launch_index = -1;
  std::string name;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
};
thread_local std::vector<Pending> t_pending;
thread_local bool t_inside_profiled = false;

std::string CuptiErrorText(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "unknown";
}

bool Fail(CUptiResult r, const std::string& what) {
  if (r == CUPTI_SUCCESS) return false;
  ReportError(
      ExplainCuptiError(static_cast<int>(r), what + " (" + CuptiErrorText(r) + ")", MpsActive()),
      static_cast<int>(r));
  g->disabled = true;
  return true;
}

// Candidate targets for a kernel function, cached per symbol.
const std::vector<int>& Candidates(const std::string& symbol) {
  auto it = g->match_cache.find(symbol);
  if (it != g->match_cache.end()) return it->second;
  std::vector<int> c;
  std::string demangled = Demangle(symbol);
  for (size_t i = 0; i < g->targets.kernels.size(); ++i) {
    const KernelTarget& t = g->targets.kernels[i];
    bool match =
        !t.mangled.empty() ? t.mangled == symbol : (t.name == demangled || t.name == symbol);
    if (match) c.push_back(static_cast<int>(i));
  }
  return g->match_cache.emplace(symbol, std::move(c)).first->second;
}

bool InitCounterData() {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params di{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  di.pRangeProfilerObject = g->object;
  di.pCounterData = g->counter_data.data();
  di.counterDataSize = g->counter_data.size();
  return !Fail(cuptiRangeProfilerCounterDataImageInitialize(&di),
               "cuptiRangeProfilerCounterDataImageInitialize");
}

bool SetUp(CUcontext ctx) {
  // Initialized here, at the first profiled launch, rather than inside cuInit
  // (where InitializeInjection runs) when the driver is not fully up yet.
  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (Fail(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize")) return false;
  uint32_t device = 0;
  if (Fail(cuptiGetDeviceId(ctx, &device), "cuptiGetDeviceId")) return false;
  CUpti_Profiler_DeviceSupported_Params sup{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  sup.cuDevice = static_cast<CUdevice>(device);
  sup.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (cuptiProfilerDeviceSupported(&sup) == CUPTI_SUCCESS &&
      sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    std::string why = "this device does not support counter profiling:";
    if (sup.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      why += " architecture (needs Volta or newer);";
    if (sup.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) why += " vGPU profiling disabled;";
    if (sup.vGpu == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) why += " vGPU;";
    if (sup.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      why += " confidential computing;";
    if (sup.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " CMP device;";
    if (sup.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " WSL;";
    if (sup.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why += " SLI;";
    if (MpsActive()) why += " (MPS is active)";
    ReportError(why, static_cast<int>(CUPTI_ERROR_NOT_SUPPORTED));
    g->disabled = true;
    return false;
  }
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device;
  if (Fail(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName")) return false;

  CUpti_Profiler_GetCounterAvailability_Params avail{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = ctx;
  if (Fail(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability"))
    return false;
  std::vector<uint8_t> image(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = image.data();
  if (Fail(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability"))
    return false;

  CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = chip.pChipName;
  hi.pCounterAvailabilityImage = image.data();
  if (Fail(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize")) return false;
  g->host = hi.pHostObject;

  // The metric list: the fixed ones this chip has, plus every tensor-ops
  // counter it has (names differ between architectures).
  std::vector<std::string> base;
  for (CUpti_MetricType type :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params bm{
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    bm.pHostObject = g->host;
    bm.metricType = type;
    if (cuptiProfilerHostGetBaseMetrics(&bm) != CUPTI_SUCCESS) continue;
    for (size_t i = 0; i < bm.numMetrics; ++i) base.emplace_back(bm.ppMetricNames[i]);
  }
  auto has_base = [&](const std::string& m) {
    std::string b = m.substr(0, m.rfind('.'));
    for (const std::string& x : base) {
      if (x == b) return true;
    }
    return false;
  };
  std::vector<std::string> metrics;
  for (const std::string& m : FixedMetricNames()) {
    if (base.empty() || has_base(m)) {
      metrics.push_back(m);
    } else {
      WriteResultLine(
          MessageLine({false, 0, "metric " + m + " does not exist on " + chip.pChipName}));
    }
  }
  for (const std::string& b : base) {
    if (IsTensorOpsMetric(b)) metrics.push_back(b + ".sum");
  }
  for (const std::string& m : metrics) {
    if (!g->memory_only || IsMemoryGroupMetric(m)) g->metrics.push_back(m);
  }
  for (const std::string& m : g->metrics) g->metric_ptrs.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = g->host;
  add.ppMetricNames = g->metric_ptrs.data();
  add.numMetrics = g->metric_ptrs.size();
  if (Fail(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics"))
    return false;
  CUpti_Profiler_Host_GetConfigImageSize_Params cs{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cs.pHostObject = g->host;
  if (Fail(cuptiProfilerHostGetConfigImageSize(&cs), "cuptiProfilerHostGetConfigImageSize"))
    return false;
  g->config.resize(cs.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params ci{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  ci.pHostObject = g->host;
  ci.pConfigImage = g->config.data();
  ci.configImageSize = g->config.size();
  if (Fail(cuptiProfilerHostGetConfigImage(&ci), "cuptiProfilerHostGetConfigImage")) return false;
  CUpti_Profiler_Host_GetNumOfPasses_Params np{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.pConfigImage = g->config.data();
  np.configImageSize = g->config.size();
  cuptiProfilerHostGetNumOfPasses(&np);

  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = ctx;
  if (Fail(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable")) return false;
  g->object = en.pRangeProfilerObject;
  g->ctx = ctx;

  CUpti_RangeProfiler_GetCounterDataSize_Params ds{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pRangeProfilerObject = g->object;
  ds.pMetricNames = g->metric_ptrs.data();
  ds.numMetrics = g->metric_ptrs.size();
  ds.maxNumOfRanges = kMaxRanges;
  ds.maxNumRangeTreeNodes = kMaxRanges;
  if (Fail(cuptiRangeProfilerGetCounterDataSize(&ds), "cuptiRangeProfilerGetCounterDataSize"))
    return false;
  g->counter_data.assign(ds.counterDataSize, 0);
  if (!InitCounterData()) return false;
  CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = g->object;
  sc.pConfig = g->config.data();
  sc.configSize = g->config.size();
  sc.pCounterDataImage = g->counter_data.data();
  sc.counterDataImageSize = g->counter_data.size();
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = kMaxRanges;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  if (Fail(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig")) return false;

  ProfileDevice dev;
  DeviceIdentity(static_cast<int>(device), &dev.name, &dev.uuid);
  dev.chip = chip.pChipName;
  dev.metrics = g->metrics;
  dev.passes = static_cast<int>(np.numOfPasses);
  WriteResultLine(DeviceLine(dev));
  return true;
}

// Decodes the ranges of the last start/stop and writes the instance line.
void Collect(const Pending& p) {
  CUpti_RangeProfiler_DecodeData_Params dd{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dd.pRangeProfilerObject = g->object;
  if (Fail(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData")) return;
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = g->counter_data.data();
  info.counterDataImageSize = g->counter_data.size();
  if (Fail(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo"))
    return;
  ProfileInstance inst;
  inst.target = p.target;
  inst.launch_index = p.launch_index;
  inst.name = p.name;
  for (int d = 0; d < 3; ++d) {
    inst.grid[d] = p.grid[d];
    inst.block[d] = p.block[d];
  }
  inst.ranges = static_cast<int>(info.numTotalRanges);
  inst.group = g->memory_only ? "memory" : "all";
  std::vector<double> values(g->metric_ptrs.size());
  for (size_t r = 0; r < info.numTotalRanges; ++r) {
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = g->host;
    ev.pCounterDataImage = g->counter_data.data();
    ev.counterDataImageSize = g->counter_data.size();
    ev.rangeIndex = r;
    ev.ppMetricNames = g->metric_ptrs.data();
    ev.numMetrics = g->metric_ptrs.size();
    ev.pMetricValues = values.data();
    if (Fail(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues"))
      return;
    for (size_t i = 0; i < values.size(); ++i) inst.counters[g->metrics[i]] += values[i];
  }
  if (dd.numOfRangeDropped > 0) {
    WriteResultLine(
        MessageLine({false, 0,
                     "launch " + std::to_string(p.launch_index) + " of " + p.name + ": " +
                         std::to_string(dd.numOfRangeDropped) + " ranges dropped"}));
  }
  WriteResultLine(InstanceLine(inst));
  InitCounterData();
}

void OnEnter(CUpti_CallbackId cbid, const CUpti_CallbackData* d) {
  Pending p;
  if (t_inside_profiled || g->disabled || g->remaining.load() <= 0) {
    t_pending.push_back(p);
    return;
  }
  std::string symbol = d->symbolName ? d->symbolName : "";
  LaunchDims(cbid, d->functionParams, p.grid, p.block);
  {
    std::lock_guard<std::mutex> lock(g->mu);
    p.launch_index = g->launch_counts[symbol]++;
    for (int t : Candidates(symbol)) {
      const KernelTarget& k = g->targets.kernels[static_cast<size_t>(t)];
      if (!std::equal(k.grid, k.grid + 3, p.grid) || !std::equal(k.block, k.block + 3, p.block))
        continue;
      if (g->profiled[static_cast<size_t>(t)] >= g->targets.instances) continue;
      if (g->seen[static_cast<size_t>(t)]++ < g->targets.skip) continue;
      g->profiled[static_cast<size_t>(t)]++;
      p.target = t;
      break;
    }
  }
  if (p.target < 0) {
    g->launch_lock.lock_shared();
    p.lock = 's';
    t_pending.push_back(p);
    return;
  }
  g->launch_lock.lock();
  p.lock = 'x';
  p.name = symbol;
  t_inside_profiled = true;
  if (!g->object) {
    if (!SetUp(d->context)) {
      t_inside_profiled = false;
      g->launch_lock.unlock();
      p.lock = 'n';
      t_pending.push_back(p);
      return;
    }
  } else if (d->context != g->ctx) {
    WriteResultLine(MessageLine({false, 0,
                                 "launch " + std::to_string(p.launch_index) + " of " + symbol +
                                     " is in another CUDA context; only the first profiled "
                                     "context is supported, skipped"}));
    t_inside_profiled = false;
    g->launch_lock.unlock();
    p.lock = 'n';
    t_pending.push_back(p);
    return;
  }
  CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  st.pRangeProfilerObject = g->object;
  if (g->memory_only && g->flush_l2) {
    std::string error;
    if (!FlushL2(d->context, &error)) {
      g->flush_l2 = false;
      WriteResultLine(MessageLine({false, 0, "no L2 flush before profiled launches: " + error}));
    }
  }
  if (Fail(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart")) {
    t_inside_profiled = false;
    g->launch_lock.unlock();
    p.lock = 'n';
  }
  t_pending.push_back(p);
}

void OnExit() {
  if (t_pending.empty()) return;
  Pending p = t_pending.back();
  t_pending.pop_back();
  if (p.lock == 's') {
    g->launch_lock.unlock_shared();
    return;
  }
  if (p.lock != 'x') return;
  CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  sp.pRangeProfilerObject = g->object;
  if (!Fail(cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop")) {
    if (!sp.isAllPassSubmitted) {
      WriteResultLine(MessageLine({false, 0,
                                   "launch " + std::to_string(p.launch_index) + " of " + p.name +
                                       ": not all counter passes were submitted"}));
    }
    Collect(p);
  }
  g->remaining.fetch_sub(1);
  t_inside_profiled = false;
  g->launch_lock.unlock();
}

}  // namespace

bool ProfileStart(CUpti_SubscriberHandle sub) {
  const char* path = std::getenv(kEnvRooflineTargets);
  if (!path || !*path) {
    ReportError("profile mode needs STEPSCOPE_ROOFLINE_TARGETS (the kernels to profile)", 0);
    return false;
  }
  auto text = ReadFile(path);
  if (!text.ok()) {
    ReportError(text.status().message(), 0);
    return false;
  }
  auto targets = ParseTargets(*text);
  if (!targets.ok()) {
    ReportError(std::string(path) + ": " + targets.status().message(), 0);
    return false;
  }
  g = new Profiler();
  g->targets = std::move(*targets);
  g->seen.assign(g->targets.kernels.size(), 0);
  g->profiled.assign(g->targets.kernels.size(), 0);
  const char* group = std::getenv(kEnvRooflineGroup);
  g->memory_only = group && std::string(group) == "memory";
  const char* cache = std::getenv(kEnvRooflineCache);
  g->flush_l2 = !(cache && std::string(cache) == "none");
  g->remaining = static_cast<int>(g->targets.kernels.size()) * std::max(1, g->targets.instances);
  CUptiResult r = EnableDriverLaunchCallbacks(sub);
  if (r != CUPTI_SUCCESS) {
    ReportError(ExplainCuptiError(static_cast<int>(r), "starting the CUPTI profiler", MpsActive()),
                static_cast<int>(r));
    return false;
  }
  return true;
}

void ProfileCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!g || domain != CUPTI_CB_DOMAIN_DRIVER_API || !IsDriverLaunch(cbid)) return;
  auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (d->callbackSite == CUPTI_API_ENTER) {
    OnEnter(cbid, d);
  } else {
    OnExit();
  }
}

void ProfileFinish() {
  if (!g) return;
  ReleaseL2Flush();
  std::lock_guard<std::mutex> lock(g->mu);
  for (size_t i = 0; i < g->targets.kernels.size(); ++i) {
    if (g->profiled[i] == 0) {
      WriteResultLine(MessageLine(
          {false, 0,
           "kernel " + std::to_string(i) + " (" + g->targets.kernels[i].name +
               ") was never launched with grid " + Dim3Text(g->targets.kernels[i].grid) +
               " block " + Dim3Text(g->targets.kernels[i].block)}));
    }
  }
}

}  // namespace stepscope::inject
