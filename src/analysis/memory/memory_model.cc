#include "analysis/memory/memory_model.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope::memory {

const char* SeriesKindName(SeriesKind k) {
  switch (k) {
    case SeriesKind::kDevice:
      return "device";
    case SeriesKind::kPool:
      return "pool";
    case SeriesKind::kManaged:
      return "managed";
    case SeriesKind::kPinned:
      return "pinned";
    case SeriesKind::kHostMalloc:
      return "host-malloc";
    case SeriesKind::kHostMmap:
      return "host-mmap";
    case SeriesKind::kOther:
      return "other";
    case SeriesKind::kTotal:
      return "total";
    case SeriesKind::kTorchAllocated:
      return "torch-allocated";
    case SeriesKind::kTorchReserved:
      return "torch-reserved";
  }
  return "?";
}

bool CountsTowardTotal(SeriesKind k) {
  switch (k) {
    case SeriesKind::kDevice:
    case SeriesKind::kPool:
    case SeriesKind::kOther:
    case SeriesKind::kHostMalloc:
    case SeriesKind::kHostMmap:
      return true;
    default:
      return false;
  }
}

std::string PlaceName(int32_t place) {
  return place == kHostPlace ? "host" : "gpu" + std::to_string(place);
}

namespace {

bool InSeries(const Allocation& a, SeriesKey key) {
  if (a.place != key.place) return false;
  return key.kind == SeriesKind::kTotal ? CountsTowardTotal(a.kind) : a.kind == key.kind;
}

struct Counter {
  uint64_t bytes = 0;
  SeriesStats* stats = nullptr;
};

}  // namespace

std::vector<const Allocation*> MemoryProfile::LiveAfter(size_t event, SeriesKey key) const {
  std::vector<const Allocation*> out;
  for (const Allocation& a : allocations) {
    if (a.alloc_event > event) break;  // allocations are in event order
    if (a.LiveAfter(event) && InSeries(a, key)) out.push_back(&a);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Allocation* x, const Allocation* y) { return x->bytes > y->bytes; });
  return out;
}

uint64_t MemoryProfile::BytesAfter(size_t event, SeriesKey key) const {
  uint64_t sum = 0;
  for (const Allocation* a : LiveAfter(event, key)) sum += a->bytes;
  return sum;
}

MemoryProfile BuildMemoryProfile(const std::vector<AllocEvent>& events,
                                 std::vector<TimelinePoint>* timeline) {
  MemoryProfile p;
  p.num_events = events.size();
  std::unordered_map<uint64_t, size_t> live;  // address -> index in p.allocations
  std::map<SeriesKey, Counter> counters;
  auto counter = [&](SeriesKey key) -> Counter& {
    Counter& c = counters[key];
    if (!c.stats) c.stats = &p.series[key];
    return c;
  };
  auto add = [&](size_t i, const AllocEvent& e, SeriesKind kind, int32_t place, int64_t delta) {
    SeriesKey keys[2] = {{place, kind}, {place, SeriesKind::kTotal}};
    int n = CountsTowardTotal(kind) ? 2 : 1;
    for (int k = 0; k < n; ++k) {
      Counter& c = counter(keys[k]);
      c.bytes = static_cast<uint64_t>(static_cast<int64_t>(c.bytes) + delta);
      if (delta > 0 && (c.bytes > c.stats->peak_bytes || c.stats->peak_event == kNever)) {
        c.stats->peak_bytes = c.bytes;
        c.stats->peak_ns = e.ts_ns;
        c.stats->peak_event = i;
      }
      c.stats->end_bytes = c.bytes;
      if (timeline) timeline->push_back({e.ts_ns, place, keys[k].kind, c.bytes});
    }
  };
  auto close = [&](size_t idx, size_t i, int64_t ts) {
    Allocation& a = p.allocations[idx];
    a.free_event = i;
    a.free_ns = ts;
    ++counter({a.place, a.kind}).stats->frees;
    if (CountsTowardTotal(a.kind)) ++counter({a.place, SeriesKind::kTotal}).stats->frees;
  };

  for (size_t i = 0; i < events.size(); ++i) {
    const AllocEvent& e = events[i];
    if (e.op == MemoryOp::kAlloc) {
      auto it = live.find(e.address);
      if (it != live.end()) {  // the free of the previous allocation was lost
        ++p.quality.realloc_of_live;
        const Allocation& old = p.allocations[it->second];
        add(i, e, old.kind, old.place, -static_cast<int64_t>(old.bytes));
        close(it->second, i, e.ts_ns);
        live.erase(it);
      }
      Allocation a;
      a.alloc_event = i;
      a.alloc_ns = e.ts_ns;
      a.address = e.address;
      a.bytes = e.bytes;
      a.kind = e.kind;
      a.place = e.place;
      a.tid = e.tid;
      a.stream = e.stream;
      a.api = e.api;
      live[e.address] = p.allocations.size();
      p.allocations.push_back(a);
      ++counter({e.place, e.kind}).stats->allocs;
      if (CountsTowardTotal(e.kind)) ++counter({e.place, SeriesKind::kTotal}).stats->allocs;
      add(i, e, e.kind, e.place, static_cast<int64_t>(e.bytes));
    } else if (e.op == MemoryOp::kFree) {
      if (e.address == 0) {
        ++p.quality.null_frees;
        continue;
      }
      auto it = live.find(e.address);
      if (it == live.end()) {
        ++p.quality.unknown_frees;
        p.quality.unknown_free_bytes += e.bytes;
        continue;
      }
      const Allocation& a = p.allocations[it->second];
      add(i, e, a.kind, a.place, -static_cast<int64_t>(a.bytes));
      close(it->second, i, e.ts_ns);
      live.erase(it);
    } else {
      ++p.quality.unknown_ops;
    }
  }
  return p;
}

size_t LastEventAtOrBefore(const std::vector<AllocEvent>& events, int64_t ts_ns) {
  auto ub = std::upper_bound(events.begin(), events.end(), ts_ns,
                             [](int64_t t, const AllocEvent& e) { return t < e.ts_ns; });
  return ub == events.begin() ? kNever : static_cast<size_t>(ub - events.begin()) - 1;
}

std::vector<TimelinePoint> DownsampleTimeline(const std::vector<TimelinePoint>& points,
                                              size_t max_points_per_series) {
  std::map<SeriesKey, std::vector<size_t>> by_series;
  for (size_t i = 0; i < points.size(); ++i) {
    by_series[{points[i].place, points[i].kind}].push_back(i);
  }
  std::vector<size_t> keep;
  size_t buckets = std::max<size_t>(1, max_points_per_series / 2);
  for (const auto& [key, idx] : by_series) {
    if (idx.size() <= max_points_per_series || max_points_per_series < 2) {
      keep.insert(keep.end(), idx.begin(), idx.end());
      continue;
    }
    int64_t t0 = points[idx.front()].ts_ns, t1 = points[idx.back()].ts_ns;
    double width = static_cast<double>(t1 - t0) / static_cast<double>(buckets) + 1e-9;
    size_t b = 0, lo = kNever, hi = kNever;
    auto flush = [&]() {
      if (lo == kNever) return;
      keep.push_back(std::min(lo, hi));
      if (hi != lo) keep.push_back(std::max(lo, hi));
      lo = hi = kNever;
    };
    for (size_t i : idx) {
      size_t bi = std::min(buckets - 1,
                           static_cast<size_t>(static_cast<double>(points[i].ts_ns - t0) / width));
      if (bi != b) {
        flush();
        b = bi;
      }
      if (lo == kNever || points[i].bytes < points[lo].bytes) lo = i;
      if (hi == kNever || points[i].bytes > points[hi].bytes) hi = i;
    }
    flush();
  }
  std::sort(keep.begin(), keep.end());
  std::vector<TimelinePoint> out;
  out.reserve(keep.size());
  for (size_t i : keep) out.push_back(points[i]);
  return out;
}

}  // namespace stepscope::memory
