// What-if transformations: each rewrites a copy of the graph the way a fix
// would change the program, so that replaying it prices the fix
// (docs/whatif.md). Node selections are graph node indices.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/whatif/graph.h"
#include "analysis/whatif/replay.h"
#include "common/status.h"

namespace stepscope::whatif {

// Remove a synchronization: the blocking calls no longer wait for the GPU
// (their block edges go; the call keeps its own, non-waiting time).
int RemoveWaits(Graph* g, const std::vector<uint32_t>& calls);

// Overlap host work with the previous step (data loading by prefetching
// workers): on `tid`, the CPU time between calls that overlaps a span is cut
// to `residual_ns` per span (what fetching a ready batch still costs).
struct HostSpan {
  uint32_t tid;
  int64_t start_ns;
  int64_t end_ns;
};
int CutHostTime(Graph* g, const std::vector<HostSpan>& spans, int64_t residual_ns);

// The same where the spans are exactly the host work that goes (a DataLoader's next()
// inside a longer stretch of host time between calls; disjoint per thread): each gap
// between calls loses only its measured overlap with the spans (at the graph's host
// speed: a gap scaled by ScaleHost loses the same fraction of itself), `residual_ns`
// per span kept.
int CutHostOverlap(Graph* g, const std::vector<HostSpan>& spans, int64_t residual_ns);

// Scale the CPU time between calls: on `tid`, every gap that lies inside a
// span (from the end of one call to the start of the next) takes `factor` of
// its time (checkpoint hooks that go with the fix: their sampled share).
struct ScaledHostSpan {
  uint32_t tid;
  int64_t start_ns;
  int64_t end_ns;
  double factor;
};
int ScaleHostTime(Graph* g, const std::vector<ScaledHostSpan>& spans);

// Take `by_ns` off the CPU time between calls of `span.tid` that overlaps the
// span (the gaps in it, first to last), never below 0: host work that a fix
// shortens without removing the rest of the gap (a CPU fault burst become a
// bulk copy).
int ShortenHostTime(Graph* g, const HostSpan& span, int64_t by_ns);

// Grow the CPU time between calls of `span.tid` that overlaps the span by
// (factor - 1) x the overlap: host work that scales with the data, such as a
// CPU faulting managed pages back, under a `factor` x larger batch.
int GrowHostTime(Graph* g, const HostSpan& span, double factor);

// Set GPU op durations (a unified-memory kernel once its data is prefetched:
// its fault-stalled time out, the prefetch's copy time in).
int SetDurations(Graph* g, const std::vector<uint32_t>& ops, const std::vector<int64_t>& ns);

// Scale GPU op durations (tensor cores instead of fp32: the measured ratio of
// the two ceilings; a larger batch: N).
int ScaleOps(Graph* g, const std::vector<uint32_t>& ops, double factor);

// The ops are not needed any more (offload avoided): they take no time, the
// calls that launched them take no host time, and what waited for them only
// waits for the rest of the stream.
int RemoveOps(Graph* g, const std::vector<uint32_t>& ops);

// Host round trips removed (a data-dependent op made static, docs/rules.md
// data_dependent_sync): the blocking calls wait no more and take no time, and
// the read-back copies go (no time, no launch cost). The CPU time between
// calls stays: what the host did with the value it now has to do anyway.
int RemoveRoundTrips(Graph* g, const std::vector<uint32_t>& calls,
                     const std::vector<uint32_t>& copies);

// A loop run once instead of N times (its iterations batched into one, the
// GPU work unchanged: an MoE's per-expert dispatch become a fixed-capacity
// one): on each span's thread the calls that start in it take no host time
// and the CPU time between calls inside it goes (CutHostOverlap); the ops they
// launched stay. The spans hold the iterations that go (disjoint per thread).
int BatchLoops(Graph* g, const std::vector<HostSpan>& spans);

// Activation checkpointing off: the recomputed ops go (RemoveOps), and with
// them the CPU time of the thread that launched them across each recompute
// segment (`segments`, cut to 0) and the checkpoint wrapper's entry/exit time
// in the forward (`boundaries`: CPU gaps of the launching thread, each cut to
// `boundary_ns`, the typical gap between launches).
// `scaled`: the rest of the checkpointed blocks' CPU time on each thread, less
// the checkpoint hooks' share (ScaleHostTime).
int RemoveRecompute(Graph* g, const std::vector<uint32_t>& ops,
                    const std::vector<HostSpan>& segments, const std::vector<HostSpan>& boundaries,
                    int64_t boundary_ns, const std::vector<ScaledHostSpan>& scaled = {});

// Pinned, non-blocking copies instead of pageable ones (tensor.pin_memory(),
// .to(..., non_blocking=True)): each copy op takes `ns` (its bytes at the
// pinned bandwidth; never longer than it took). A host-to-device copy's
// launching call no longer blocks (its own time cut to a non-waiting call's,
// kMaxNonWaitingCallNs) and neither does `sync`, the stream synchronization
// the upload made right after it (a graph node; kNone: none). A
// device-to-host copy's result is read by the host next: its waits stay.
struct PinnedCopy {
  uint32_t op;
  int64_t ns;
  uint32_t sync = kNone;
};
int PinCopies(Graph* g, const std::vector<PinnedCopy>& copies);

// Copies moved to a side stream: they leave the compute stream's order; a
// device-to-host copy still starts after the op before it on its old stream
// (its data), a host-to-device copy must end before the op after it (its
// use); the host no longer waits for them.
int SideStream(Graph* g, const std::vector<uint32_t>& copy_ops);

// CUDA graphs over host spans: on every launching thread, each run of
// non-blocking calls in a span with at most `max_gap_ns` of CPU time between
// them becomes one graph launch of `graph_launch_ns` (the calls' own time and
// the CPU time between them go); eager Python between such runs stays.
inline constexpr int64_t kSegmentGap = 100'000;
int CudaGraph(Graph* g, const std::vector<HostSpan>& spans, int64_t graph_launch_ns,
              int64_t max_gap_ns = kSegmentGap);

// A larger batch: every GPU op of the given steps takes `n` times as long;
// host time does not change, except the CPU time in `data_spans` (host work
// on the batch's data: a CPU faulting managed pages back, the um_faults
// finding's CPU bursts), which grows n times too (GrowHostTime).
int ScaleBatch(Graph* g, const std::vector<int32_t>& step_indices, double n,
               const std::vector<HostSpan>& data_spans = {});

// The host's own time times `factor`: every call's own duration (a blocking
// call: the part not spent waiting) and the CPU time between a thread's calls
// (thread and cross-thread edges). Launch latencies, GPU ops and the GPU's
// gaps stay. Returns the nodes and edges changed.
int ScaleHost(Graph* g, double factor);
// Overhead compensation: the tracer's own handler time recorded with each API
// call (api.tracer_ns: its callbacks, Python stacks and NVTX handlers on that
// thread since the thread's previous call, capture/self_time.h) is taken out
// of the host gap before the call (the thread edge's delay, never below 0).
// Returns the time removed per step index (Node::step of the call).
std::map<int32_t, int64_t> RemoveTracerTime(Graph* g, const TraceModel& m);

// Result of a what-if: the simulated median step before and after.
struct Prediction {
  int64_t measured_ns = 0;        // median of the steady steps in the trace
  int64_t base_ns = 0;            // simulated, unchanged graph
  int64_t fixed_ns = 0;           // simulated, transformed graph
  int changed = 0;                // nodes the transformation touched
  std::string bound_after;        // the chain that bounds the median step once fixed
  bool host_bound_after = false;  // host threads hold most of that chain (false: unchanged)
  int64_t saving_ns() const { return base_ns - fixed_ns; }
  double speedup() const { return fixed_ns > 0 ? static_cast<double>(base_ns) / fixed_ns : 0; }
};

// The graph of a trace, replayed once, ready to price transformations. A
// trace with more than kMaxSteps steady steps is replayed over the kMaxSteps
// in its middle (and the step before them, whose calls start the replay).
class WhatIfEngine {
 public:
  static constexpr int kMaxSteps = 64;
  // untraced_step_ns > 0: the workload's own step time without the tracer. The
  // host's CPU time in the graph (ScaleHost) is scaled by untraced step /
  // simulated step, and every transformation is priced at that host speed: a
  // traced process's host runs slower (the tracer's per-call cost; on shared VMs
  // also the host's own speed from one process to the next), its GPU does not,
  // so a fix that moves the bound from the host to the GPU (a larger batch) is
  // priced right only at the untraced host speed. base() is then the scaled
  // replay; traced_base_median() the unscaled one (the replay's fidelity).
  //
  // untraced_step_ns == kUntracedMeasured: the untraced step the trace measured
  // itself (whatif/untraced.h: the warm-up iterations before a `profile --steps`
  // window) is used the same way when those iterations were steady
  // (UntracedSteps::steady) and shorter than the traced replay's median step
  // (untraced_measured_steps() > 0 then); otherwise as without it.
  //
  // Without untraced_step_ns, the tracer's own time recorded in the trace is
  // removed from the host time (RemoveTracerTime) unless keep_tracer_time:
  // base() is then the estimated untraced replay, traced_base_median() the
  // replay of the trace as recorded, tracer_ns_per_step() what was removed.
  static StatusOr<WhatIfEngine> Build(const TraceModel& m, const StepSet& steps, int device,
                                      int64_t untraced_step_ns = 0, bool keep_tracer_time = false);
  const Graph& graph() const { return g_; }
  const StepSet& steps() const { return *steps_; }
  const StepTimes& base() const { return base_; }
  const StepTimes& measured() const { return measured_; }
  const ReplayResult& base_replay() const { return base_replay_; }
  int device() const { return device_; }
  // The host-time factor Build applied (1: none) and the unscaled replay's median step.
  double host_scale() const { return host_scale_; }
  int64_t traced_base_median() const { return traced_base_median_; }
  // The median over the replayed steady steps of the tracer time removed (0: none).
  int64_t tracer_ns_per_step() const { return tracer_ns_per_step_; }
  // The untraced step the host was scaled to (0: none), and how many iterations
  // measured it in the trace (0: given by the caller).
  int64_t untraced_step_ns() const { return untraced_step_ns_; }
  int untraced_measured_steps() const { return untraced_measured_steps_; }
  // The steady step whose simulated duration is the median.
  int MedianStep() const;
  Prediction Price(const std::function<int(Graph*)>& transform) const;

 private:
  Graph g_;
  const StepSet* steps_ = nullptr;
  int first_ = 0;  // the steps replayed: [first_, last_] (kMaxSteps in the middle)
  int last_ = 1 << 30;
  int device_ = -1;
  double host_scale_ = 1.0;
  int64_t traced_base_median_ = 0;
  int64_t tracer_ns_per_step_ = 0;
  int64_t untraced_step_ns_ = 0;
  int untraced_measured_steps_ = 0;
  ReplayResult base_replay_;
  StepTimes base_;
  StepTimes measured_;
};

}  // namespace stepscope::whatif
