// The dependency graph of a traced run (what-if analysis, docs/whatif.md).
//
// Nodes are the CUDA API calls of every host thread and the GPU ops of every
// stream. Edges say what each node waited for, with the delay measured in
// the trace (after Daydream, USENIX ATC'20, which builds such a graph from
// CUPTI traces and transforms it to answer "what if"):
//   thread       previous call on the thread ends -> the call starts; delay:
//                the CPU time between the two calls (Python, data loading);
//   cross-thread a call on another GPU-launching thread ends -> the call
//                starts, where the thread was idle in between (the autograd
//                thread starting the backward pass, the main thread resuming
//                after it): an order the trace cannot explain, kept as observed;
//   launch       the launching call starts -> the op starts; delay: the
//                launch latency;
//   stream       previous op on the stream ends -> the op starts; delay: the
//                GPU's own gap between queued ops;
//   cross-stream an op on another stream ends -> the op starts: a wait the
//                launch and the stream order do not explain (an event);
//   block        an op ends -> a blocking call returns (stream/device/event
//                synchronization, a synchronous or pageable copy); delay: the
//                time the host took to notice.
// Delays are assigned so that replaying the graph reproduces every measured
// time: where two edges could have bounded a node, the one that did keeps its
// measured delay and the other gets the typical value (median launch latency,
// median queued-op gap), capped so it does not bind.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/model/steps.h"
#include "analysis/model/trace_model.h"
#include "common/status.h"

namespace stepscope::whatif {

enum class NodeKind : uint8_t { kCall = 0, kOp = 1 };
enum class EdgeKind : uint8_t {
  kThread = 0,
  kCrossThread = 1,
  kLaunch = 2,
  kStream = 3,
  kCrossStream = 4,
  kBlock = 5,
};
const char* EdgeKindName(EdgeKind k);

// What a blocking call waits for.
// kQueueFull: a launch that waited for room in the GPU's launch queue.
enum class BlockKind : uint8_t {
  kNone = 0,
  kSync = 1,
  kSyncCopy = 2,
  kPageableCopy = 3,
  kQueueFull = 4
};

enum class CopyDirection : uint8_t { kNone = 0, kHostToDevice = 1, kDeviceToHost = 2 };

// The longest a blocking call's own time (the part not spent waiting) is
// taken to be: what a call that waited takes once it no longer waits.
inline constexpr int64_t kMaxNonWaitingCallNs = 10'000;

// The stream id of the side stream SideStream() adds.
inline constexpr uint32_t kSideStreamId = 0xfffffffeu;

struct Node {
  NodeKind kind = NodeKind::kCall;
  CopyDirection copy = CopyDirection::kNone;  // a memcpy op between host and device
  BlockKind block = BlockKind::kNone;
  uint32_t index = 0;  // apis() index (call) or gpu_ops() index (op); kNone for added nodes
  uint32_t lane = 0;   // index into Graph::lanes
  int32_t step = -1;   // step index (by launch time for ops), -1
  int64_t measured_start = 0;
  int64_t measured_end = 0;
  int64_t duration = 0;  // own time; a blocking call: the part not spent waiting
};

struct Edge {
  uint32_t from = 0;
  uint32_t to = 0;
  int64_t delay = 0;
  EdgeKind kind = EdgeKind::kThread;
  bool enabled = true;
  // A launch edge starts from the call's start; a block edge ends at the call's end.
  bool from_start() const { return kind == EdgeKind::kLaunch; }
  bool to_end() const { return kind == EdgeKind::kBlock; }
};

struct Graph;

struct Lane {
  bool host = true;
  uint32_t id = 0;  // thread id or stream id
  uint32_t device = 0;
  // "host thread 730 (pt_autograd_0)", "host thread 608 (python3, main)" (the trace's
  // thread name; "main" only for the process's main thread, tid = pid), "GPU stream 7
  // (device 0)".
  std::string Name(const Graph& g) const;
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Lane> lanes;
  std::vector<uint32_t> call_node;  // apis() index -> node, kNone
  std::vector<uint32_t> op_node;    // gpu_ops() index -> node, kNone
  uint32_t main_tid = 0;
  uint32_t pid = 0;  // the process's main thread (TraceModel::pid()); 0: unknown
  // The host lanes' thread names, as the trace names them.
  std::unordered_map<uint32_t, std::string> thread_names;
  int64_t launch_latency = 0;  // the typical values the builder used
  int64_t queue_gap = 0;
  int64_t sync_return = 0;

  // Derived by Finalize(): incoming edges per node and a topological order.
  std::vector<uint32_t> in_begin;  // nodes.size() + 1 offsets into in_edges
  std::vector<uint32_t> in_edges;
  std::vector<uint32_t> order;  // events: 2v = node v starts, 2v + 1 = it ends
  // Adds an edge (call Finalize() before the next replay).
  void AddEdge(uint32_t from, uint32_t to, int64_t delay, EdgeKind kind) {
    edges.push_back({from, to, delay, kind, true});
  }
  // Rebuilds in_edges and the order; Internal on a cycle.
  Status Finalize();
};

struct GraphOptions {
  int64_t queued_gap_max_ns = 2'000;     // an op this close to its predecessor was queued
  int64_t cross_stream_min_ns = 20'000;  // unexplained waits shorter than this are latency
  // A launch at least this long (and 5x its kind's 10th percentile) that returned this
  // close after an op ended waited for a launch-queue slot.
  int64_t queue_full_min_ns = 50'000;
  int64_t queue_full_return_ns = 50'000;
  // Only calls starting in this host-time window (and the ops they launch;
  // ops without a call: by their start): a long trace is replayed over a
  // stretch of steps, not whole.
  int64_t window_start = INT64_MIN;
  int64_t window_end = INT64_MAX;
};

// Builds the graph of the whole trace. `op_step` is OpSteps(model, steps).
StatusOr<Graph> BuildGraph(const TraceModel& m, const std::vector<int32_t>& op_step,
                           const StepSet& steps, const GraphOptions& options);

}  // namespace stepscope::whatif
