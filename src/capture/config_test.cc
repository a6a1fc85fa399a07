#include "capture/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "common/env_contract.h"

namespace stepscope {
namespace {

TEST(CaptureConfig, DiagOffParts) {
  ::setenv("STEPSCOPE_DIAG_OFF", "api,stacks,sampling,bogus", 1);
  CaptureConfig c = CaptureConfig::FromEnv(nullptr);
  ::unsetenv("STEPSCOPE_DIAG_OFF");
  EXPECT_TRUE(c.diag_off.api);
  EXPECT_FALSE(c.python_stacks);
  EXPECT_TRUE(c.diag_off.sampling);
  EXPECT_FALSE(c.diag_off.memory);
  // Every name of the table, and the parts that are other settings.
  CaptureConfig d;
  for (const char* part : {"api", "sync", "overhead", "flush", "subscribe", "kernels", "memory",
                           "um", "nvtx", "sampling", "driver", "apiwork", "apiput", "none"})
    EXPECT_TRUE(d.SetDiagPart(part)) << part;
  EXPECT_FALSE(d.SetDiagPart("bogus"));
  EXPECT_TRUE(d.diag_off.api_work && d.diag_off.api_put && d.diag_off.driver && d.diag_off.um);
  EXPECT_FALSE(d.runtime_launches);
  d.SetDiagPart("rtlaunch_on");
  EXPECT_TRUE(d.runtime_launches);
  d.SetDiagPart("rtlaunch");
  EXPECT_FALSE(d.runtime_launches);
}

// Unified memory: the driver's totals by default; CUPTI's records only when a
// um-* category asks; STEPSCOPE_UM=driver drops those, =off everything.
TEST(CaptureConfig, UnifiedMemorySources) {
  ::unsetenv("STEPSCOPE_TRACE");
  CaptureConfig c = CaptureConfig::FromEnv(nullptr);
  EXPECT_TRUE(c.um && c.um_driver_totals);
  EXPECT_FALSE(c.um_migrations || c.um_gpu_faults || c.um_cpu_faults);
  ::setenv("STEPSCOPE_TRACE", "cuda,um-migrations,um-gpu-faults", 1);
  c = CaptureConfig::FromEnv(nullptr);
  EXPECT_TRUE(c.um_migrations && c.um_gpu_faults);
  EXPECT_FALSE(c.um_cpu_faults);
  ::setenv("STEPSCOPE_UM", "driver", 1);
  c = CaptureConfig::FromEnv(nullptr);
  EXPECT_TRUE(c.um && c.um_driver_totals);
  EXPECT_FALSE(c.um_migrations || c.um_gpu_faults);
  ::setenv("STEPSCOPE_UM", "off", 1);
  c = CaptureConfig::FromEnv(nullptr);
  EXPECT_FALSE(c.um || c.um_migrations || c.um_gpu_faults);
  ::unsetenv("STEPSCOPE_UM");
  ::setenv("STEPSCOPE_UM_DRIVER", "off", 1);
  c = CaptureConfig::FromEnv(nullptr);
  EXPECT_FALSE(c.um_driver_totals);
  ::unsetenv("STEPSCOPE_UM_DRIVER");
  ::unsetenv("STEPSCOPE_TRACE");
}

// STEPSCOPE_DETACH: on unless "off" (the tracer's own default too, for a
// process injected without the launcher); anything else is said and ignored.
TEST(CaptureConfig, DetachOutsideWindow) {
  EXPECT_TRUE(CaptureConfig::FromEnv(nullptr).detach_outside_window);
  ::setenv("STEPSCOPE_DETACH", "off", 1);
  EXPECT_FALSE(CaptureConfig::FromEnv(nullptr).detach_outside_window);
  ::setenv("STEPSCOPE_DETACH", "on", 1);
  EXPECT_TRUE(CaptureConfig::FromEnv(nullptr).detach_outside_window);
  ::setenv("STEPSCOPE_DETACH", "1", 1);
  std::string warning;
  EXPECT_TRUE(CaptureConfig::FromEnv(&warning).detach_outside_window);
  EXPECT_EQ(warning, "STEPSCOPE_DETACH='1' ignored (on, off); ");
  ::unsetenv("STEPSCOPE_DETACH");
  // --steps: the hook announces the window (STEPSCOPE_WINDOW_STEPS, the hook's variable).
  EXPECT_FALSE(CaptureConfig::FromEnv(nullptr).hook_window);
  ::setenv("STEPSCOPE_WINDOW_STEPS", "5:20", 1);
  EXPECT_TRUE(CaptureConfig::FromEnv(nullptr).hook_window);
  ::unsetenv("STEPSCOPE_WINDOW_STEPS");
}

// Every kind of window is one; the launcher writes STEPSCOPE_DETACH only with
// a window (on by default, off when asked), and the tracer reads it back.
TEST(CaptureConfig, DetachIsWrittenForWindowsOnly) {
  auto written = [](const CaptureConfig& c) {
    for (const auto& [name, value] : c.ToEnv()) {
      if (name == std::string(kEnvDetach)) return value;
    }
    return std::string("missing");
  };
  CaptureConfig whole;
  EXPECT_FALSE(whole.Windowed());
  EXPECT_EQ(written(whole), "");  // whole-run tracing: cleared, as today
  CaptureConfig delay, duration, profiler, nvtx;
  delay.delay_ns = 1;
  duration.duration_ns = 1;
  profiler.range = CaptureConfig::Range::kCudaProfilerApi;
  nvtx.range = CaptureConfig::Range::kNvtx;
  nvtx.range_nvtx_name = "step 3";
  for (const CaptureConfig* c : {&delay, &duration, &profiler, &nvtx}) {
    EXPECT_TRUE(c->Windowed());
    EXPECT_EQ(written(*c), "on");
  }
  profiler.detach_outside_window = false;
  EXPECT_EQ(written(profiler), "off");
  ::setenv(kEnvDetach, written(profiler).c_str(), 1);
  EXPECT_FALSE(CaptureConfig::FromEnv(nullptr).detach_outside_window);
  ::unsetenv(kEnvDetach);
  // --gpu-metrics keeps CUPTI attached (the PM sampling objects and a
  // cuptiFinalize have not been run together on a GPU).
  delay.gpu_metrics_interval_ns = 1'000'000;
  EXPECT_FALSE(delay.DetachesOutsideWindows());
  EXPECT_EQ(written(delay), "off");
}

// Recording window k uses set k mod n; every window starts from the base.
TEST(CaptureConfig, DiagCycleWindows) {
  ::setenv("STEPSCOPE_DIAG_CYCLE", "none;api;stacks,memory", 1);
  CaptureConfig c = CaptureConfig::FromEnv(nullptr);
  ::unsetenv("STEPSCOPE_DIAG_CYCLE");
  ASSERT_EQ(c.diag_cycle.size(), 3u);
  const CaptureConfig base = c;
  c.ApplyDiagCycle(base, 0);
  EXPECT_FALSE(c.diag_off.api);
  EXPECT_TRUE(c.python_stacks);
  c.ApplyDiagCycle(base, 1);
  EXPECT_TRUE(c.diag_off.api);
  EXPECT_TRUE(c.python_stacks);
  c.ApplyDiagCycle(base, 2);
  EXPECT_FALSE(c.diag_off.api);
  EXPECT_FALSE(c.python_stacks);
  EXPECT_TRUE(c.diag_off.memory);
  c.ApplyDiagCycle(base, 3);  // wraps to "none"
  EXPECT_FALSE(c.diag_off.memory);
  EXPECT_TRUE(c.python_stacks);
}

// The launcher's side (ToEnv) and the tracer's (FromEnv) of one contract: what
// is written is what is read back.
TEST(CaptureConfig, ToEnvRoundTrip) {
  CaptureConfig c;
  c.output_pattern = "/t/run_%q{RANK}";
  c.SetTraceCategories("nvtx,host,um,cuda,um-cpu-faults,bogus", nullptr);
  c.sample_hz = 500;
  c.python_stack_launch_every = 7;
  c.delay_ns = 20'000'000'000;
  c.range = CaptureConfig::Range::kNvtx;
  c.range_nvtx_name = "step 10";
  c.overwrite_before_ns = 123;
  c.collector = "@sock";
  c.collector_token = "tok";
  const auto env = c.ToEnv();
  for (const auto& [name, value] : env) {
    if (value.empty()) {
      ::unsetenv(name.c_str());
    } else {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  const CaptureConfig d = CaptureConfig::FromEnv(nullptr);
  for (const auto& [name, value] : env) ::unsetenv(name.c_str());
  EXPECT_EQ(c.TraceCategories(), "cuda,nvtx,host,um,um-cpu-faults");
  EXPECT_EQ(d.TraceCategories(), c.TraceCategories());
  EXPECT_EQ(d.TraceCategories(/*recorded_by_tracer_only=*/true), "cuda,nvtx");
  EXPECT_TRUE(d.um && d.um_at_start && d.um_cpu_faults && !d.memory && !d.host_mem);
  EXPECT_EQ(d.output_pattern, c.output_pattern);
  EXPECT_EQ(d.sample_hz, 500);
  EXPECT_EQ(d.PythonStacksText(), "launches=7");
  EXPECT_EQ(d.delay_ns, c.delay_ns);
  EXPECT_EQ(d.duration_ns, 0);
  EXPECT_EQ(d.RangeText(), "nvtx:step 10");
  EXPECT_EQ(d.overwrite_before_ns, 123);
  EXPECT_EQ(d.collector, "@sock");
  EXPECT_EQ(d.collector_token, "tok");
  // The defaults: STEPSCOPE_TRACE unset reads as cuda,nvtx,memory.
  EXPECT_EQ(CaptureConfig().TraceCategories(), "cuda,nvtx,memory");
  EXPECT_EQ(CaptureConfig().PythonStacksText(), "on");
}

// `profile -t none`: the tracer records no category. It used to read the empty
// list it was given as "unset" and record cuda,nvtx,memory.
TEST(CaptureConfig, TraceNoneRecordsNothing) {
  CaptureConfig c;
  c.SetTraceCategories("", nullptr);
  std::string warning;
  for (const auto& [name, value] : c.ToEnv()) {
    if (name == std::string(kEnvTrace)) {
      EXPECT_EQ(value, "none");
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  CaptureConfig d = CaptureConfig::FromEnv(&warning);
  EXPECT_EQ(d.TraceCategories(), "");
  EXPECT_FALSE(d.cuda || d.nvtx || d.memory);
  EXPECT_EQ(warning, "");
  ::setenv(kEnvTrace, "", 1);  // set but empty: none as well
  d = CaptureConfig::FromEnv(nullptr);
  EXPECT_EQ(d.TraceCategories(), "");
  ::unsetenv(kEnvTrace);
  EXPECT_EQ(CaptureConfig::FromEnv(nullptr).TraceCategories(), "cuda,nvtx,memory");
}

}  // namespace
}  // namespace stepscope
