// Expert rules (`stepscope analyze`, the HTML report's findings): each rule
// looks for one known cause of slow training steps and reports a Finding that
// says what happened, where (steps, NVTX range, time range), how much time it
// cost, and the fix. Findings are ranked by cost. docs/rules.md documents
// every rule: its evidence, its cost model and its threshold.
//
// What is analyzed: the windows of the steady steps (complete, not warm-up:
// steps.h), or, without steps, the GPU span of the trace. Time-based rules look at one device: the
// one given, else the device with the most GPU busy time.
//
// GPU idle gaps (gaps.h) are owned by exactly one rule, so their costs add up:
//   sync-wait gaps  -> sync_memcpy / pageable_memcpy when the blocking call was
//                      such a copy, else host_sync; and the later host-wait
//                      gaps of that step (the GPU queue stayed empty). A
//                      blocking call outside every step range is handled
//                      like a host-wait gap (what the host did next decides);
//   host-wait gaps  -> data_loading when they end at a step's first GPU op, or
//                      the host was between steps or in a data-loading NVTX
//                      range, and the later host-wait gaps of such a starved
//                      step (the GPU queue stayed empty);
//                   -> launch_bound when they fall in a stretch of kernels
//                      shorter than the time between their launches;
//                   -> host_wait otherwise (grouped by the host's NVTX range).
// offload_copies (exposed pinned host<->device copies), fp32_gemm and
// memory_capacity have their own cost models, which may overlap with the
// gap rules' costs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/gaps.h"
#include "analysis/steps.h"
#include "analysis/summary.h"
#include "analysis/trace_model.h"
#include "common/status.h"

namespace stepscope {

struct FindingExample {
  int64_t step = -1;  // step number, -1 when outside steps
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string nvtx;  // innermost NVTX range of the host at that time
  int64_t cost_ns = 0;
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
};

struct OomModel;  // rules_oom.h

struct AnalyzeOptions {
  StepOptions steps;
  int device = -1;            // -1: the busiest device
  double min_cost_pct = 1.0;  // findings below this share of the analyzed time are dropped
  bool all = false;           // keep findings below their threshold too
  double memory_capacity_pct = 90.0;
  GapOptions gaps;
  std::shared_ptr<const OomModel> oom_model;  // --model ...: the planner prices the oom fixes
};

struct IdleSummary {
  int64_t analyzed_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t by_cause[4] = {0, 0, 0, 0};  // indexed by GapCause
  int64_t gaps = 0;
};

struct Analysis {
  StepSet steps;
  int device = -1;  // the device the time-based rules looked at; -1: no GPU activity
  std::vector<Interval> windows;
  int64_t analyzed_ns = 0;
  int64_t complete_steps = 0;  // steady steps analyzed
  IdleSummary idle;
  std::vector<Finding> findings;  // ranked by cost, highest first
};

struct RuleInfo {
  const char* id;
  const char* summary;
};
const std::vector<RuleInfo>& RuleList();

StatusOr<Analysis> Analyze(const TraceModel& model, const AnalyzeOptions& options);

// --- internals shared by the rule files ---------------------------------
struct RuleContext {
  const TraceModel& m;
  const AnalyzeOptions& opt;
  const StepSet& steps;
  std::vector<int32_t> op_step;  // step index of each op (by launch), -1
  int device = -1;
  std::vector<Interval> windows;  // sorted, disjoint
  int64_t analyzed_ns = 0;
  int64_t nsteps = 0;
  std::vector<GpuGap> gaps;  // of `device`, clipped to the windows
  // Per api call: 1 a synchronous memcpy/memset, 2 an async memcpy to/from
  // pageable memory (both block the host), 0 otherwise.
  std::vector<uint8_t> blocking_copy;
  std::vector<char> is_step_range;  // per NVTX range: it is a detected step

  bool InWindows(int64_t t) const;
  // Step index whose window contains t, or -1.
  int StepAtWindow(int64_t t) const;
  // "`forward`", "the step range" (a step's own range) or "no NVTX range".
  std::string RangeName(uint32_t nvtx) const;
  std::string Rel(int64_t t) const;  // "+1.234567 s"
  // "steps 5-34" / "steps 5, 9, 12" / "12 of 30 steps (5-40)"; "" without steps.
  std::string StepsText(const std::vector<int>& step_indices) const;
  // Fills cost_pct / cost_per_step_ns and the reported flag from cost_ns.
  void Finish(Finding* f, bool significant) const;
};

void GapRules(const RuleContext& c, std::vector<Finding>* out);
void CopyRules(const RuleContext& c, std::vector<Finding>* out);
void Fp32GemmRule(const RuleContext& c, std::vector<Finding>* out);
void MemoryCapacityRule(const RuleContext& c, std::vector<Finding>* out);
void OomRule(const RuleContext& c, std::vector<Finding>* out);  // rules_oom.cc

}  // namespace stepscope
