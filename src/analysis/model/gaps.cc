#include "analysis/model/gaps.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope {

bool IsQueryApiName(std::string_view n) {
  return n == "cudaEventQuery" || n == "cudaStreamQuery" || n == "cuEventQuery" ||
         n == "cuStreamQuery";
}

const char* GapCauseName(GapCause c) {
  switch (c) {
    case GapCause::kHostWait:
      return "host-wait";
    case GapCause::kSyncWait:
      return "sync-wait";
    case GapCause::kKernelWait:
      return "kernel-wait";
    case GapCause::kOther:
      return "other";
  }
  return "other";
}

bool IsPageableCopy(const MemcpyRecord& r) {
  return r.src_kind == MemoryKind::kPageable || r.dst_kind == MemoryKind::kPageable;
}

std::vector<uint32_t> PageableUploadSyncs(const TraceModel& m) {
  std::vector<uint32_t> sync(m.apis().size(), kNone);
  for (const MemcpyRecord& r : m.memcpys()) {
    if (r.copy_kind != CopyKind::kHostToDevice || !IsPageableCopy(r) || !r.correlation) continue;
    const uint32_t api = m.ApiByCorrelation(r.correlation);
    if (api == kNone) continue;
    const std::vector<uint32_t>& calls = m.ApisOfThread(m.apis()[api].tid);
    auto it = std::lower_bound(calls.begin(), calls.end(), api, [&](uint32_t a, uint32_t b) {
      return m.apis()[a].start_ns < m.apis()[b].start_ns;
    });
    while (it != calls.end() && *it != api) ++it;  // equal starts
    if (it == calls.end() || ++it == calls.end()) continue;
    if (m.ApiName(*it).find("StreamSynchronize") != std::string_view::npos) sync[api] = *it;
  }
  return sync;
}

std::vector<HostBlock> HostBlocks(const TraceModel& m, int64_t min_named_ns) {
  std::vector<HostBlock> blocks;
  for (size_t i = 0; i < m.syncs().size(); ++i) {
    const SyncRecord& s = m.syncs()[i];
    if (s.type == SyncType::kStreamWaitEvent) continue;
    uint32_t api = s.correlation ? m.ApiByCorrelation(s.correlation) : kNone;
    // CUPTI records cudaEventQuery/cudaStreamQuery as an event/stream sync,
    // but a query returns at once whether or not the work is done: it never
    // makes the host wait for the GPU.
    if (api != kNone && IsQueryApiName(m.ApiName(api))) continue;
    uint32_t tid = api != kNone ? m.apis()[api].tid : s.tid;
    int64_t start = s.start_ns, end = s.end_ns;
    if (api != kNone) {
      start = std::min(start, m.apis()[api].start_ns);
      end = std::max(end, m.apis()[api].end_ns);
    }
    blocks.push_back({start, end, tid, api, static_cast<uint32_t>(i)});
  }
  auto copy_blocks = [&](uint32_t corr, bool blocking) {
    if (!blocking || corr == 0) return;
    uint32_t api = m.ApiByCorrelation(corr);
    if (api == kNone) return;
    const ApiRecord& a = m.apis()[api];
    blocks.push_back({a.start_ns, a.end_ns, a.tid, api, kNone});
  };
  for (const MemcpyRecord& c : m.memcpys()) {
    // A pageable copy blocks the host whichever call issued it; an unknown
    // is_async (imported, no issuing call) is not taken as blocking.
    copy_blocks(c.correlation, c.is_async == 0 || IsPageableCopy(c));
  }
  for (const MemsetRecord& s : m.memsets()) copy_blocks(s.correlation, s.is_async == 0);
  for (size_t i = 0; i < m.apis().size(); ++i) {
    // Explicit synchronizing calls that produced no sync record.
    const ApiRecord& a = m.apis()[i];
    if (a.end_ns - a.start_ns > min_named_ns && m.IsBlockingApiName(a.name)) {
      blocks.push_back({a.start_ns, a.end_ns, a.tid, static_cast<uint32_t>(i), kNone});
    }
  }
  return blocks;
}

std::vector<GpuGap> FindGpuGaps(const TraceModel& m, const FlatTimeline& tl, uint32_t device,
                                const GapOptions& opt, const std::vector<Interval>* windows,
                                GapTotals* totals) {
  std::vector<GpuGap> gaps;
  const auto& segs = tl.segments();
  if (segs.size() < 2) return gaps;

  // Blocking intervals per thread, sorted by end.
  std::unordered_map<uint32_t, std::vector<HostBlock>> blocks;
  for (const HostBlock& b : HostBlocks(m, opt.kernel_wait_max_ns)) blocks[b.tid].push_back(b);
  for (auto& [tid, v] : blocks) {
    std::sort(v.begin(), v.end(),
              [](const HostBlock& a, const HostBlock& b) { return a.end_ns < b.end_ns; });
  }

  const auto& ops = m.gpu_ops();
  for (size_t k = 1; k < segs.size(); ++k) {
    int64_t g0 = segs[k - 1].end;
    const int64_t g1 = segs[k].start;
    if (g1 <= g0) continue;
    if (windows) {
      // Only gaps ending inside a window, clipped to it.
      auto w = std::partition_point(windows->begin(), windows->end(),
                                    [&](const Interval& x) { return x.end < g1; });
      if (w == windows->end() || w->start > g1) continue;
      g0 = std::max(g0, w->start);
      if (g1 <= g0) continue;
    }
    GpuGap g{g0, g1, device, kNone, kNone, kNone, -1, GapCause::kOther};
    auto it = std::partition_point(ops.begin(), ops.end(),
                                   [&](const GpuOp& o) { return o.start_ns < g1; });
    for (; it != ops.end() && it->start_ns == g1; ++it) {
      if (it->device == device) {
        g.next_op = static_cast<uint32_t>(it - ops.begin());
        break;
      }
    }
    const uint32_t api = g.next_op == kNone ? kNone : ops[g.next_op].api;
    if (api != kNone) {
      const ApiRecord& a = m.apis()[api];
      g.launch_ns = a.start_ns;
      // Sync-wait: the launching thread (or the main thread) returned from a
      // blocking call during the gap, before issuing the next op.
      for (uint32_t tid : {a.tid, m.main_tid()}) {
        auto b = blocks.find(tid);
        if (b == blocks.end()) continue;
        const std::vector<HostBlock>& v = b->second;
        auto pos = std::partition_point(v.begin(), v.end(),
                                        [&](const HostBlock& x) { return x.end_ns <= a.start_ns; });
        if (pos != v.begin()) {
          const HostBlock& x = *(pos - 1);
          if (x.end_ns >= g0 - opt.sync_tolerance_ns && x.start_ns < g1) {
            g.cause = GapCause::kSyncWait;
            g.blocking_api = x.api;
            g.blocking_sync = x.sync;
            break;
          }
        }
        if (tid == m.main_tid()) break;
      }
      if (g.cause != GapCause::kSyncWait) {
        if (a.start_ns > g0) {
          g.cause = GapCause::kHostWait;
        } else if (g1 - g0 <= opt.kernel_wait_max_ns) {
          g.cause = GapCause::kKernelWait;
        }
      }
    }
    if (totals) {
      totals->by_cause[static_cast<int>(g.cause)] += g1 - g0;
      ++totals->count;
    }
    if (g.cause != GapCause::kKernelWait || opt.keep_kernel_wait) gaps.push_back(g);
  }
  return gaps;
}

}  // namespace stepscope
