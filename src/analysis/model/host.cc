#include "analysis/model/host.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "common/stats.h"

namespace stepscope {
namespace {

bool Has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A python_function range's name as a line label: "dir/train.py(88): collate"
// -> "train.py:88 collate" (as samples name lines); other names as they are.
std::string SpanLabel(const std::string& name) {
  const size_t colon = name.find("): ");
  const size_t open = colon == std::string::npos ? std::string::npos : name.rfind('(', colon);
  if (open == std::string::npos || open == 0 || colon == open + 1) return name;
  for (size_t i = open + 1; i < colon; ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  std::string file = name.substr(0, open);
  if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  return file + ":" + name.substr(open + 1, colon - open - 1) + " " + name.substr(colon + 3);
}

struct Wait {
  int64_t start, end;
  ThreadState state;
  StringId wait;
  uint32_t callsite;
};

// OS-runtime waits and blocking CUDA calls of `tid`, by start.
std::vector<Wait> Waits(const TraceModel& m, uint32_t tid) {
  std::vector<Wait> w;
  for (uint32_t i : m.OsrtOfThread(tid)) {
    const OsrtRecord& o = m.osrt()[i];
    if (o.end_ns > o.start_ns)
      w.push_back({o.start_ns, o.end_ns, OsrtState(m.String(o.name)), o.name, o.callsite});
  }
  for (uint32_t i : m.ApisOfThread(tid)) {
    const ApiRecord& a = m.apis()[i];
    if (a.end_ns > a.start_ns && m.IsBlockingApiName(a.name))
      w.push_back(
          {a.start_ns, a.end_ns, ThreadState::kBlockedCuda, a.name, m.ApiCallsite(a.correlation)});
  }
  std::stable_sort(w.begin(), w.end(),
                   [](const Wait& a, const Wait& b) { return a.start < b.start; });
  return w;
}

}  // namespace

ThreadState OsrtState(std::string_view n) {
  if (n.empty()) return ThreadState::kBlockedOther;
  if (Has(n, "GIL") || Has(n, "take_gil")) return ThreadState::kBlockedGil;
  if (StartsWith(n, "cuda") || StartsWith(n, "cu")) return ThreadState::kBlockedCuda;
  if (Has(n, "nanosleep") || n == "sleep" || n == "usleep") return ThreadState::kSleep;
  if (Has(n, "futex") || Has(n, "pthread_cond") || Has(n, "pthread_mutex") ||
      Has(n, "pthread_rwlock") || Has(n, "pthread_join") || Has(n, "pthread_spin") ||
      StartsWith(n, "sem_") || Has(n, "mtx_") || Has(n, "cnd_"))
    return ThreadState::kBlockedLock;
  for (std::string_view io : {"read", "write", "poll", "select", "epoll", "recv", "send", "accept",
                              "connect", "wait4", "waitpid", "pipe"}) {
    if (Has(n, io)) return ThreadState::kBlockedIo;
  }
  return ThreadState::kBlockedOther;
}

const char* HostSourceName(HostSource s) {
  switch (s) {
    case HostSource::kSamples:
      return "samples";
    case HostSource::kSched:
      return "sched";
    case HostSource::kWaits:
      return "waits";
    case HostSource::kNone:
      break;
  }
  return "none";
}

std::vector<HostSegment> SampleSegments(const TraceModel& m, uint32_t tid) {
  std::vector<HostSegment> out;
  // Samples (the model keeps them by tid, then time).
  {
    const auto& s = m.samples();
    auto lo = std::lower_bound(s.begin(), s.end(), tid,
                               [](const SampleRecord& r, uint32_t t) { return r.tid < t; });
    auto hi = std::upper_bound(lo, s.end(), tid,
                               [](uint32_t t, const SampleRecord& r) { return t < r.tid; });
    if (lo != hi) {
      int64_t period = m.sample_hz() > 0 ? 1000000000 / m.sample_hz() : 0;
      if (period == 0) {  // no rate: the median gap
        std::vector<int64_t> gaps;
        for (auto it = lo; it + 1 < hi; ++it) gaps.push_back((it + 1)->ts_ns - it->ts_ns);
        if (!gaps.empty()) period = UpperMedian(&gaps);
        if (period <= 0) period = 1000000;
      }
      for (auto it = lo; it != hi; ++it) {
        int64_t len = period;
        if (m.sample_hz() <= 0 && it + 1 != hi) len = (it + 1)->ts_ns - it->ts_ns;
        out.push_back({it->ts_ns, it->ts_ns + len, it->state, it->wait, it->callsite});
      }
      return out;
    }
  }
  return out;
}

std::vector<HostSegment> ThreadSegments(const TraceModel& m, uint32_t tid, HostSource* source) {
  std::vector<HostSegment> out;
  *source = HostSource::kNone;
  const std::vector<Wait> waits = Waits(m, tid);
  // 1. Scheduling intervals, off-CPU ones explained by the waits.
  bool any_sched = false;
  size_t j = 0;
  for (uint32_t i : m.SchedOfThread(tid)) {
    const SchedRecord& r = m.sched()[i];
    if (r.end_ns <= r.start_ns) continue;
    any_sched = true;
    if (r.state == ThreadState::kRunning) {
      out.push_back({r.start_ns, r.end_ns, r.state, kNoString, 0});
      continue;
    }
    while (j < waits.size() && waits[j].end <= r.start_ns) ++j;
    int64_t t = r.start_ns;
    for (size_t k = j; k < waits.size() && waits[k].start < r.end_ns && t < r.end_ns; ++k) {
      const Wait& w = waits[k];
      if (w.end <= t) continue;
      if (w.start > t) out.push_back({t, w.start, r.state, kNoString, 0});
      const int64_t s = std::max(t, w.start), e = std::min(r.end_ns, w.end);
      out.push_back({s, e, w.state, w.wait, w.callsite});
      t = e;
    }
    if (t < r.end_ns) out.push_back({t, r.end_ns, r.state, kNoString, 0});
  }
  if (any_sched) {
    *source = HostSource::kSched;
    return out;
  }
  // 2. Samples.
  out = SampleSegments(m, tid);
  if (!out.empty()) {
    *source = HostSource::kSamples;
    return out;
  }
  // 3. The waits alone (overlaps: the earlier wait keeps the time).
  int64_t t = INT64_MIN;
  for (const Wait& w : waits) {
    const int64_t s = std::max(t, w.start);
    if (w.end <= s) continue;
    out.push_back({s, w.end, w.state, w.wait, w.callsite});
    t = w.end;
  }
  if (!out.empty()) *source = HostSource::kWaits;
  return out;
}

std::vector<uint32_t> HostThreads(const TraceModel& m) {
  std::set<uint32_t> t;
  for (const SampleRecord& s : m.samples()) t.insert(s.tid);
  for (const SchedRecord& s : m.sched()) t.insert(s.tid);
  for (const OsrtRecord& o : m.osrt()) t.insert(o.tid);
  for (const ApiRecord& a : m.apis()) t.insert(a.tid);
  return {t.begin(), t.end()};
}

bool HasHostModel(const TraceModel& m) {
  return !m.samples().empty() || !m.sched().empty() || !m.osrt().empty() ||
         !m.api_callsites().empty() || !m.callsites().empty();
}

int64_t Overlap(int64_t s, int64_t e, const std::vector<Interval>& intervals) {
  int64_t total = 0;
  auto it = std::upper_bound(intervals.begin(), intervals.end(), s,
                             [](int64_t v, const Interval& w) { return v < w.end; });
  for (; it != intervals.end() && it->start < e; ++it) {
    total += std::max<int64_t>(0, std::min(e, it->end) - std::max(s, it->start));
  }
  return total;
}

int64_t InWindows(int64_t s, int64_t e, const std::vector<Interval>& windows) {
  if (windows.empty()) return std::max<int64_t>(0, e - s);
  return Overlap(s, e, windows);
}

bool IsDataLoaderStack(const TraceModel& m, uint32_t callsite) {
  if (callsite == 0) return false;
  for (const FrameRecord* f : m.Stack(callsite)) {
    const std::string& file = m.String(f->file);
    const std::string& fn = m.String(f->function);
    if (Has(file, "torch/utils/data") || Has(fn, "_next_data") || Has(fn, "DataLoader") ||
        Has(fn, "_get_data") || Has(fn, "_try_get_data"))
      return true;
  }
  return false;
}

PythonHotspots ComputePythonHotspots(const TraceModel& m, uint32_t tid,
                                     const std::vector<Interval>& windows) {
  PythonHotspots h;
  std::map<std::string, PythonLine> lines;
  std::unordered_map<uint32_t, std::string> leaf_label;
  if (!m.samples().empty()) {
    h.source = "samples";
    std::vector<uint32_t> tids;
    if (tid != 0) {
      tids.push_back(tid);
    } else {
      std::set<uint32_t> t;
      for (const SampleRecord& s : m.samples()) t.insert(s.tid);
      tids.assign(t.begin(), t.end());
    }
    for (uint32_t t : tids) {
      for (const HostSegment& s : SampleSegments(m, t)) {
        const int64_t ns = InWindows(s.start_ns, s.end_ns, windows);
        if (ns <= 0 || s.callsite == 0) continue;
        std::vector<const FrameRecord*> stack = m.Stack(s.callsite);
        std::set<std::string> seen;
        const FrameRecord* leaf = nullptr;
        for (const FrameRecord* f : stack) {
          if (f->kind != static_cast<uint8_t>(FrameKind::kPython)) continue;
          leaf = f;
          std::string label = m.FrameLabel(*f);
          if (seen.insert(label).second) lines[label].total_ns += ns;
        }
        if (leaf == nullptr) continue;
        PythonLine& l = lines[m.FrameLabel(*leaf)];
        l.self_ns += ns;
        ++l.self_samples;
        if (s.state == ThreadState::kRunning) ++l.running_samples;
        h.total_ns += ns;
      }
    }
    if (lines.empty()) h.source.clear(), h.total_ns = 0;  // no Python frames in the samples
  }
  if (h.source.empty()) {
    StringId domain = kNoString;
    for (size_t i = 0; i < m.strings().size(); ++i) {
      if (m.strings()[i] == "python_function") domain = static_cast<StringId>(i);
    }
    std::map<uint32_t, std::vector<uint32_t>> by_tid;
    for (uint32_t i = 0; i < m.nvtx().size(); ++i) {
      const NvtxRecord& r = m.nvtx()[i];
      if (domain != kNoString && r.domain == domain && (tid == 0 || r.tid == tid))
        by_tid[r.tid].push_back(i);
    }
    if (!by_tid.empty()) h.source = "python_function spans";
    for (auto& [t, idx] : by_tid) {
      // Nesting by time: a span's self time is its length minus its children's.
      std::vector<int64_t> self(idx.size());
      std::vector<size_t> stack;
      for (size_t k = 0; k < idx.size(); ++k) {
        const int64_t s = m.nvtx()[idx[k]].start_ns, e = m.RangeEnd(idx[k]);
        while (!stack.empty() && m.RangeEnd(idx[stack.back()]) <= s) stack.pop_back();
        self[k] = e - s;
        if (!stack.empty()) self[stack.back()] -= e - s;
        stack.push_back(k);
      }
      for (size_t k = 0; k < idx.size(); ++k) {
        const NvtxRecord& r = m.nvtx()[idx[k]];
        if (InWindows(r.start_ns, r.start_ns + 1, windows) <= 0) continue;
        PythonLine& l = lines[SpanLabel(m.String(r.name))];
        l.self_ns += std::max<int64_t>(0, self[k]);
        l.total_ns += m.RangeEnd(idx[k]) - r.start_ns;
        h.total_ns += std::max<int64_t>(0, self[k]);
      }
    }
  }
  for (auto& [label, l] : lines) {
    l.label = label;
    h.lines.push_back(l);
  }
  std::stable_sort(h.lines.begin(), h.lines.end(), [](const PythonLine& a, const PythonLine& b) {
    return a.self_ns != b.self_ns ? a.self_ns > b.self_ns : a.total_ns > b.total_ns;
  });
  return h;
}

}  // namespace stepscope
