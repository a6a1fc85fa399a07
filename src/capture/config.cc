#include "capture/config.h"

#include <algorithm>
#include <cstdlib>

#include "common/env_contract.h"
#include "common/strings.h"

namespace stepscope {

CaptureConfig CaptureConfig::FromEnv(std::string* warning) {
  CaptureConfig c;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  std::string v;
  if (!(v = env(kEnvOutput)).empty()) c.output_pattern = v;
  // Set at all, it is the list: "none" (or empty) records no category. Unset:
  // the defaults.
  if (const char* t = std::getenv(kEnvTrace)) c.SetTraceCategories(t, warning);
  int64_t n = 0;
  if (ParseInt64(env(kEnvDelayNs), &n) && n > 0) c.delay_ns = n;
  if (ParseInt64(env(kEnvDurationNs), &n) && n > 0) c.duration_ns = n;
  if (ParseInt64(env(kEnvOverwriteBeforeNs), &n) && n > 0) c.overwrite_before_ns = n;
  if (ParseInt64(env(kEnvBufferMb), &n) && n >= 8)
    c.max_buffer_memory = static_cast<size_t>(n) << 20;
  if (ParseInt64(env(kEnvCommitMs), &n) && n >= 10) c.commit_interval_ns = n * 1'000'000;
  if (ParseInt64(env(kEnvRingMb), &n) && n >= 1 && n <= 4096)
    c.ring_bytes = static_cast<size_t>(n) << 20;
  if (ParseInt64(env(kEnvGpuMetrics), &n) && n >= kGpuMetricsMinNs && n <= kGpuMetricsMaxNs)
    c.gpu_metrics_interval_ns = n;
  c.collector = env(kEnvCollector);
  c.collector_token = env(kEnvCollectorToken);
  if (env(kEnvUm) == "off") c.um = c.um_migrations = c.um_gpu_faults = c.um_cpu_faults = false;
  if (env(kEnvUm) == "driver") c.um_migrations = c.um_gpu_faults = c.um_cpu_faults = false;
  if (env(kEnvUmDriver) == "off") c.um_driver_totals = false;
  if (env(kEnvCuptiZeroed) == "0") c.zeroed_buffers = false;
  if (ParseInt64(env(kEnvDeviceBufferMb), &n) && n >= 1 && n <= 4096)
    c.device_buffer_bytes = static_cast<size_t>(n) << 20;
  if (env(kEnvApiMode) == "activity") c.api_via_callbacks = false;
  if (env(kEnvRuntimeLaunches) == "1") c.runtime_launches = true;
  if (ParseInt64(env(kEnvSampleHz), &n) && n >= 0 && n <= 10000) {
    c.sample_hz = static_cast<int>(n);
  }
  v = env(kEnvPythonStacks);
  if (v == "off") {
    c.python_stacks = false;
  } else if (StartsWith(v, "launches=") && ParseInt64(v.substr(9), &n) && n >= 1) {
    c.python_stack_launch_every = static_cast<int>(std::min<int64_t>(n, 1 << 30));
  } else if (!v.empty() && v != "on" && warning) {
    *warning += std::string(kEnvPythonStacks) + "='" + v + "' ignored (on, off, launches=N); ";
  }
  if (env(kEnvSyncMode) == "cupti") c.sync_from_api = false;
  for (const std::string& part : Split(env(kEnvDiagOff), ',')) c.SetDiagPart(part);
  if (!(v = env(kEnvDiagCycle)).empty()) c.diag_cycle = Split(v, ';');
  v = env(kEnvDetach);
  if (v == "off") {
    c.detach_outside_window = false;
  } else if (!v.empty() && v != "on" && warning) {
    *warning += std::string(kEnvDetach) + "='" + v + "' ignored (on, off); ";
  }
  c.hook_window = !env(kEnvWindowSteps).empty();
  v = env(kEnvCaptureRange);
  if (v == "cudaProfilerApi") {
    c.range = Range::kCudaProfilerApi;
  } else if (StartsWith(v, "nvtx:") && v.size() > 5) {
    c.range = Range::kNvtx;
    c.range_nvtx_name = v.substr(5);
  } else if (!v.empty() && warning) {
    *warning += "unknown capture range '" + v + "' ignored; ";
  }
  return c;
}

namespace {

// STEPSCOPE_TRACE_CATEGORIES with the fields they set.
struct CategoryField {
  std::string_view name;
  bool CaptureConfig::*field;
  bool recorded_by_tracer;
};
#define STEPSCOPE_CATEGORY_FIELD(name, field, in_meta) {name, &CaptureConfig::field, in_meta},
constexpr CategoryField kCategoryFields[] = {STEPSCOPE_TRACE_CATEGORIES(STEPSCOPE_CATEGORY_FIELD)};
#undef STEPSCOPE_CATEGORY_FIELD

}  // namespace

void CaptureConfig::SetTraceCategories(std::string_view list, std::string* warning) {
  for (const CategoryField& f : kCategoryFields) this->*f.field = false;
  // Unified memory comes with cuda whatever the categories; `um` only moves
  // its start (um_at_start).
  um = true;
  for (const std::string& cat : Split(std::string(list), ',')) {
    const std::string t = Trim(cat);
    bool known = false;
    for (const CategoryField& f : kCategoryFields) {
      if (t == f.name) known = this->*f.field = true;
    }
    if (!known && !t.empty() && t != "none" && warning) {
      *warning += "unknown trace category '" + t + "' ignored; ";
    }
  }
}

std::string CaptureConfig::TraceCategories(bool recorded_by_tracer_only) const {
  std::string out;
  for (const CategoryField& f : kCategoryFields) {
    if (!(this->*f.field) || (recorded_by_tracer_only && !f.recorded_by_tracer)) continue;
    if (!out.empty()) out += ',';
    out += f.name;
  }
  return out;
}

std::string CaptureConfig::PythonStacksText() const {
  if (!python_stacks) return "off";
  if (python_stack_launch_every > 0) return "launches=" + std::to_string(python_stack_launch_every);
  return "on";
}

std::string CaptureConfig::RangeText() const {
  switch (range) {
    case Range::kCudaProfilerApi:
      return "cudaProfilerApi";
    case Range::kNvtx:
      return "nvtx:" + range_nvtx_name;
    case Range::kNone:
      break;
  }
  return "";
}

bool CaptureConfig::ParseGpuMetrics(std::string_view spec, int64_t* interval_ns) {
  if (spec == "off" || spec == "none" || spec == "false") {
    *interval_ns = 0;
    return true;
  }
  if (spec == "on" || spec == "true" || spec == "all") {
    *interval_ns = kGpuMetricsDefaultNs;
    return true;
  }
  int64_t ns = 0;
  if (!ParseDurationNs(spec, &ns) || ns < kGpuMetricsMinNs || ns > kGpuMetricsMaxNs) return false;
  *interval_ns = ns;
  return true;
}

std::vector<std::pair<std::string, std::string>> CaptureConfig::ToEnv() const {
  auto positive = [](int64_t v) { return v > 0 ? std::to_string(v) : std::string(); };
  return {{kEnvOutput, output_pattern},
          {kEnvTrace, TraceCategories().empty() ? "none" : TraceCategories()},
          {kEnvSampleHz, std::to_string(sample_hz)},
          {kEnvPythonStacks, PythonStacksText()},
          {kEnvDelayNs, positive(delay_ns)},
          {kEnvDurationNs, positive(duration_ns)},
          {kEnvCaptureRange, RangeText()},
          {kEnvDetach, !Windowed()                ? ""
                       : DetachesOutsideWindows() ? "on"
                                                  : "off"},
          {kEnvGpuMetrics, positive(gpu_metrics_interval_ns)},
          {kEnvOverwriteBeforeNs, positive(overwrite_before_ns)},
          {kEnvCollector, collector},
          {kEnvCollectorToken, collector_token}};
}

bool CaptureConfig::SetDiagPart(std::string_view part) {
  static constexpr struct {
    std::string_view name;
    bool DiagOff::*field;
  } kParts[] = {{"api", &DiagOff::api},
                {"sync", &DiagOff::sync},
                {"overhead", &DiagOff::overhead},
                {"flush", &DiagOff::flush},
                {"subscribe", &DiagOff::subscribe},
                {"kernels", &DiagOff::kernels},
                {"memory", &DiagOff::memory},
                {"um", &DiagOff::um},
                {"nvtx", &DiagOff::nvtx},
                {"sampling", &DiagOff::sampling},
                {"driver", &DiagOff::driver},
                {"apiwork", &DiagOff::api_work},
                {"apiput", &DiagOff::api_put},
                {"gpumetrics", &DiagOff::gpu_metrics}};
  for (const auto& p : kParts) {
    if (part == p.name) return diag_off.*p.field = true;
  }
  // Parts that are other settings: launches from both domains or the driver
  // domain only; no Python stacks.
  if (part == "rtlaunch" || part == "rtlaunch_on") {
    runtime_launches = part == "rtlaunch_on";
    return true;
  }
  if (part == "stacks") {
    python_stacks = false;
    return true;
  }
  return part == "none";
}

void CaptureConfig::ApplyDiagCycle(const CaptureConfig& base, uint64_t k) {
  if (diag_cycle.empty()) return;
  diag_off = base.diag_off;
  runtime_launches = base.runtime_launches;
  python_stacks = base.python_stacks;
  for (const std::string& part : Split(diag_cycle[k % diag_cycle.size()], ',')) {
    SetDiagPart(Trim(part));
  }
}

}  // namespace stepscope
