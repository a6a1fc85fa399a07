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
#include <vector>

#include "common/status.h"
#include "ranks/rank_summary.h"
#include "ranks/scores.h"

namespace stepscope {

struct RanksOptions {
  double threshold = 0.75;         // NVRx score threshold
  int window_steps = 5;            // steps per window for individual scores
  int64_t min_wait_ns = -1;        // a step's wait that counts as straggling; -1: auto
  bool align_collectives = false;  // correct per-host clock skew from collective end times
};

enum class Cause { kNone, kCompute, kHost, kCommunication };
const char* CauseName(Cause c);
// What within the cause (docs/ranks.md, "The verdict"): compute is slower
// kernels; host is extra work (its program launches work the others do not)
// or late launches; communication has none.
enum class CauseDetail { kNone, kSlowerKernels, kExtraWork, kLateLaunches };
const char* CauseDetailName(CauseDetail d);  // "slower kernels", ...; "" for kNone

// One rank's results. Times are per-step medians over the rank's steps.
struct RankResult {
  int64_t rank = -1;
  std::string host;
  std::string trace;
  int64_t offset_ns = 0;  // clock offset applied (meta, plus the collective correction)
  int64_t skew_ns = 0;    // residual skew estimated from collective end times, after alignment
  int64_t steps = 0;
  double step_ns = kNaN;  // host step range
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
  double compute_excess_ns = 0;  // its non-NCCL kernel busy time minus the others' median
  // The compute excess split by kernel name (verdict.cc): slower_ns + extra_ns
  // ~ compute_excess_ns.
  double slower_ns = 0;       // the kernels the others also run, longer on it (compute)
  double extra_ns = 0;        // kernel work the others do not do (host: extra work)
  double host_excess_ns = 0;  // its launch lateness minus the others' median (host: late launches)
  double comm_ns = 0;         // what neither explains: caused - compute - host (>= 0)
  Cause cause = Cause::kNone;
  CauseDetail detail = CauseDetail::kNone;
  // Evidence, largest first, each at least a tenth of the largest number explained.
  std::vector<KernelExcess> extra_kernels;
  std::vector<KernelExcess> slower_kernels;
  std::vector<std::pair<std::string, double>> sections;  // name, excess ns per step
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
  std::vector<std::string> notes;  // rank numbering, unequal steps, clock skew
  std::vector<int64_t> steps;      // every step number any rank has, ascending
  std::vector<int64_t> common_steps;
  std::vector<RankResult> ranks;  // by rank
  // Per rank, per entry of `steps`: index into that rank's summary steps, or -1.
  std::vector<std::vector<int>> step_index;
  std::vector<std::vector<int64_t>> waited;  // [rank][step]: exposed ns waited for later ranks
  std::vector<std::vector<int64_t>> caused;  // [rank][step]: exposed ns the others waited for it
  std::vector<std::string> sections;         // scored section names
  std::vector<MatchedCollective> collectives;
  int64_t min_wait_ns = 0;  // effective threshold
  std::vector<Straggler> stragglers;
  std::vector<ScoreFlag> score_flags;
};

// Analyzes the summaries (taken by value: clock offsets are applied in place).
// Fails (kInvalidInput) on two summaries of the same rank.
StatusOr<RanksAnalysis> AnalyzeRanks(std::vector<RankSummary> summaries,
                                     const RanksOptions& options);

}  // namespace stepscope
