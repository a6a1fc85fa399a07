#include "export/counters.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "format/records.h"
#include "store/timeline_rows.h"

namespace stepscope {

int64_t AutoBucketNs(int64_t first_ns, int64_t last_ns, int target_buckets) {
  int64_t span = 1;
  if (__builtin_sub_overflow(last_ns, first_ns, &span) || span < 1) span = 1;
  int64_t raw = span / std::max(target_buckets, 1);
  // 1-2-5 steps of microseconds: 1us 2us 5us 10us ... 1s 2s 5s ...
  int64_t step = 1000;
  while (true) {
    for (int64_t m : {1, 2, 5}) {
      if (step * m >= raw) return step * m;
    }
    if (step > std::numeric_limits<int64_t>::max() / 100) return step;
    step *= 10;
  }
}

namespace {

// Adds the interval [a, b) to per-bucket busy time.
void AddBusy(std::vector<int64_t>* busy, int64_t t0, int64_t bucket, int64_t a, int64_t b) {
  if (b <= a) return;
  size_t first = static_cast<size_t>((a - t0) / bucket);
  size_t last = static_cast<size_t>((b - 1 - t0) / bucket);
  if (busy->size() <= last) busy->resize(last + 1, 0);
  for (size_t i = first; i <= last; ++i) {
    int64_t lo = t0 + static_cast<int64_t>(i) * bucket;
    int64_t hi = lo + bucket;
    (*busy)[i] += std::min(b, hi) - std::max(a, lo);
  }
}

}  // namespace

StatusOr<std::vector<DeviceSeries>> GpuUtilizationSeries(const TraceReader& reader,
                                                         int64_t bucket_ns,
                                                         int64_t* used_bucket_ns) {
  ASSIGN_OR_RETURN(KernelExtent extent, LoadKernelExtent(reader.db()));
  if (extent.count == 0) {
    if (used_bucket_ns) *used_bucket_ns = bucket_ns > 0 ? bucket_ns : 0;
    return std::vector<DeviceSeries>{};
  }
  const int64_t t0 = extent.first_start_ns, t_last = extent.last_end_ns;
  if (bucket_ns <= 0) bucket_ns = AutoBucketNs(t0, t_last, 2000);
  int64_t span = 0;
  if (__builtin_sub_overflow(t_last, t0, &span)) {
    return InvalidInput("kernel times from " + std::to_string(t0) + " to " +
                        std::to_string(t_last) + " ns overflow: the trace's times are damaged");
  }
  if (span / bucket_ns > 50'000'000) {
    return InvalidInput("GPU utilization bucket of " + std::to_string(bucket_ns) +
                        " ns gives more than 50 million buckets; choose a larger bucket");
  }
  if (used_bucket_ns) *used_bucket_ns = bucket_ns;

  struct Acc {
    int64_t cs = 0, ce = -1;  // current union interval [cs, ce)
    bool open = false;
    std::vector<int64_t> busy;
  };
  std::map<uint32_t, Acc> acc;
  ASSIGN_OR_RETURN(RowCursor<KernelSpanRow> st, KernelSpansByStart(reader.db()));
  while (st.Next()) {
    Acc& a = acc[static_cast<uint32_t>(st.row().device)];
    int64_t s = st.row().start_ns, e = std::max(st.row().start_ns, st.row().end_ns);
    if (a.open && s <= a.ce) {
      a.ce = std::max(a.ce, e);
      continue;
    }
    if (a.open) AddBusy(&a.busy, t0, bucket_ns, a.cs, a.ce);
    a.cs = s;
    a.ce = e;
    a.open = true;
  }
  RETURN_IF_ERROR(st.status());
  std::vector<DeviceSeries> out;
  for (auto& [device, a] : acc) {
    if (a.open) AddBusy(&a.busy, t0, bucket_ns, a.cs, a.ce);
    DeviceSeries s;
    s.device = device;
    s.points.reserve(a.busy.size());
    for (size_t i = 0; i < a.busy.size(); ++i) {
      int64_t lo = t0 + static_cast<int64_t>(i) * bucket_ns;
      // The last bucket ends at the last kernel end: measure it over its real width.
      int64_t width = std::min(bucket_ns, std::max<int64_t>(t_last - lo, 1));
      s.points.push_back({lo, 100.0 * static_cast<double>(a.busy[i]) / static_cast<double>(width)});
    }
    out.push_back(std::move(s));
  }
  return out;
}

StatusOr<std::vector<DeviceSeries>> DeviceMemorySeries(const TraceReader& reader,
                                                       int64_t* unknown_frees) {
  int64_t unknown = 0;
  struct Acc {
    std::unordered_map<uint64_t, uint64_t> live;  // address -> bytes
    int64_t in_use = 0;
    DeviceSeries series;
  };
  std::map<uint32_t, Acc> acc;
  ASSIGN_OR_RETURN(RowCursor<DeviceMemoryRow> st, DeviceMemoryRows(reader.db()));
  while (st.Next()) {
    const DeviceMemoryRow& r = st.row();
    int64_t ts = r.ts_ns;
    auto op = static_cast<MemoryOp>(r.op);
    uint64_t address = static_cast<uint64_t>(r.address);
    uint64_t bytes = static_cast<uint64_t>(r.bytes);
    Acc& a = acc[static_cast<uint32_t>(r.device)];
    a.series.device = static_cast<uint32_t>(r.device);
    if (op == MemoryOp::kAlloc) {
      auto [it, inserted] = a.live.emplace(address, bytes);
      if (!inserted) {  // a second alloc at a live address: its free was not traced
        a.in_use -= static_cast<int64_t>(it->second);
        it->second = bytes;
      }
      a.in_use += static_cast<int64_t>(bytes);
    } else if (op == MemoryOp::kFree) {
      auto it = a.live.find(address);
      if (it == a.live.end()) {
        ++unknown;
        continue;
      }
      a.in_use -= static_cast<int64_t>(it->second);
      a.live.erase(it);
    } else {
      continue;
    }
    auto& pts = a.series.points;
    if (!pts.empty() && pts.back().ts_ns == ts) {
      pts.back().value = static_cast<double>(a.in_use);
    } else {
      pts.push_back({ts, static_cast<double>(a.in_use)});
    }
  }
  RETURN_IF_ERROR(st.status());
  if (unknown_frees) *unknown_frees = unknown;
  std::vector<DeviceSeries> out;
  for (auto& [device, a] : acc) {
    if (!a.series.points.empty()) out.push_back(std::move(a.series));
  }
  return out;
}

}  // namespace stepscope
