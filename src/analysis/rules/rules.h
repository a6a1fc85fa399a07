// Expert rules (`stepscope analyze`, the HTML report's findings): each rule
// looks for one known cause of slow training steps and reports a Finding that
// says what happened, where (steps, NVTX range, time range), how much time it
// cost, and the fix. Findings are ranked by cost. docs/rules.md documents
// every rule: its evidence, its cost model and its threshold. Each rule is a
// unit in rules/ (rules/rule.h: its detection, its fix as a replay
// transformation, its text), listed once in rules/registry.cc.
//
// What is analyzed: the windows of the steady steps (complete, not warm-up:
// steps.h), or, without steps, the GPU span of the trace. Time-based rules look at one device: the
// one given, else the device with the most GPU busy time.
//
// GPU idle gaps (gaps.h) are owned by exactly one rule (the evidence):
//   sync-wait gaps  -> data_dependent_sync when the blocking call is a
//                      data-dependent host round trip (rules/rule.h, RoundTrip);
//                      else sync_memcpy / pageable_memcpy when it was such a
//                      copy, else host_sync. A blocking call outside
//                      every step range is handled like a host-wait gap (what
//                      the host did next decides);
//   host-wait gaps  -> data_loading when they end at a step's first GPU op, or
//                      the host was between steps or in a data-loading NVTX
//                      range;
//                   -> launch_bound when they fall in a stretch of kernels
//                      shorter than the time between their launches
//                      (per_param_optimizer when those kernels are launched
//                      in a per-parameter optimizer's or clipping's range);
//                   -> host_wait otherwise (grouped by the host's NVTX range).
// offload_copies (exposed pinned host<->device copies), fp32_gemm,
// recompute (activation checkpointing) and memory_capacity have their own
// evidence.
// Costs: every finding except memory_capacity is priced by replaying the
// steps with its fix applied (whatif/, docs/whatif.md): the cost is the
// simulated saving of the median step, so costs do not add up; the critical
// path of the median step may add host_bound.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/gaps.h"
#include "analysis/model/machine_constants.h"
#include "analysis/model/steps.h"
#include "analysis/model/summary.h"
#include "analysis/model/trace_model.h"
#include "common/status.h"

namespace stepscope {

struct FindingExample {
  int64_t step = -1;  // step number, -1 when outside steps
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string nvtx;  // innermost NVTX range of the host at that time
  int64_t cost_ns = 0;
};

// Per-rule data a finding carries from its rule's detection to its fix: each
// rule derives its own type (rules/rule.h).
struct FindingData {
  virtual ~FindingData() = default;
};

struct Finding {
  std::string rule;    // rule id, e.g. "data_loading"
  std::string title;   // what, one line
  std::string where;   // steps, NVTX range, device
  std::string detail;  // the evidence in numbers
  std::string fix;
  int64_t cost_ns = 0;                   // time lost in the analyzed windows
  double cost_pct = 0;                   // of the analyzed time
  int64_t cost_per_step_ns = 0;          // cost / complete steps (0 without steps)
  int64_t count = 0;                     // occurrences (gaps, calls, kernels)
  bool reported = true;                  // above the rule's threshold
  std::vector<FindingExample> examples;  // the costliest instances, up to 3
  // Evidence only (tensor_idle, memory_bound): what the hardware did, with no
  // cost model and no fix to replay; cost 0, ranked after the priced findings.
  bool evidence_only = false;
  // The GPU idle gaps this finding owns (the ownership table at the top), by cause
  // (gaps.h GapCause): over all findings they add up to the header's
  // host-wait and sync-wait. Zeros for a rule that owns no gap.
  int64_t gap_ns[4] = {0, 0, 0, 0};
  // Priced by what-if replay (whatif/pricing.h): the simulated median step
  // as traced and with the fix applied; 0/0 when the rule is not priced.
  int64_t step_before_ns = 0;
  int64_t step_after_ns = 0;
  std::string whatif;  // the transformation replayed, e.g. "remove 6 waits"
  // What bounds the median step once fixed ("host thread 608 (python3, main) 71%"),
  // and whether host threads hold most of it (then the price is at the traced
  // host's speed: HostSpeedCaveat, whatif/pricing.h).
  std::string bound_after;
  bool host_bound_after = false;
  // What the finding is about, for the pricing and the host evidence: api rows
  // (blocking calls), gpu_ops rows (copies, GEMMs, kernels) and host time spans
  // (of the launching thread, or as the rule says).
  std::vector<uint32_t> apis;
  std::vector<uint32_t> ops;
  struct Span {
    uint32_t tid;
    int64_t start_ns;
    int64_t end_ns;
  };
  std::vector<Span> host_spans;
  // The rule's own data for its fix (rules/<rule>.cc defines the type; null
  // when the rule needs none).
  std::shared_ptr<const FindingData> data;
};

struct OomModel;  // rules/oom.h

struct AnalyzeOptions {
  StepOptions steps;
  int device = -1;            // -1: the busiest device
  double min_cost_pct = 1.0;  // findings below this share of the analyzed time are dropped
  bool all = false;           // keep findings below their threshold too
  double memory_capacity_pct = 90.0;
  GapOptions gaps;
  // This machine's `stepscope bench` results, by device id of the trace, when
  // the CLI finds them: the machine constants (machine_constants.h) come from
  // them first, else from the table of GPU models.
  std::map<uint32_t, BenchResults> bench;
  // What stays of a data-loading wait with DataLoader workers: the training
  // thread still takes each batch from the workers' queue (unpickling, mapping
  // the tensors' shared memory, the pin-memory hand-off). bench/worker_fetch.py
  // measured 156-202 us per batch on the lent H100 and H200 hosts.
  int64_t worker_fetch_ns = 200'000;
  // The workload's own step time without the tracer (--untraced-step-ms; 0: not
  // given; kUntracedMeasured: the one the trace measured before its --steps
  // window, whatif/untraced.h): the replay's host time is scaled to it before
  // pricing (WhatIfEngine).
  int64_t untraced_step_ns = 0;
  // --keep-tracer-time: price on the host time as recorded, the tracer's own
  // time in it (api.tracer_ns) included; by default the replay removes it.
  bool keep_tracer_time = false;
  double batch_factor = 4.0;                  // the larger batch the host_bound finding prices
  bool price = true;                          // false: the rules' own cost models (no replay)
  std::shared_ptr<const OomModel> oom_model;  // --model ...: the planner prices the oom fixes
};

struct IdleSummary {
  int64_t analyzed_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t by_cause[4] = {0, 0, 0, 0};  // indexed by GapCause
  int64_t gaps = 0;
};

// The launching thread's time in one step, by what it did (rules_host.cc,
// docs/host.md): Python (running, outside CUDA calls), CUDA API calls,
// blocked in a sync (or a blocking copy), on the GIL, in the DataLoader, in
// another wait, and not observed / off-CPU for an unknown reason.
struct HostStepSplit {
  int64_t step = 0;
  uint32_t tid = 0;
  std::string source;  // samples, sched, waits, none
  int64_t step_ns = 0, python_ns = 0, cuda_api_ns = 0, sync_ns = 0, gil_ns = 0, dataloader_ns = 0,
          other_blocked_ns = 0, unknown_ns = 0;
  std::string top_python;  // "train.py:88 collate 33%, ..." (samples only)
};

struct Analysis {
  StepSet steps;
  int device = -1;  // the device the time-based rules looked at; -1: no GPU activity
  std::vector<Interval> windows;
  int64_t analyzed_ns = 0;
  int64_t complete_steps = 0;  // steady steps analyzed
  IdleSummary idle;
  // The analyzed device's machine constants the fixes were priced with.
  MachineConstants machine;
  std::vector<Finding> findings;  // ranked by cost, highest first
  // Rules that could not decide for lack of evidence in the trace, one line
  // each: "<rule>: <what is missing>" (docs/rules.md lists each rule's evidence).
  std::vector<std::string> undecided;
  // What-if replay of the steps (0 when not replayed): measured and
  // simulated median step, and the critical path of the median step.
  int64_t measured_step_ns = 0;
  int64_t simulated_step_ns = 0;
  // With AnalyzeOptions::untraced_step_ns (copied here; with kUntracedMeasured the
  // step the trace measured before its recording window, over
  // untraced_measured_steps iterations: whatif/untraced.h): the host-time factor
  // and the scaled replay's median step, which the findings are priced against.
  int64_t untraced_step_ns = 0;
  int untraced_measured_steps = 0;
  double host_scale = 1.0;
  int64_t scaled_step_ns = 0;
  // Overhead compensation (without untraced_step_ns): the tracer's own host
  // time the replay removed, per step (median), and the replay's median step
  // without it: the estimated untraced step the findings are priced against.
  int64_t tracer_ns_per_step = 0;
  int64_t estimated_untraced_step_ns = 0;
  std::string critical_path;  // one line, e.g. "host thread 608 (python3, main) 71% ..."
  bool host_bound = false;
  std::string whatif_error;  // why the replay was not done
  // Per steady step, when the trace has a host model (empty otherwise).
  std::vector<HostStepSplit> host_split;
};

// The rules in report order (rules/registry.cc): their ids and summaries.
struct RuleInfo {
  const char* id;
  const char* summary;
};
const std::vector<RuleInfo>& RuleList();

StatusOr<Analysis> Analyze(const TraceModel& model, const AnalyzeOptions& options);

// The machine constants of a device of the trace (machine_constants.h): its
// name in the devices table, this machine's bench results for it (`bench`, by
// device id, AnalyzeOptions::bench). No devices row: every constant unknown.
MachineConstants MachineConstantsOf(const TraceModel& m, int device,
                                    const std::map<uint32_t, BenchResults>& bench);

// kLoaderRangeName (common/step_names.h): the DataLoader range of `profile`.

// An NVTX range of data loading: "data", "DataLoader", "__next__",
// "prefetch", "load_batch"; whole words, never a C++ operator (aten::...) or a
// forward/backward range (DistributedDataParallel.forward, *_backward_data).
bool IsDataLoadingRangeName(std::string_view name);

}  // namespace stepscope
