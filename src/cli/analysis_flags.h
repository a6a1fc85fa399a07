// Flags shared by the analysis commands (stats, steps, analyze, diff): the
// scope filters, the output format and the thread pool size. Header-only so
// that every cmd_*.cc stays a single file.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/output.h"
#include "analysis/rules.h"
#include "analysis/scope.h"
#include "cli/args.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/table.h"
#include "roofline/ceilings.h"

namespace stepscope {

inline void AddScopeFlags(ArgParser* p) {
  p->Flag("--time-range", "START:END",
          "only events in this window; durations since the trace start, e.g. 2s:3.5s, 100ms:, :1s");
  p->Flag("--nvtx", "NAME",
          "only inside instances of the NVTX range NAME (GPU work by its launch)");
  p->Flag("--step", "N", "only inside step N (see 'stepscope steps')");
  p->Flag("--device", "D", "only GPU activity of device D");
}

inline void AddStepFlags(ArgParser* p) {
  p->Flag("--step-range", "REGEX",
          "NVTX ranges whose name matches REGEX are the steps (default: 'step N', then "
          "'ProfilerStep#N', then a repeating kernel sequence)");
}

inline void AddOutputFlags(ArgParser* p, bool jobs = true) {
  p->TableOutput();
  if (jobs) p->Flag("--jobs", "N", "traces processed in parallel (default: one per core)");
}

inline Status ParseScopeSpec(const ArgParser& p, ScopeSpec* spec) {
  spec->time_range = p.Get("--time-range");
  spec->nvtx = p.Get("--nvtx");
  spec->step_regex = p.Get("--step-range");
  int64_t v = 0;
  if (p.Has("--step")) {
    if (!ParseInt64(p.Get("--step"), &v) || v < 0) {
      return InvalidInput("--step '" + p.Get("--step") +
                          "': expected a step number, e.g. --step 12");
    }
    spec->step = v;
    spec->has_step = true;
  }
  if (p.Has("--device")) {
    if (!ParseInt64(p.Get("--device"), &v) || v < 0 || v > 65535) {
      return InvalidInput("--device '" + p.Get("--device") +
                          "': expected a device number, e.g. --device 0");
    }
    spec->device = static_cast<int>(v);
  }
  if (!spec->time_range.empty()) {
    int64_t a, b;
    RETURN_IF_ERROR(ParseTimeRange(spec->time_range, &a, &b));
  }
  return OkStatus();
}

inline Status ParseOutputFlags(const ArgParser& p, OutputSpec* spec, int* jobs) {
  RETURN_IF_ERROR(p.ParseTableOutput(spec));
  if (jobs) {
    *jobs = 0;
    int64_t v = 0;
    if (p.Has("--jobs")) {
      if (!ParseInt64(p.Get("--jobs"), &v) || v < 1 || v > 1024) {
        return InvalidInput("--jobs '" + p.Get("--jobs") + "': expected a number >= 1");
      }
      *jobs = static_cast<int>(v);
    }
  }
  return OkStatus();
}

// TraceModel::Load, with its time on stderr under -v.
inline StatusOr<std::unique_ptr<TraceModel>> LoadTrace(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = TraceModel::Load(path);
  if (m.ok()) {
    LogVerbose("%s: loaded in %.2f s", path.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return m;
}

// What-if pricing knobs shared by analyze, whatif and diff (docs/whatif.md).
inline void AddPricingFlags(ArgParser* p) {
  p->Flag("--worker-fetch-us", "US",
          "data_loading: what a worker-fed batch still costs the training thread (default: "
          "200, measured by bench/worker_fetch.py)",
          "200");
}

// analyze and whatif (not diff, which compares two traced runs): the untraced step.
inline void AddUntracedFlag(ArgParser* p) {
  p->Flag("--untraced-step-ms", "MS",
          "the workload's own step time measured without the tracer: the replay's host time "
          "is scaled to it before pricing, so savings are in untraced ms (a traced host runs "
          "slower, its GPU does not)");
}

inline Status ParsePricingFlags(const ArgParser& p, AnalyzeOptions* opt) {
  double us = 0;
  if (!ParseDouble(p.Get("--worker-fetch-us"), &us) || us < 0 || us > 1e7) {
    return InvalidInput("--worker-fetch-us '" + p.Get("--worker-fetch-us") +
                        "': expected microseconds >= 0, e.g. 200");
  }
  opt->worker_fetch_ns = static_cast<int64_t>(us * 1e3);
  return OkStatus();
}

inline Status ParseUntracedFlag(const ArgParser& p, AnalyzeOptions* opt) {
  if (p.Has("--untraced-step-ms")) {
    double ms = 0;
    if (!ParseDouble(p.Get("--untraced-step-ms"), &ms) || ms <= 0 || ms > 1e7) {
      return InvalidInput("--untraced-step-ms '" + p.Get("--untraced-step-ms") +
                          "': expected the untraced step in milliseconds > 0, e.g. 33.2");
    }
    opt->untraced_step_ns = static_cast<int64_t>(ms * 1e6);
  }
  return OkStatus();
}

// The what-if pricing of fp32 GEMMs uses this GPU's measured ceilings
// (`stepscope bench`) when the ceilings file has them; else the defaults.
inline void ApplyCeilings(const TraceModel& m, AnalyzeOptions* opt) {
  if (m.devices().empty()) return;
  const DeviceRecord& d = m.devices()[0];
  // The published host-link figures, by GPU name (Grace Hopper: NVLink-C2C;
  // other H100/H200: x86 over PCIe Gen5): the last resort of um_faults.
  const std::string gpu = m.String(d.name);
  const char* link =
      gpu.find("GH200") != std::string::npos                                           ? "GH200 C2C"
      : gpu.find("H100") != std::string::npos || gpu.find("H200") != std::string::npos ? "x86+H100"
                                                                                       : nullptr;
  for (const ReferenceFigure& f : ReferenceFigures()) {
    if (!link || std::string(f.system) != link) continue;
    if (std::string(f.key) == "h2d_pinned") opt->h2d_published_bytes_per_ns = f.value / 1e9;
    if (std::string(f.key) == "d2h_pinned") opt->d2h_published_bytes_per_ns = f.value / 1e9;
  }
  auto store = LoadCeilingsStore(DefaultCeilingsPath());
  if (!store.ok()) return;
  std::string how;
  auto c = FindCeilings(*store, m.String(d.name), d.uuid, &how);
  if (!c.ok()) return;
  opt->h2d_bytes_per_ns = std::max(0.0, c->Get("h2d_pinned") / 1e9);
  opt->d2h_bytes_per_ns = std::max(0.0, c->Get("d2h_pinned") / 1e9);
  const double bf16 = c->Get("tensor_bf16"), fp32 = c->Get("fp32"), tf32 = c->Get("tensor_tf32");
  if (bf16 <= 0 || fp32 <= 0) return;
  opt->tensor_core_ratio_fp32 = fp32 / bf16;
  if (tf32 > 0) opt->tensor_core_ratio_tf32 = tf32 / bf16;
  opt->ratio_source = "stepscope bench ceilings of " + c->gpu_name;
}

}  // namespace stepscope
