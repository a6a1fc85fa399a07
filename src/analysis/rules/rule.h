// The expert rules as units (docs/rules.md, "Adding a rule"). A rule is one
// file in this folder that defines a `Rule`: its id and summary, its detection
// (the findings it reads from the trace), the fix it asks for as a replay
// transformation (whatif/transforms.h; the replay prices it, whatif/pricing.cc),
// and what it adds to its findings' evidence. registry.cc lists the rules, one
// line each, in report order. Per-rule data a finding carries from the
// detection to the fix is the rule's own type (Finding::data, FindingData).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analysis/model/gaps.h"
#include "analysis/model/steps.h"
#include "analysis/model/trace_model.h"
#include "analysis/rules/rules.h"
#include "analysis/whatif/replay.h"
#include "analysis/whatif/transforms.h"
#include "common/strings.h"

namespace stepscope {

// Which rule owns each GPU idle gap of the analyzed device (the ownership
// table in rules.h): decided once, for all the gap rules (gap_owners.cc).
enum class GapOwner : uint8_t {
  kNone,
  kDataLoading,
  kHostSync,
  kSyncMemcpy,
  kPageableMemcpy,
  kLaunchBound,
  kHostWait,
  kDataDependentSync,
  // Launch-bound gaps inside a per-parameter optimizer's (or clipping's) range:
  // that finding's (its fix removes them), not launch_bound's.
  kPerParamOptimizer,
};

// A host round trip (docs/rules.md, "Host round trips"): inside a steady step,
// a host thread blocks until the GPU has run what it queued (HostBlock,
// gaps.h: a synchronization or a blocking copy), usually to read a value back.
// The blocking calls of one thread with no GPU launch between them are one
// round trip (nonzero's count copy and the cudaStreamSynchronize after it).
// Found once (round_trips.cc) and owned by two rules: data_dependent_sync the
// data-dependent ones (reading back the size of an op's output: nonzero,
// boolean indexing, masked_select, unique, ..., wherever it runs; or any
// value read back inside a module's forward/backward: .item(), .tolist()),
// host_sync the rest (loss.item() for logging, torch.cuda.synchronize()).
struct RoundTrip {
  uint32_t tid = 0;
  int step = -1;  // index in steps
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<uint32_t> calls;  // apis() of its blocking calls
  std::vector<uint32_t> syncs;  // syncs() of its sync records
  uint32_t read_back = kNone;   // gpu_ops() of the device-to-host copy waited for
  uint64_t bytes = 0;           // its size
  uint32_t producer = kNone;    // gpu_ops() of the last kernel launched before it (same thread)
  uint32_t op_before = kNone;   // gpu_ops() of the thread's last launch before it
  uint32_t op_after = kNone;    // ... and its first launch after it
  bool reads_value = false;     // its read-back is a value (kMaxReadBackBytes or less)
  bool in_model = false;        // in a module's forward/backward (stack, NVTX, autograd thread)
  bool data_dependent = false;  // a shape read back, or any value read back in the model
  std::string op;               // "aten::nonzero", "`.item()`", "synchronize", ...
  std::string op_evidence;      // what named it: "its kernel `...NonZeroOp...`", ...
  std::string line;             // the Python line ("moe.py:45 MoE.forward"), "" unknown
};

// A value the host computes with is small (a count, a scalar, a short list of
// sizes); a larger device-to-host copy is data moved to the host (activation
// offload, .cpu() of a tensor): the copy rules' and host_sync's, and removing
// the round trip keeps that copy (only its wait goes).
inline constexpr uint64_t kMaxReadBackBytes = 64 << 10;

// A Python loop over items with a data-dependent op in each iteration (an
// MoE's per-expert nonzero dispatch): round trips of one site, thread and step
// between which the same launches repeat (round_trip_loops.cc). Its fix runs
// the loop once, batched: `removed` holds the host time of all iterations but
// one, forward (the round trips' thread) and backward (a run on another
// thread of the step that repeats about as often: the autograd thread).
struct RoundTripLoop {
  std::vector<int32_t> trips;  // RuleContext::round_trips, one per iteration
  uint32_t tid = 0;
  int step = -1;
  size_t body = 0;  // launches per forward iteration
  int backward_runs = 0;
  std::vector<Finding::Span> removed;
  // Host time whose launches have data-dependent shapes: the whole loop and
  // its backward run (no CUDA graph captures them).
  std::vector<Finding::Span> regions;
};

struct OwnedGap {
  GapOwner owner = GapOwner::kNone;
  uint32_t tid = 0;               // host-wait: the thread that launched the next op
  uint32_t host_range = kNone;    // host-wait: its innermost NVTX range while the GPU waited
  uint32_t launch_range = kNone;  // the NVTX range of the next op's launch
  bool between_steps = false;     // data_loading: the host was outside every step range
  bool in_data = false;           // data_loading: in a data-loading NVTX range
  int32_t stretch = -1;           // launch_bound: the launch-bound stretch of the next op
};
struct GapOwners {
  std::vector<OwnedGap> gaps;  // parallel to RuleContext::gaps
  // Launch-bound stretches: kernels in each, host extent of their launches
  // (the thread of the first launch).
  std::vector<int64_t> stretch_len;
  std::vector<Finding::Span> stretch_span;
  // The round trip (RuleContext::round_trips) that keeps each stretch from
  // being captured as a CUDA graph, -1 for none: a synchronization inside it,
  // a data-dependent round trip just before it (its kernels' shapes come from
  // the value read back), or a loop of them around it, forward or backward
  // (RoundTripLoop::regions).
  std::vector<int32_t> stretch_blocker;
  // Host-wait gaps at the starts of kernel-sequence steps (no evidence of a
  // wait for a batch).
  int64_t undecided_data_ns = 0;
  // Host-wait gaps at step starts or between steps of a program that took no
  // batch from a torch DataLoader (NoDataLoader): not a wait for a batch.
  int64_t no_loader_data_ns = 0;
};

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
  GapOwners owners;          // who owns each gap
  // Per api call: 1 a synchronous memcpy/memset, 2 an async memcpy to/from
  // pageable memory or a pageable upload's own stream synchronization (both
  // block the host), 0 otherwise.
  std::vector<uint8_t> blocking_copy;
  // Per api call: a pageable upload's own stream synchronization
  // (PageableUploadSyncs), kNone.
  std::vector<uint32_t> upload_sync;
  std::vector<char> is_step_range;  // per NVTX range: it is a detected step
  // The host round trips in the steady steps (FindRoundTrips), by start, and
  // the round trip of each blocking call (apis() / syncs() index -> index).
  std::vector<RoundTrip> round_trips;
  std::map<uint32_t, int32_t> round_trip_of_api;
  std::map<uint32_t, int32_t> round_trip_of_sync;
  std::vector<RoundTripLoop> round_trip_loops;  // FindRoundTripLoops
  // Where a rule lacked the evidence to decide: one line each ("sync_memcpy:
  // 12 copies without their issuing call ...").
  std::vector<std::string>* undecided = nullptr;
  // The analyzed device's machine constants: GEMM ceilings, copy bandwidths
  // (machine_constants.h: this machine's bench results, else the table of
  // GPU models, else unknown).
  MachineConstants machine;

  bool InWindows(int64_t t) const;
  // Step index whose window contains t, or -1.
  int StepAtWindow(int64_t t) const;
  // "`forward`", "the step range" (a step's own range) or "no NVTX range";
  // a range around two steps or more stands for its enclosing range (none).
  std::string RangeName(uint32_t nvtx) const;
  // The range RangeName names (kNone: none).
  uint32_t WhereRange(uint32_t nvtx) const;
  bool SpansSteps(uint32_t nvtx) const;
  std::string Rel(int64_t t) const;  // "+1.234567 s"
  // "steps 5-34" / "steps 5, 9, 12" / "12 of 30 steps (5-40)"; "" without steps.
  std::string StepsText(const std::vector<int>& step_indices) const;
  // Fills cost_pct / cost_per_step_ns and the reported flag from cost_ns.
  void Finish(Finding* f, bool significant) const;
  // Finish, reported when `evidence_ns` is --min-cost of the analyzed time or
  // more: the finding's cost, or the time of what the rule found (fp32_gemm:
  // the GEMMs' time, its cost being an estimate).
  void FinishAtThreshold(Finding* f, int64_t evidence_ns) const;
  void FinishAtThreshold(Finding* f) const { FinishAtThreshold(f, f->cost_ns); }
  // Indices into `gaps` of the gaps `owner` owns, in time order.
  std::vector<size_t> GapsOf(GapOwner owner) const;
  // The round trip a sync-wait gap's blocking call belongs to, or nullptr.
  const RoundTrip* RoundTripOf(const GpuGap& g) const;
};

// What a rule's fix is priced with: the rules' context and the replay.
struct PricingContext {
  const RuleContext& c;
  const whatif::WhatIfEngine& e;
  const whatif::Graph& g;  // e.graph()
};

// A finding's fix as the replay prices it: the transformation of the graph
// (whatif/transforms.h) and what it does, in words (Finding::whatif).
struct Fix {
  std::function<int(whatif::Graph*)> transform;
  std::string what;
};

// After every finding is priced: what the replay of the steps itself shows.
struct ReplayContext {
  const PricingContext& p;
  const whatif::CriticalPath& path;  // of the median step
  const Analysis& a;                 // the priced findings, the idle summary
};

struct Rule {
  const char* id;       // Finding::rule
  const char* summary;  // one line, `analyze --rules`
  // Appends the rule's findings read from the trace; nullptr: none.
  void (*detect)(const RuleContext& c, std::vector<Finding>* out) = nullptr;
  // The fix a finding asks for, priced by replay (whatif/pricing.cc): the
  // finding's cost becomes the simulated saving of the median step. It may
  // also adjust the finding's text. nullptr: the rule's own cost model stands.
  Fix (*fix)(const PricingContext& p, Finding* f) = nullptr;
  // Appends findings read from the replay of the steps, once the others are
  // priced (host_bound: the critical path); nullptr: none.
  void (*detect_replayed)(const ReplayContext& r, std::vector<Finding>* out) = nullptr;
  // Adds the host's evidence (Python lines) to a finding, in a trace with a
  // host model (host_evidence.cc); nullptr: none.
  void (*host_evidence)(const RuleContext& c, const Analysis& a, Finding* f) = nullptr;
  // Its findings' host spans are work on the batch's data: a larger batch
  // grows them too (PriceLargerBatch).
  bool grows_with_batch = false;
  // Its findings rank first whatever their cost (the run died).
  bool leads = false;
  // Its findings say where the step's time goes, not why (host_bound: the
  // host holds the critical path; host_wait: the GPU waits for the host;
  // launch_bound: kernels shorter than their launch intervals): they rank after
  // every reported finding that names a cause worth 5% of the step or more,
  // whatever their cost, since that cause is a part of the same time and its
  // fix is the one to make first (analyze.cc, Ranked). Otherwise by cost.
  bool symptom = false;
};

// The rules in report order (registry.cc): findings of equal cost rank in
// this order.
const std::vector<const Rule*>& Rules();
const Rule* FindRule(const std::string& id);  // nullptr: no such rule

// The steps of the analysis (analyze.cc calls them in this order).
// The host round trips of the steady steps (round_trips.cc); fills
// c->round_trips, the maps and the loops.
void FindRoundTrips(RuleContext* c);
GapOwners OwnGaps(const RuleContext& c);  // gap_owners.cc
// Replaces the findings' costs by the simulated saving of their fix and adds
// the findings of the replay (whatif/pricing.cc).
void PriceFindings(const RuleContext& c, Analysis* a);
// The host split per step and each finding's host evidence (host_evidence.cc).
void HostEvidence(const RuleContext& c, Analysis* a);

// --- shared by the rule files ---------------------------------------------

// Accumulates GPU idle gaps into one finding; keeps the costliest examples.
struct GapGroup {
  Finding f;
  std::vector<int> steps;
  void Add(const RuleContext& c, const GpuGap& g, uint32_t host_range);
  // where = the steps and the device; then the cost share and the threshold.
  void Finish(const RuleContext& c);
};
// The sync-wait gaps that `owner` (sync_memcpy, pageable_memcpy) owns, as one
// group: the part of the copy rules' cost the gaps carry.
GapGroup BlockingCopyGaps(const RuleContext& c, GapOwner owner);

// Accumulates GPU ops (copies, kernels) into one finding: their cost, steps,
// NVTX ranges, the costliest examples.
struct OpGroup {
  Finding f;
  std::vector<int> steps;
  std::map<std::string, int64_t> by_range;
  void Add(const RuleContext& c, int64_t host_t, int64_t s, int64_t e, int64_t cost,
           uint32_t range);
  // "`forward` 12.0 ms, `backward` 3.0 ms"
  std::string Ranges() const;
  // with_times: the per-range numbers are the finding's cost (else names only).
  std::string Where(const RuleContext& c, bool with_times = true) const;
};
// The copy rules (sync_memcpy, pageable_memcpy): the copies or memsets of the
// analyzed windows that block the host, and the sync-wait gaps after the
// blocking calls the rule owns. One finding: the copies', its detail followed
// by the gaps'; only the gaps' when no copy falls in the windows (their copies
// outside them).
struct CopyGroup {
  const char* rule;
  OpGroup ops;    // f.ops: gpu_ops rows, f.apis: their calls
  GapGroup gaps;  // BlockingCopyGaps(c, owner)
  uint64_t bytes = 0;
  int64_t op_ns = 0;       // the ops' GPU time
  int64_t blocked_ns = 0;  // the host's time in their calls
  CopyGroup(const RuleContext& c, GapOwner owner, const char* rule_id);
  // A gpu_ops row (a memcpy or memset in the windows), with `cost` toward
  // the finding's unreplayed cost.
  void Add(const RuleContext& c, uint32_t row, int64_t cost);
  // Appends the finding; `own_cost` is the copies' part of the unreplayed
  // cost (the gaps' is added); `no_gaps` ends the detail without gaps.
  void Emit(const RuleContext& c, std::string title, std::string detail, const char* no_gaps,
            std::string fix, int64_t own_cost, std::vector<Finding>* out);
};

// Host time of an op for the window test: its launch, else its start.
int64_t OpTime(const TraceModel& m, const GpuOp& o);
// The NVTX range of an op's launch, kNone without one.
uint32_t OpRange(const TraceModel& m, const GpuOp& o);
std::string Mb(uint64_t bytes);  // "12.3 MB"

// Graph nodes of gpu_ops rows (those in the replayed steps).
std::vector<uint32_t> OpNodes(const whatif::Graph& g, const std::vector<uint32_t>& ops);
// Host spans as the transformations take them, by thread and start, without
// repeats.
std::vector<whatif::HostSpan> HostSpansOf(const std::vector<Finding::Span>& spans);

// The fix of the blocking-call rules (host_sync, sync_memcpy): the host does
// not wait in the finding's calls, nor in the other blocking calls of their
// NVTX ranges (or, outside every range, of their names).
Fix RemoveLikeWaits(const PricingContext& p, Finding* f);

// host_evidence of the rules about blocking calls and copies: the Python
// lines that issued the finding's calls (else the launches of its ops).
void IssuingPythonLines(const RuleContext& c, const Analysis& a, Finding* f);
// "; issued at train.py:88 step (3 of 4 calls), ..." from each call's Python
// line ("" where not recorded); "; Python line: not recorded ..." when none is.
std::string IssuedAtText(const std::vector<std::string>& lines);
// host_evidence of host_bound: the top Python lines of the launching thread
// in the steady steps.
void TopPythonLines(const RuleContext& c, const Analysis& a, Finding* f);

// The loops among the data-dependent round trips (one site each).
std::vector<RoundTripLoop> FindRoundTripLoops(const RuleContext& c);

// The data-dependent round trips of the steady steps, in words, for the
// rules whose fix would be CUDA graphs (launch_bound, host_wait, host_bound):
// "96 data-dependent host round trips per step (aten::nonzero at moe.py:45
// MoE.forward)"; "" when there are none.
std::string DataDependentRoundTrips(const RuleContext& c);
// "aten::nonzero at moe.py:45 MoE.forward, `.item()` at ...": the two most
// frequent op and line pairs of these round trips.
std::string RoundTripSites(const RuleContext& c, const std::vector<int32_t>& trips);
// The fix of data_dependent_sync and host_sync: their round trips' waits go, and
// the read-back copies of a value (RoundTrip::reads_value).
Fix RemoveRoundTripsOf(const PricingContext& p, const std::vector<int32_t>& trips);

// launch_bound: kernels in a row, each shorter than its launch interval.
inline constexpr int kMinLaunchBoundStretch = 16;

// An `optimizer.step CLASS(foreach=False, ...)` range of the profile hook: an
// optimizer stepping one tensor at a time, whose launches per_param_optimizer
// prices with the right fix (launch_bound leaves them to it).
bool PerParamOptimizerRange(const TraceModel& m, uint32_t nvtx);

}  // namespace stepscope
