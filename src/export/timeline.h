// Timeline: lays a stepscope trace out as tracks, slices, flows and counters,
// the shape every timeline viewer understands, and streams it to a sink (the
// Perfetto protobuf writer or the Chrome JSON writer).
//
// Layout:
//  * one process track (the traced process) and one thread track per host
//    thread, holding its CUDA API calls and NVTX ranges (marks are instants);
//  * one track per GPU device with a child track per stream, holding kernels,
//    memcpys and memsets;
//  * flows from each API call to the GPU work it created (same correlation id;
//    one flow per GPU activity, so a graph launch gets one arrow per kernel);
//  * counter tracks per device: GPU utilization (% of each time bucket with at
//    least one kernel running) and device memory in use (bytes);
//  * host model (schema 1.5) per thread: a CPU-state track (thread_sched:
//    running on CPU n / off-CPU states), a samples track (runs of samples in
//    one state at one stack, the stack in the slice's args) and an OS-runtime
//    track (osrt waits with what they waited on and their stack).
//
// Nesting: a viewer's track is a stack: slices on it must nest. Rows arrive
// ordered by (start asc, end desc); each track keeps the ends of its open
// slices. A slice that would cross an open one (overlapping kernels on one
// stream in an odd import, NVTX start/end ranges, clock jitter) goes to the
// first "overlap" lane of that track where it nests; lanes are created on
// demand. Slice ends are emitted lazily, when a later event on the lane starts
// at or after them, so the events of every track come out in time order with
// an end before a begin at the same timestamp.
//
// Memory: the walk streams rows through SQLite cursors; it holds the per-track
// stacks, the correlation index (about 16 bytes per distinct GPU correlation
// id) and the counter series, never the tables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/trace_reader.h"

namespace stepscope {

// kHost: a host-model track under a thread's process: "<thread>: CPU state"
// (thread_sched), "<thread>: samples", "<thread>: OS runtime" (docs/host.md).
enum class TrackKind { kProcess, kThread, kGpuDevice, kGpuStream, kOverlapLane, kCounter, kHost };

struct TrackInfo {
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;  // 0: top level
  TrackKind kind = TrackKind::kThread;
  std::string name;
  int32_t pid = 0;                   // kProcess, kThread
  int32_t tid = 0;                   // kThread
  std::vector<std::string> cmdline;  // kProcess
  bool counter_is_bytes = false;     // kCounter: bytes, else a plain number (percent)
  // Where a viewer without track ids (Chrome JSON) puts the track: a
  // (pid, tid) pair. GPU devices get pseudo pids, lanes pseudo tids.
  int64_t chrome_pid = 0;
  int64_t chrome_tid = 0;
};

// One debug argument of a slice: an integer or a string.
struct SliceArg {
  const char* key;
  bool is_string;
  int64_t int_value;
  std::string_view string_value;
};

struct SliceEvent {
  uint64_t track = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // known up front (the Chrome writer uses it); Perfetto gets EndSlice
  std::string_view name;
  const char* category = "";
  const SliceArg* args = nullptr;
  size_t arg_count = 0;
  const uint64_t* flows_out = nullptr;  // flows starting here (an API call)
  size_t flow_out_count = 0;
  uint64_t flow_in = 0;  // the flow ending here (GPU activity), 0 = none
};

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  // Called first: the smallest timestamp of the trace.
  virtual void SetTimeOrigin(int64_t origin_ns) {}
  // Called before any event on the track (lanes are announced when first needed).
  virtual void AddTrack(const TrackInfo& track) = 0;
  virtual void BeginSlice(const SliceEvent& e) = 0;
  // Ends the innermost open slice of `track`.
  virtual void EndSlice(uint64_t track, int64_t ts_ns) = 0;
  virtual void Instant(uint64_t track, int64_t ts_ns, std::string_view name,
                       const char* category) = 0;
  virtual void Counter(uint64_t track, int64_t ts_ns, double value) = 0;
  // Flushes; the first write error since the sink was made.
  virtual Status Finish() = 0;
};

struct TimelineOptions {
  int64_t util_bucket_ns = 0;  // GPU utilization bucket; 0 = auto (about 2000 buckets)
  bool args = true;            // attach debug arguments (grid, bytes, correlation ...)
};

// What the walk emitted: printed by the CLI, checked by the tests.
struct TimelineStats {
  int64_t tracks = 0, thread_tracks = 0, stream_tracks = 0, lane_tracks = 0, counter_tracks = 0;
  int64_t slices = 0, gpu_slices = 0, cpu_slices = 0, instants = 0;
  int64_t flows = 0, counter_points = 0;
  int64_t host_tracks = 0, host_slices = 0;  // host model (also counted in slices)
  // Chrome JSON only: names cut at ChromeJsonWriter::kMaxNameBytes (Perfetto keeps them).
  int64_t names_truncated = 0;
  int64_t time_origin_ns =
      0;  // smallest timestamp of the trace (Chrome JSON times are relative to it)
};

// Walks `reader` and streams the timeline to `sink` (not finished here).
Status WalkTimeline(const TraceReader& reader, const TimelineOptions& options, TimelineSink* sink,
                    TimelineStats* stats);

}  // namespace stepscope
