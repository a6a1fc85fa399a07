// GPU idle gaps and their cause (Holistic Trace Analysis' idle-time
// attribution, extended with host synchronizations).
//
// A gap is an interval on one device where no kernel, memcpy or memset runs
// on any stream, between two ops. The op that ends the gap has a launching
// api call A (by correlation). The cause, first match wins:
//   sync-wait   the thread that issued A was blocked in a synchronizing call
//               (a sync record other than stream-wait-event, a synchronous
//               memcpy/memset, or a memcpy to/from pageable memory) that
//               returned during the gap, before A started: the host waited
//               for the GPU to drain, then had to refill an empty queue;
//   host-wait   A started after the gap began: the GPU ran out of work
//               because the host issued the next op late (Python overhead,
//               data loading, CPU work);
//   kernel-wait A was issued before the gap began and the gap is shorter than
//               kernel_wait_max_ns: the launch latency between back-to-back ops;
//   other       everything else: no launching call in the trace, or a longer
//               wait although the op was queued (a cross-stream or event
//               dependency).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model/timeline.h"
#include "analysis/model/trace_model.h"

namespace stepscope {

enum class GapCause : uint8_t { kHostWait = 0, kSyncWait = 1, kKernelWait = 2, kOther = 3 };
const char* GapCauseName(GapCause c);

// cudaEventQuery / cudaStreamQuery (and the driver forms): CUPTI records them
// as event/stream syncs, but they never block; gap classification skips them.
bool IsQueryApiName(std::string_view name);

// A copy to or from pageable host memory: staged through a driver buffer, so
// the calling thread blocks whichever call issued it (cudaMemcpyAsync too).
bool IsPageableCopy(const MemcpyRecord& r);

// Per api call: for the call of a pageable host-to-device copy, the stream
// synchronization its thread made next, when that is the very next call
// (PyTorch's blocking upload, `.to("cuda")` without non_blocking:
// cudaMemcpyAsync, then cudaStreamSynchronize); kNone otherwise. The pair is
// one blocking copy: pinned memory with non_blocking=True removes both waits.
std::vector<uint32_t> PageableUploadSyncs(const TraceModel& m);

struct GpuGap {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t device;
  uint32_t next_op;        // gpu_ops() index of the op that ends the gap
  uint32_t blocking_api;   // sync-wait: the blocking api call, kNone if only a sync record
  uint32_t blocking_sync;  // sync-wait: the sync record, kNone if none
  int64_t launch_ns;       // start of the next op's launching call; -1 when unknown
  GapCause cause;
  int64_t length() const { return end_ns - start_ns; }
};

struct GapOptions {
  int64_t kernel_wait_max_ns = 20'000;
  // A blocking call that returned up to this long before the gap began still
  // counts (host and GPU timestamps differ by a few microseconds).
  int64_t sync_tolerance_ns = 10'000;
  // Kernel-wait gaps are many (one per back-to-back launch) and need no rule:
  // by default they are only counted in the totals, not returned.
  bool keep_kernel_wait = false;
};

// A call in which a host thread blocked until the GPU caught up: a sync
// record other than stream-wait-event (with its api call when the trace has
// it; never cudaEventQuery/cudaStreamQuery, which return at once), a
// synchronous memcpy/memset or a memcpy to/from pageable memory (its issuing
// call), or an explicit synchronizing call by name (IsBlockingApiName) longer
// than `min_named_ns` that produced no sync record. The one definition of a
// blocking call: the sync-wait cause and the host round trips
// (rules/rule.h, RoundTrip) both read it.
struct HostBlock {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  uint32_t api;   // apis() index, kNone for a sync record without its call
  uint32_t sync;  // syncs() index, kNone for a blocking copy or named call
};
// Every blocking call of the trace, in no particular order.
std::vector<HostBlock> HostBlocks(const TraceModel& model, int64_t min_named_ns);

struct GapTotals {
  int64_t by_cause[4] = {0, 0, 0, 0};  // ns, indexed by GapCause
  int64_t count = 0;
};

// Gaps of `device`, in time order, from its flattened timeline. With windows
// (sorted, disjoint), only gaps that end inside a window count, clipped to it.
// `totals` (optional) receives the idle time per cause of every counted gap.
std::vector<GpuGap> FindGpuGaps(const TraceModel& model, const FlatTimeline& device_timeline,
                                uint32_t device, const GapOptions& options,
                                const std::vector<Interval>* windows, GapTotals* totals);

}  // namespace stepscope
