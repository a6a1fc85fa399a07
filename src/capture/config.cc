#include "capture/config.h"

#include <algorithm>
#include <cstdlib>

#include "capture/contract.h"
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
  if (!(v = env(kEnvTrace)).empty()) {
    c.cuda = c.nvtx = c.memory = false;
    for (const std::string& cat : Split(v, ',')) {
      std::string t = Trim(cat);
      if (t == "cuda") {
        c.cuda = true;
      } else if (t == "nvtx") {
        c.nvtx = true;
      } else if (t == "memory") {
        c.memory = true;
      } else if (t == "host") {
        // Host sampling is the collector's (STEPSCOPE_SAMPLE_HZ); nothing here.
      } else if (t == "host-mem") {
        c.host_mem = true;
      } else if (t == "um") {
        c.um = c.um_at_start = true;
      } else if (t == "um-migrations") {
        c.um_migrations = true;
      } else if (t == "um-gpu-faults") {
        c.um_gpu_faults = true;
      } else if (t == "um-cpu-faults") {
        c.um_cpu_faults = true;
      } else if (!t.empty() && warning) {
        *warning += "unknown trace category '" + t + "' ignored; ";
      }
    }
  }
  int64_t n = 0;
  if (ParseInt64(env(kEnvDelayNs), &n) && n > 0) c.delay_ns = n;
  if (ParseInt64(env(kEnvDurationNs), &n) && n > 0) c.duration_ns = n;
  if (ParseInt64(env(kEnvOverwriteBeforeNs), &n) && n > 0) c.overwrite_before_ns = n;
  if (ParseInt64(env("STEPSCOPE_BUFFER_MB"), &n) && n >= 8)
    c.max_buffer_memory = static_cast<size_t>(n) << 20;
  if (ParseInt64(env("STEPSCOPE_COMMIT_MS"), &n) && n >= 10) c.commit_interval_ns = n * 1'000'000;
  if (ParseInt64(env("STEPSCOPE_RING_MB"), &n) && n >= 1 && n <= 4096)
    c.ring_bytes = static_cast<size_t>(n) << 20;
  c.collector = env(kEnvCollector);
  c.collector_token = env(kEnvCollectorToken);
  if (env("STEPSCOPE_UM") == "off")
    c.um = c.um_migrations = c.um_gpu_faults = c.um_cpu_faults = false;
  if (env("STEPSCOPE_UM") == "driver") c.um_migrations = c.um_gpu_faults = c.um_cpu_faults = false;
  if (env("STEPSCOPE_UM_DRIVER") == "off") c.um_driver_totals = false;
  if (env("STEPSCOPE_CUPTI_ZEROED") == "0") c.zeroed_buffers = false;
  if (ParseInt64(env("STEPSCOPE_DEVICE_BUFFER_MB"), &n) && n >= 1 && n <= 4096)
    c.device_buffer_bytes = static_cast<size_t>(n) << 20;
  if (env("STEPSCOPE_API_MODE") == "activity") c.api_via_callbacks = false;
  if (env("STEPSCOPE_RUNTIME_LAUNCHES") == "1") c.runtime_launches = true;
  if (ParseInt64(env(kEnvSampleHz), &n) && n >= 0 && n <= 10000) {
    c.sample_hz = static_cast<int>(n);
  }
  v = env(kEnvPythonStacks);
  if (v == "off") {
    c.python_stacks = false;
  } else if (StartsWith(v, "launches=") && ParseInt64(v.substr(9), &n) && n >= 1) {
    c.python_stack_launch_every = static_cast<int>(std::min<int64_t>(n, 1 << 30));
  } else if (!v.empty() && v != "on" && warning) {
    *warning += "STEPSCOPE_PYTHON_STACKS='" + v + "' ignored (on, off, launches=N); ";
  }
  if (env("STEPSCOPE_SYNC_MODE") == "cupti") c.sync_from_api = false;
  for (const std::string& part : Split(env("STEPSCOPE_DIAG_OFF"), ',')) c.SetDiagPart(part);
  if (!(v = env("STEPSCOPE_DIAG_CYCLE")).empty()) c.diag_cycle = Split(v, ';');
  c.diag_detach = env("STEPSCOPE_DIAG_DETACH") == "1";
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
                {"apiput", &DiagOff::api_put}};
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
