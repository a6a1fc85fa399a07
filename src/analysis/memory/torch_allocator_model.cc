#include "analysis/memory/torch_allocator_model.h"

#include <algorithm>
#include <unordered_map>

#include "common/strings.h"

namespace stepscope::memory {

uint64_t BlockModel::RoundSize(uint64_t requested) {
  if (requested < kTorchMinBlockSize) return kTorchMinBlockSize;
  return (requested + kTorchMinBlockSize - 1) / kTorchMinBlockSize * kTorchMinBlockSize;
}

template <typename V>
void BlockModel::Carve(std::map<uint64_t, V>& ranges, uint64_t start, uint64_t end) {
  auto end_of = [](const auto& it) -> uint64_t {
    if constexpr (std::is_same_v<V, uint64_t>) {
      return it->second;
    } else {
      return it->second.end;
    }
  };
  auto it = ranges.upper_bound(start);
  if (it != ranges.begin()) --it;
  while (it != ranges.end() && it->first < end) {
    uint64_t s = it->first, e = end_of(it);
    if (e <= start) {
      ++it;
      continue;
    }
    V value = it->second;
    it = ranges.erase(it);
    if (s < start) {
      V left = value;
      if constexpr (std::is_same_v<V, uint64_t>) {
        left = start;
      } else {
        left.end = start;
      }
      ranges.emplace(s, left);
    }
    if (e > end) {
      V right = value;
      if constexpr (std::is_same_v<V, uint64_t>) {
        right = e;
      } else {
        right.end = e;
      }
      it = ranges.emplace(end, right).first;
      ++it;
    }
  }
}

void BlockModel::AddSegment(uint64_t address, uint64_t size, bool mapped) {
  uint64_t start = address, end = address + size;
  Carve(segments_, start, end);
  Carve(free_, start, end);
  if (mapped) {  // grow an adjacent mapped segment
    auto next = segments_.find(end);
    if (next != segments_.end() && next->second.mapped) {
      end = next->second.end;
      segments_.erase(next);
    }
    auto prev = segments_.lower_bound(start);
    if (prev != segments_.begin()) {
      --prev;
      if (prev->second.mapped && prev->second.end == start) {
        start = prev->first;
        segments_.erase(prev);
      }
    }
  }
  segments_[start] = {end, mapped};
  Free(address, size);
}

void BlockModel::RemoveSegment(uint64_t address, uint64_t size) {
  Carve(segments_, address, address + size);
  Carve(free_, address, address + size);
}

uint64_t BlockModel::Alloc(uint64_t address, uint64_t requested) {
  const uint64_t rounded = RoundSize(requested);
  auto it = free_.upper_bound(address);
  if (it == free_.begin()) {
    ++misses_;
    return rounded;
  }
  --it;
  if (it->first != address || it->second - address < rounded) {
    ++misses_;
    Carve(free_, address, address + rounded);
    return rounded;
  }
  const uint64_t avail = it->second - address;
  const uint64_t remaining = avail - rounded;
  bool small = requested <= kTorchSmallSize;
  bool split;
  if (small || expandable_) {
    split = remaining >= kTorchMinBlockSize;
  } else {
    split = remaining > kTorchSmallSize &&
            (max_split_size_ < 0 || rounded < static_cast<uint64_t>(max_split_size_));
  }
  uint64_t block = split ? rounded : avail;
  Carve(free_, address, address + block);
  return block;
}

void BlockModel::Free(uint64_t address, uint64_t block_size) {
  auto seg = segments_.upper_bound(address);
  if (seg == segments_.begin()) {
    ++misses_;
    return;
  }
  --seg;
  if (address >= seg->second.end) {
    ++misses_;
    return;
  }
  uint64_t start = address, end = std::min(address + block_size, seg->second.end);
  Carve(free_, start, end);  // overlapping free space means the model drifted; keep it sane
  auto next = free_.find(end);
  if (next != free_.end() && end < seg->second.end) {
    end = next->second;
    free_.erase(next);
  }
  auto prev = free_.lower_bound(start);
  if (prev != free_.begin()) {
    --prev;
    if (prev->second == start && prev->first >= seg->first) {
      start = prev->first;
      free_.erase(prev);
    }
  }
  free_[start] = end;
}

std::vector<const TorchTensor*> TorchDeviceProfile::LiveAt(size_t index) const {
  std::vector<const TorchTensor*> out;
  for (const TorchTensor& t : tensors) {
    if (t.alloc_index > index) break;
    if (index < t.free_index) out.push_back(&t);
  }
  std::stable_sort(out.begin(), out.end(), [](const TorchTensor* a, const TorchTensor* b) {
    return a->block_size > b->block_size;
  });
  return out;
}

namespace {

// Pass 1 over the history: each tensor's life and block size, the OOMs it
// recorded, and the change of allocated and reserved bytes at each entry.
void ReplayHistory(const TorchMemoryFile& f, const TorchDevice& d, int64_t offset_ns,
                   TorchDeviceProfile* p, std::vector<int64_t>* d_alloc_out,
                   std::vector<int64_t>* d_res_out) {
  auto to_ns = [&](int64_t time_us) { return time_us * 1000 - offset_ns; };
  BlockModel model(f.expandable_segments, f.max_split_size);
  std::unordered_map<uint64_t, size_t> live;          // address -> index in p->tensors
  std::unordered_map<uint64_t, uint64_t> last_block;  // address -> block size of its last alloc
  std::vector<int64_t>& d_alloc = *d_alloc_out;
  std::vector<int64_t>& d_res = *d_res_out;
  d_alloc.assign(d.trace.size(), 0);
  d_res.assign(d.trace.size(), 0);
  for (size_t i = 0; i < d.trace.size(); ++i) {
    const TorchTraceEntry& e = d.trace[i];
    switch (e.action) {
      case TorchAction::kSegmentAlloc:
      case TorchAction::kSegmentMap:
        model.AddSegment(e.addr, e.size, e.action == TorchAction::kSegmentMap);
        d_res[i] = static_cast<int64_t>(e.size);
        break;
      case TorchAction::kSegmentFree:
      case TorchAction::kSegmentUnmap:
        model.RemoveSegment(e.addr, e.size);
        d_res[i] = -static_cast<int64_t>(e.size);
        break;
      case TorchAction::kAlloc: {
        auto it = live.find(e.addr);
        if (it != live.end()) {  // its free was not recorded: close it here
          p->tensors[it->second].free_index = i;
          d_alloc[i] -= static_cast<int64_t>(p->tensors[it->second].block_size);
          live.erase(it);
        }
        TorchTensor t;
        t.address = e.addr;
        t.requested = e.size;
        t.block_size = model.Alloc(e.addr, e.size);
        t.alloc_ns = to_ns(e.time_us);
        t.stack = e.stack;
        t.alloc_index = i;
        d_alloc[i] += static_cast<int64_t>(t.block_size);
        last_block[e.addr] = t.block_size;
        live[e.addr] = p->tensors.size();
        p->tensors.push_back(t);
        break;
      }
      case TorchAction::kFreeRequested: {
        auto it = live.find(e.addr);
        if (it == live.end()) {
          ++p->unknown_frees;
          break;
        }
        p->tensors[it->second].free_index = i;
        d_alloc[i] = -static_cast<int64_t>(p->tensors[it->second].block_size);
        live.erase(it);
        break;
      }
      case TorchAction::kFreeCompleted: {
        auto it = last_block.find(e.addr);
        model.Free(e.addr, it != last_block.end() ? it->second : BlockModel::RoundSize(e.size));
        break;
      }
      case TorchAction::kOom: {
        TorchOomAt o;
        o.ts_ns = to_ns(e.time_us);
        o.requested = static_cast<int64_t>(e.size);
        o.device_free = static_cast<int64_t>(e.addr);
        o.index = i;
        o.stack = e.stack;
        p->ooms.push_back(o);
        break;
      }
      default:
        break;
    }
  }
  p->model_misses = model.misses();
}

// Baseline from the final segments when the history may have lost its start.
void StartFromSnapshot(const TorchDevice& d, const std::vector<int64_t>& d_alloc,
                       const std::vector<int64_t>& d_res, TorchDeviceProfile* p) {
  int64_t sum_alloc = 0, sum_res = 0;
  for (size_t i = 0; i < d.trace.size(); ++i) {
    sum_alloc += d_alloc[i];
    sum_res += d_res[i];
  }
  if (!d.segments.empty()) {
    p->snapshot_allocated = p->snapshot_reserved = 0;
    for (const TorchSegment& s : d.segments) {
      p->snapshot_reserved += static_cast<int64_t>(s.total_size);
      for (const TorchBlock& b : s.blocks) {
        if (b.state == TorchBlockState::kActiveAllocated) {
          p->snapshot_allocated += static_cast<int64_t>(b.size);
        }
      }
    }
  }
  if (p->history_full && p->snapshot_reserved >= 0) {
    p->start_allocated = std::max<int64_t>(0, p->snapshot_allocated - sum_alloc);
    p->start_reserved = std::max<int64_t>(0, p->snapshot_reserved - sum_res);
  }
}

// Pass 2: running totals, peaks, timeline.
void RunningTotals(const TorchDevice& d, int64_t offset_ns, const std::vector<int64_t>& d_alloc,
                   const std::vector<int64_t>& d_res, TorchDeviceProfile* p) {
  auto to_ns = [&](int64_t time_us) { return time_us * 1000 - offset_ns; };
  int64_t alloc = p->start_allocated, res = p->start_reserved;
  p->peak_allocated = static_cast<uint64_t>(alloc);
  p->peak_reserved = static_cast<uint64_t>(res);
  for (size_t i = 0; i < d.trace.size(); ++i) {
    int64_t ts = to_ns(d.trace[i].time_us);
    if (d_alloc[i] != 0) {
      alloc += d_alloc[i];
      p->timeline.push_back({ts, d.device, SeriesKind::kTorchAllocated,
                             static_cast<uint64_t>(std::max<int64_t>(0, alloc))});
      if (alloc > static_cast<int64_t>(p->peak_allocated)) {
        p->peak_allocated = static_cast<uint64_t>(alloc);
        p->peak_allocated_ns = ts;
        p->peak_allocated_index = i;
      }
    }
    if (d_res[i] != 0) {
      res += d_res[i];
      p->timeline.push_back({ts, d.device, SeriesKind::kTorchReserved,
                             static_cast<uint64_t>(std::max<int64_t>(0, res))});
      if (res > static_cast<int64_t>(p->peak_reserved)) {
        p->peak_reserved = static_cast<uint64_t>(res);
        p->peak_reserved_ns = ts;
      }
    }
  }
  p->end_allocated = alloc;
  p->end_reserved = res;
}

// OOMs seen by the observer but absent from the history (skip_actions, or a
// history recorded without them): place them by time.
void PlaceObservedOoms(const TorchMemoryFile& f, const TorchDevice& d, int64_t offset_ns,
                       TorchDeviceProfile* p) {
  auto to_ns = [&](int64_t time_us) { return time_us * 1000 - offset_ns; };
  for (const TorchOom& o : f.ooms) {
    if (o.device != d.device) continue;
    int64_t ts = o.time_unix_ns - offset_ns;
    TorchOomAt* match = nullptr;
    for (TorchOomAt& h : p->ooms) {
      if (h.requested == o.requested && std::llabs(h.ts_ns - ts) < 5'000'000'000LL) match = &h;
    }
    if (!match) {
      TorchOomAt n;
      n.ts_ns = ts;
      n.requested = o.requested;
      for (size_t i = 0; i < d.trace.size(); ++i) {
        if (to_ns(d.trace[i].time_us) <= ts) n.index = i;
      }
      p->ooms.push_back(n);
      match = &p->ooms.back();
    }
    if (o.device_free >= 0) match->device_free = o.device_free;
    match->device_allocated = o.device_allocated;
    match->total = o.total;
  }
}

TorchDeviceProfile BuildOne(const TorchMemoryFile& f, const TorchDevice& d, int64_t offset_ns) {
  TorchDeviceProfile p;
  p.device = d.device;
  p.counters = d.counters;
  p.entries = d.trace.size();
  p.history_full = f.max_entries > 0 && d.trace.size() >= static_cast<uint64_t>(f.max_entries);
  std::vector<int64_t> d_alloc, d_res;
  ReplayHistory(f, d, offset_ns, &p, &d_alloc, &d_res);
  StartFromSnapshot(d, d_alloc, d_res, &p);
  RunningTotals(d, offset_ns, d_alloc, d_res, &p);
  PlaceObservedOoms(f, d, offset_ns, &p);
  return p;
}

bool IsInternalFile(const std::string& f) {
  if (f.empty() || f[0] == '<') return true;  // <frozen ...>, <string>
  if (f.find("/torch/") != std::string::npos) return true;
  if (f.find("/stepscope/") != std::string::npos) return true;
  if (f.find("/lib/python3") != std::string::npos && f.find("-packages/") == std::string::npos) {
    return true;  // the standard library
  }
  return false;
}

}  // namespace

std::vector<TorchDeviceProfile> BuildTorchProfiles(const TorchMemoryFile& file,
                                                   int64_t wall_clock_offset_ns) {
  std::vector<TorchDeviceProfile> out;
  for (const TorchDevice& d : file.devices) out.push_back(BuildOne(file, d, wall_clock_offset_ns));
  return out;
}

const TorchFrame* UserFrame(const TorchMemoryFile& file, int32_t stack) {
  if (stack < 0 || static_cast<size_t>(stack) >= file.stacks.size()) return nullptr;
  const TorchFrame* first = nullptr;
  for (int32_t fi : file.stacks[static_cast<size_t>(stack)]) {
    if (fi < 0) continue;
    const TorchFrame& fr = file.frames[static_cast<size_t>(fi)];
    if (!first) first = &fr;
    if (!IsInternalFile(fr.file)) return &fr;
  }
  return first;
}

std::string FrameLabel(const TorchFrame* frame) {
  if (!frame) return "(no Python stack)";
  std::string file = frame->file;
  size_t slash = file.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    size_t prev = file.rfind('/', slash - 1);
    if (prev != std::string::npos) file = file.substr(prev + 1);
  }
  return file + ":" + std::to_string(frame->line) + " " + frame->function;
}

}  // namespace stepscope::memory
