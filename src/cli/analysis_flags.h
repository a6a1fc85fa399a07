// Flags shared by the analysis commands (stats, steps, analyze, diff): the
// scope filters, the output format and the thread pool size. Header-only so
// that every cmd_*.cc stays a single file.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "analysis/model/scope.h"
#include "analysis/model/trace_model.h"
#include "analysis/output.h"
#include "analysis/rules/rules.h"
#include "analysis/whatif/untraced.h"
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
  p->Flag("--ceilings", "FILE",
          "this machine's stepscope bench results, for the machine constants the fixes are "
          "priced with (default ~/.cache/stepscope/ceilings.json; else the table of GPU models, "
          "docs/rules.md)");
}

// analyze and whatif (not diff, which compares two traced runs): the untraced step.
inline void AddUntracedFlag(ArgParser* p) {
  p->Flag("--untraced-step-ms", "MS",
          "the workload's own step time measured without the tracer: the replay's host time "
          "is scaled to it before pricing, so savings are in untraced ms (a traced host runs "
          "slower, its GPU does not). 'measured': the step a trace of 'profile --steps N' "
          "measured itself (its warm-up iterations before the window, when steady and "
          "shorter than the traced ones)");
  p->Switch("--keep-tracer-time",
            "price on the host time as traced: by default the replay removes the tracer's own "
            "time recorded with each CUDA call (its callbacks, Python stacks, NVTX handlers), "
            "so savings are estimated for the untraced program");
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

// Where the untraced step of the "untraced:" line came from: --untraced-step-ms, or the
// warm-up iterations the trace timed before its `profile --steps` window (whatif/untraced.h).
inline std::string UntracedSource(int measured_steps) {
  if (measured_steps <= 0) return " given";
  return " measured before the recording window (median of " + std::to_string(measured_steps) +
         (measured_steps == 1 ? " iteration" : " iterations") + ", tracer not recording)";
}

// The iterations a `profile --steps` trace timed before its window, when the
// pricing did not use them: one line for analyze's and whatif's text, else "".
inline std::string UntracedWindowLine(const TraceModel& m, int measured_steps_used,
                                      int64_t traced_step_ns) {
  if (measured_steps_used > 0) return "";
  const std::optional<UntracedSteps> u = MeasuredUntracedSteps(m);
  if (!u) return "";
  std::string s = "untraced iterations before the recording window: median " +
                  FormatDuration(u->median_ns) + " of " + std::to_string(u->steps) +
                  " (traced step " + FormatDuration(traced_step_ns) + ")";
  if (!u->steady()) {
    s += ", not steady (" + FormatFixed(u->max_over_min, 2) + "x apart)";
  } else if (!u->UsableFor(traced_step_ns)) {
    s += ", not shorter than the traced steps";
  } else {
    s += "; --untraced-step-ms measured prices at that host speed";
  }
  return s + "\n";
}

inline Status ParseUntracedFlag(const ArgParser& p, AnalyzeOptions* opt) {
  if (p.Get("--untraced-step-ms") == "measured") {
    opt->untraced_step_ns = kUntracedMeasured;
  } else if (p.Has("--untraced-step-ms")) {
    double ms = 0;
    if (!ParseDouble(p.Get("--untraced-step-ms"), &ms) || ms <= 0 || ms > 1e7) {
      return InvalidInput("--untraced-step-ms '" + p.Get("--untraced-step-ms") +
                          "': expected the untraced step in milliseconds > 0, e.g. 33.2, or "
                          "'measured'");
    }
    opt->untraced_step_ns = static_cast<int64_t>(ms * 1e6);
  }
  opt->keep_tracer_time = p.Has("--keep-tracer-time");
  return OkStatus();
}

// The machine constants (analysis/model/machine_constants.h) come from this
// machine's `stepscope bench` results for each GPU of the trace when the
// ceilings file (--ceilings FILE, default ~/.cache/stepscope/ceilings.json)
// has them, matched by uuid, else by name; else from the table of GPU models.
inline void ApplyCeilings(const ArgParser& p, const TraceModel& m, AnalyzeOptions* opt) {
  auto store = LoadCeilingsStore(p.Has("--ceilings") ? p.Get("--ceilings") : DefaultCeilingsPath());
  if (!store.ok()) return;
  for (const DeviceRecord& d : m.devices()) {
    auto c = FindCeilings(*store, m.String(d.name), d.uuid, nullptr);
    if (!c.ok()) continue;
    BenchResults b{c->gpu_name, c->host, c->measured_at, {}};
    for (const auto& [key, v] : c->values) b.values[key] = v.value;
    opt->bench[d.id] = std::move(b);
  }
}

}  // namespace stepscope
