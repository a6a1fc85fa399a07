// Replay: a discrete-event simulation of a what-if graph (graph.h).
//
// Every node starts at the latest of (its incoming edges' source time + the
// edge's delay), where the source time is the source's end, or its start for
// a launch edge; a node with no incoming edge at all starts at its measured
// time (the anchors: the first call of each thread). It ends at its start +
// its duration, or, for a blocking call, at the latest of that and (each
// waited-for op's end + the return latency). Nodes are visited in the graph's
// topological order, so one pass computes every time: O(nodes + edges).
//
// The host is modelled as free-running: a launch never waits for room in the
// GPU's queue (CUDA queues about a thousand launches; a host that far ahead is
// not what bounds a step).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/steps.h"
#include "analysis/whatif/graph.h"

namespace stepscope::whatif {

struct ReplayResult {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  std::vector<uint32_t> bound_start;  // edge that set the start; kNone: anchored
  std::vector<uint32_t> bound_end;    // block edge that set the end; kNone: own duration
};

ReplayResult Replay(const Graph& g);

// The measured times as a ReplayResult (no binding edges).
ReplayResult Measured(const Graph& g);

// Per step: end of the GPU work launched in it on `device` (-1: any), and the
// step's duration (end - the previous step's end; the first step: end - the
// start of its first call or op). -1 where a step has no GPU work.
struct StepTimes {
  std::vector<int64_t> end;
  std::vector<int64_t> duration;
  std::vector<uint32_t> last_node;  // the node that ends the step
  int64_t median = 0;               // of the steady steps' durations (steps.h)
  int64_t mean = 0;
};
// Only steps with index in [first, last] count in the median and mean.
StepTimes StepDurations(const Graph& g, const ReplayResult& r, const StepSet& steps, int device,
                        int first = 0, int last = 1 << 30);

// Which chain bounds a step: walking back from the op that ends the step,
// through the edges that set each node's time, until the step's start.
struct PathPart {
  uint32_t lane = 0;
  std::string what;  // "API calls", "CPU between calls", "kernels", "copies", "launch latency",
                     // "sync return", "queue gaps"
  int64_t ns = 0;
};
struct CriticalPath {
  int step = -1;
  int64_t duration = 0;
  std::vector<PathPart> parts;                      // largest first
  std::vector<std::pair<uint32_t, int64_t>> lanes;  // time per lane, largest first
  bool host_bound = false;                          // the host thread(s) hold most of the path
};
CriticalPath TraceCriticalPath(const Graph& g, const ReplayResult& r, const StepTimes& t, int step);

}  // namespace stepscope::whatif
