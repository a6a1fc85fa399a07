// Cross-rank analysis: `stepscope ranks`.
//
// Input: one RankSummary per rank. Output (RanksAnalysis): step times side
// by side, NVRx scores per rank, every NCCL collective matched across ranks
// with the rank that arrived last and how long the others waited for it,
// communication/computation overlap per rank, and the verdict — which rank
// straggles, from which step, and why. docs/ranks.md defines every number.
//
// The pipeline: align clocks (meta.wall_clock_offset_ns, optionally
// corrected from collective end times) -> match collectives -> per-step
// waits -> straggler detection and cause -> scores. It is linear in
// ranks x (steps x names + collectives), so a thousand summaries take
// seconds (docs/PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/step_windows.h"
#include "ranks/rank_summary.h"
#include "ranks/scores.h"

namespace stepscope {

struct RanksOptions {
  double threshold = 0.75;         // NVRx score threshold
  int window_steps = 5;            // steps per window for individual scores
  int64_t min_wait_ns = -1;        // a step's wait that counts as straggling; -1: auto
  bool align_collectives = false;  // correct per-host clock skew from collective end times
  // --steps: the steps analyzed, inclusive [first, last] ranges of step
  // numbers; empty: every step. Steps outside are still matched (collective
  // sequence, clock alignment) but count in no statistic, score or verdict.
  std::vector<std::pair<int64_t, int64_t>> step_ranges;
};

// Parses a --steps list: "N", "A-B" or a comma-separated mix ("10-17,26-33").
// Fails (kInvalidInput) on anything else or on a range whose end is before its start.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseStepRanges(std::string_view text);

// Why a straggler is late (docs/ranks.md, "The verdict"): its data loading
// (DataLoader.__next__ longer), host CPU work (its main thread used more CPU,
// or waited for one), late launches (its host launched late for another
// reason: a sleep, a lock, I/O), more GPU work (kernels the others do not
// run, or larger launches of the same kernels), a slower GPU (the same
// kernels with the same launch size take longer) or communication (none of
// those: its collectives themselves are late).
enum class Cause {
  kNone,
  kDataLoading,
  kHostCpu,
  kLateLaunches,
  kGpuWork,
  kSlowerGpu,
  kCommunication
};
const char* CauseName(Cause c);  // "data loading", "host CPU", "late launches", "GPU work", ...
// What within the cause: GPU work is extra kernels or larger kernels; host
// CPU is Python work (more CPU time) or CPU contention (runnable without a CPU).
enum class CauseDetail { kNone, kExtraKernels, kLargerKernels, kPythonWork, kCpuContention };
const char* CauseDetailName(CauseDetail d);  // "extra kernels", ...; "" for kNone

// One rank's results. Times are per-step medians over the rank's steps.
struct RankResult {
  int64_t rank = -1;
  std::string host;
  std::string trace;
  int64_t offset_ns = 0;  // clock offset applied (meta, plus the collective correction)
  int64_t skew_ns = 0;    // residual skew estimated from collective end times, after alignment
  int64_t steps = 0;      // steady steps
  double step_ns = kNaN;  // the step window (common/step_windows.h), steady steps
  double gpu_ns = kNaN;   // GPU span of the step
  double compute_ns = kNaN;
  double comm_ns = kNaN;
  double late_ns = kNaN;      // host launch lateness on the critical stream
  double waited_ns = kNaN;    // exposed wait inside NCCL kernels for later ranks
  double caused_ns = kNaN;    // exposed time the others waited for this rank
  double overlap = kNaN;      // comm time overlapped by compute / comm time (HTA)
  int64_t collectives = 0;    // matched collectives it took part in
  int64_t last_arrivals = 0;  // ... in which it arrived last (strictly after another rank)
  double gpu_rel = kNaN;
  double gpu_ind = kNaN;
  std::vector<double> section_rel;  // parallel to RanksAnalysis::sections
  std::vector<double> section_ind;
};

// One NCCL collective matched across ranks.
struct MatchedCollective {
  std::string name;
  int32_t stream_index = 0;
  int64_t step = -1;      // step number (-1: outside steps)
  int64_t seq = 0;        // occurrence of (name, stream) in the step; global seq when outside steps
  int ranks = 0;          // ranks that ran it
  int last = -1;          // index into RanksAnalysis::ranks of the last arrival
  int64_t start_ns = 0;   // earliest aligned start (the first arrival)
  int64_t spread_ns = 0;  // last aligned start - first aligned start
  int64_t max_spin_ns = 0;     // longest spin of another rank (its kernel time beyond the last's)
  int64_t max_wait_ns = 0;     // longest exposed wait of another rank (docs/ranks.md)
  int64_t median_wait_ns = 0;  // median exposed wait of the other ranks
  // The smallest exposed wait of the other ranks: the next-to-last arrival's. What the
  // collective would start earlier if the last rank arrived with the others (docs/ranks.md).
  int64_t held_ns = 0;
  int next_last = -1;  // index into RanksAnalysis::ranks of the rank whose wait that is
};

// One kernel name's part of a straggler's kernel-time excess (verdict.cc
// defines c, m, C, M). Medians over the straggling steps.
struct KernelExcess {
  std::string name;
  double ns = 0;           // extra work or slowdown per step
  double instances = 0;    // extra work: c - C; slower kernels: min(c, C)
  double mine_ns = 0;      // m: its median instance duration
  double others_ns = 0;    // M: the other ranks' (0 when none runs it)
  bool only_here = false;  // no other rank runs this kernel
};

struct Straggler {
  int rank_index = -1;  // into RanksAnalysis::ranks
  int64_t from_step = -1;
  int64_t steps_blocking = 0;    // steps from from_step where it made others wait
  int64_t steps_seen = 0;        // steps from from_step
  bool by_scores = false;        // found by scores (no collective evidence)
  double caused_ns = 0;          // median per straggling step: the others' wait for it
  double held_ns = 0;            // median per straggling step: what it alone holds the step back
  double compute_excess_ns = 0;  // its non-NCCL kernel busy time minus the others' median
  // The compute excess split by kernel name (verdict.cc): slower_ns + extra_ns
  // ~ compute_excess_ns.
  double slower_ns = 0;       // the kernels the others also run, same launch size, longer on it
  double larger_ns = 0;       // the kernels the others also run, launched larger on it (GPU work)
  double extra_ns = 0;        // kernel instances the others do not run (GPU work)
  double host_excess_ns = 0;  // its launch lateness minus the others' median
  double comm_ns = 0;         // what none explains: caused - kernel time - late launches (>= 0)
  // The host side, per step vs the other ranks' median (NaN: not recorded).
  double loader_ns = kNaN;       // DataLoader.__next__ time excess
  double loader_mine_ns = kNaN;  // ... its own, and the others' median
  double loader_others_ns = kNaN;
  double host_cpu_ns = kNaN;    // main thread CPU time excess
  double host_ready_ns = kNaN;  // main thread run-queue time excess (runnable, no CPU)
  // The parts the cause is chosen from (>= 0): each straggler's lateness is
  // the largest of them (docs/ranks.md).
  double part_loading_ns = 0, part_cpu_ns = 0, part_late_ns = 0, part_gpu_ns = 0;
  // The price: the job's step now and if this rank matched the median rank
  // (the others' step less the exposed wait they spend on it), medians over
  // the straggling steps.
  double step_ns = kNaN;
  double step_if_matched_ns = kNaN;
  Cause cause = Cause::kNone;
  CauseDetail detail = CauseDetail::kNone;
  // Evidence, largest first, each at least a tenth of the largest number explained.
  std::vector<KernelExcess> extra_kernels;
  std::vector<KernelExcess> slower_kernels;
  std::vector<KernelExcess> larger_kernels;  // slower_kernels' launch-size twins: more work
  std::vector<std::pair<std::string, double>> sections;  // name, excess ns per step
  std::vector<std::pair<std::string, double>> python;    // Python functions: CPU excess per step
  std::vector<std::string> only_here;                    // sections no other rank has
};

// A score below the threshold (NVRx's identify_stragglers), reported as is.
struct ScoreFlag {
  int rank_index = -1;
  std::string what;  // "gpu relative", "section 'forward' individual", ...
  double score = 0;
};

struct RanksAnalysis {
  RanksOptions options;
  std::vector<RankSummary> summaries;  // parallel to `ranks`, clock offsets not applied
  int64_t world_size = 0;
  std::vector<int64_t> missing_ranks;
  std::vector<std::string> notes;     // rank numbering, unequal steps, clock skew
  std::vector<int64_t> steps;         // every step number any rank has, ascending
  std::vector<int64_t> common_steps;  // selected steps every rank has
  // Per entry of `steps`: inside options.step_ranges (all true without them).
  std::vector<bool> selected;
  std::vector<RankResult> ranks;  // by rank
  // Per rank, per entry of `steps`: index into that rank's summary steps, or -1.
  std::vector<std::vector<int>> step_index;
  // Per rank, parallel to its summary steps: the step's window and whether it
  // is warm-up (common/step_windows.h, the definition `steps` uses). The
  // per-rank statistics count steady steps only.
  std::vector<std::vector<StepWindow>> windows;
  std::vector<std::vector<int64_t>> waited;  // [rank][step]: exposed ns waited for later ranks
  std::vector<std::vector<int64_t>> caused;  // [rank][step]: exposed ns the others waited for it
  // [rank][step]: of that, what it alone held the step back: per collective it arrived last at,
  // the next-to-last arrival's exposed wait (equal to caused with two ranks).
  std::vector<std::vector<int64_t>> held;
  std::vector<std::string> sections;  // scored section names
  std::vector<MatchedCollective> collectives;
  int64_t min_wait_ns = 0;  // effective threshold
  std::vector<Straggler> stragglers;
  // Ranks the others waited for in most steps that held them back little alone (a note each).
  std::vector<int> not_alone;  // indices into ranks
  std::vector<ScoreFlag> score_flags;
};

// Analyzes the summaries (taken by value: clock offsets are applied in place).
// Fails (kInvalidInput) on two summaries of the same rank.
StatusOr<RanksAnalysis> AnalyzeRanks(std::vector<RankSummary> summaries,
                                     const RanksOptions& options);

}  // namespace stepscope
