#include "export/timeline.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <type_traits>

#include "common/intervals.h"
#include "common/step_names.h"
#include "common/strings.h"
#include "export/counters.h"
#include "format/gpu_metric_names.h"
#include "format/records.h"
#include "store/callsite_interner.h"
#include "store/string_ids.h"
#include "store/timeline_rows.h"

namespace stepscope {
namespace {

constexpr int64_t kGpuChromePidBase = 1'000'000'000;   // pseudo pid of GPU d: base + d
constexpr int64_t kLaneChromeTidBase = 1'500'000'000;  // pseudo tids of overlap lanes
constexpr int kFlowChildBits = 24;                     // flow id = correlation << 24 | child

// Which GPU activities share a correlation id with an API call: the flow
// index. Sorted by correlation; about 16 bytes per distinct id.
class CorrelationIndex {
 public:
  struct Entry {
    uint32_t correlation;
    uint32_t gpu_count;   // GPU activities with this id
    uint32_t next_child;  // flows handed out so far on the GPU side
    bool has_api;
    bool api_done;  // flows already attached to an API call
  };

  Status Build(const TraceReader& reader) {
    ASSIGN_OR_RETURN(std::vector<uint32_t> ids, GpuCorrelationIds(reader.db()));
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size();) {
      size_t j = i;
      while (j < ids.size() && ids[j] == ids[i]) ++j;
      entries_.push_back({ids[i], static_cast<uint32_t>(j - i), 0, false, false});
      i = j;
    }
    ASSIGN_OR_RETURN(RowCursor<uint32_t> api, ApiCorrelationIds(reader.db()));
    while (api.Next()) {
      if (Entry* e = Find(api.row())) e->has_api = true;
    }
    return api.status();
  }

  Entry* Find(uint32_t correlation) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), correlation,
                               [](const Entry& e, uint32_t c) { return e.correlation < c; });
    return it != entries_.end() && it->correlation == correlation ? &*it : nullptr;
  }

  static uint64_t FlowId(uint32_t correlation, uint32_t child) {
    return (static_cast<uint64_t>(correlation) << kFlowChildBits) | child;
  }

 private:
  std::vector<Entry> entries_;
};

// A base track and its overlap lanes; see "Nesting" in timeline.h.
struct LaneSet {
  TrackInfo base;  // lane i > 0 copies it with another uuid, name and chrome tid
  struct Lane {
    uint64_t uuid;
    std::vector<int64_t> open_ends;  // innermost last
  };
  std::vector<Lane> lanes;
};

class Walker {
 public:
  Walker(const TraceReader& reader, const TimelineOptions& options, TimelineSink* sink,
         TimelineStats* stats)
      : reader_(reader), options_(options), sink_(sink), stats_(stats) {}

  Status Run() {
    RETURN_IF_ERROR(ComputeTimeRange());
    RETURN_IF_ERROR(correlations_.Build(reader_));
    RETURN_IF_ERROR(DeclareTracks());
    RETURN_IF_ERROR(CpuPass());
    RETURN_IF_ERROR(GpuPass());
    RETURN_IF_ERROR(HostPass());
    for (auto& [tid, set] : threads_) CloseAll(&set);
    for (auto& [key, set] : streams_) CloseAll(&set);
    for (auto& [key, set] : host_) CloseAll(&set);
    for (auto& [stream, set] : annotations_) CloseAll(&set);
    RETURN_IF_ERROR(Counters());
    WarnClampedTimes(reader_.path(), clamped_);
    return OkStatus();
  }

 private:
  Status ComputeTimeRange() {
    ASSIGN_OR_RETURN(std::optional<int64_t> earliest, EarliestEventTime(reader_.db()));
    const int64_t origin = earliest.value_or(std::numeric_limits<int64_t>::max());
    stats_->time_origin_ns = origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
    ASSIGN_OR_RETURN(std::vector<int64_t> latest, LatestEventTimes(reader_.db()));
    RETURN_IF_ERROR(CheckTimeSpan(stats_->time_origin_ns, latest));
    sink_->SetTimeOrigin(stats_->time_origin_ns);
    // The end of the trace closes NVTX ranges that never ended; only needed then.
    ASSIGN_OR_RETURN(bool unended, HasUnendedNvtx(reader_.db()));
    if (unended) {
      trace_end_ = stats_->time_origin_ns;
      for (int64_t t : latest) trace_end_ = std::max(trace_end_, t);
      int64_t meta_end = 0;
      if (ParseInt64(reader_.Meta("end_ns"), &meta_end))
        trace_end_ = std::max(trace_end_, meta_end);
    }
    return OkStatus();
  }

  // Every later computation subtracts timestamps (durations, buckets, the
  // JSON's relative times): refuse a trace whose times do not fit in 2^62 ns
  // (146 years) of the origin instead of overflowing.
  static Status CheckTimeSpan(int64_t origin, const std::vector<int64_t>& latest) {
    constexpr int64_t kMaxSpanNs = int64_t{1} << 62;
    for (int64_t t : latest) {
      int64_t span = 0;
      if (__builtin_sub_overflow(t, origin, &span) || span > kMaxSpanNs) {
        return InvalidInput("timestamps from " + std::to_string(origin) + " to " +
                            std::to_string(t) +
                            " ns span more than 146 years: the trace's times are damaged");
      }
    }
    return OkStatus();
  }

  uint64_t NewTrack(TrackInfo info) {
    info.uuid = next_uuid_++;
    ++stats_->tracks;
    switch (info.kind) {
      case TrackKind::kThread:
        ++stats_->thread_tracks;
        break;
      case TrackKind::kGpuStream:
        ++stats_->stream_tracks;
        break;
      case TrackKind::kOverlapLane:
        ++stats_->lane_tracks;
        break;
      case TrackKind::kCounter:
        ++stats_->counter_tracks;
        break;
      default:
        break;
    }
    sink_->AddTrack(info);
    return info.uuid;
  }

  Status DeclareTracks() {
    int64_t pid = 0;
    if (!ParseInt64(reader_.Meta("pid"), &pid) || pid <= 0) pid = 1;
    pid_ = static_cast<int32_t>(pid);
    TrackInfo proc;
    proc.kind = TrackKind::kProcess;
    proc.pid = pid_;
    std::string cmd = reader_.Meta("command_line");
    for (std::string& part : Split(cmd, ' ')) {
      if (!part.empty()) proc.cmdline.push_back(part);
    }
    // The program as the trace names it: its command line's first word (captures), the
    // process name an importer kept (meta.process_name), else "process".
    std::string exe = proc.cmdline.empty() ? reader_.Meta("process_name") : proc.cmdline[0];
    if (size_t slash = exe.rfind('/'); slash != std::string::npos) exe = exe.substr(slash + 1);
    if (exe.empty()) exe = "process";
    proc.name = exe + " (pid " + std::to_string(pid_) + ")";
    proc.chrome_pid = pid_;
    process_uuid_ = NewTrack(proc);

    ASSIGN_OR_RETURN(auto names, reader_.ThreadNames());
    // Kineto's GPU-side annotations are NVTX rows whose tid is their stream
    // (importers/kineto_importer.h): they go on a track of that stream, never
    // on a host thread "thread 7".
    ASSIGN_OR_RETURN(gpu_side_domain_, FindStringId(reader_.db(), kGpuSideDomain));
    ASSIGN_OR_RETURN(std::vector<int64_t> tids, TimelineThreadIds(reader_.db(), gpu_side_domain_));
    for (int64_t thread : tids) {
      uint32_t tid = static_cast<uint32_t>(thread);
      TrackInfo t;
      t.kind = TrackKind::kThread;
      t.parent_uuid = process_uuid_;
      t.pid = pid_;
      t.tid = static_cast<int32_t>(tid);
      auto it = names.find(tid);
      t.name =
          it != names.end() && !it->second.empty() ? it->second : "thread " + std::to_string(tid);
      t.chrome_pid = pid_;
      t.chrome_tid = tid;
      LaneSet& set = threads_[tid];
      set.base = t;
      set.lanes.push_back({NewTrack(t), {}});
    }

    ASSIGN_OR_RETURN(auto devices, reader_.Devices());
    for (const DeviceRecord& d : devices) device_names_[d.id] = reader_.String(d.name);
    ASSIGN_OR_RETURN(auto streams, GpuStreamKeys(reader_.db()));
    for (const auto& [device_id, stream_id] : streams) {
      uint32_t device = static_cast<uint32_t>(device_id);
      uint32_t stream = static_cast<uint32_t>(stream_id);
      TrackInfo s;
      s.kind = TrackKind::kGpuStream;
      s.parent_uuid = DeviceTrack(device);
      s.name = "Stream " + std::to_string(stream);
      s.chrome_pid = kGpuChromePidBase + device;
      s.chrome_tid = stream;
      LaneSet& set = streams_[{device, stream}];
      set.base = s;
      set.lanes.push_back({NewTrack(s), {}});
    }
    return OkStatus();
  }

  uint64_t DeviceTrack(uint32_t device) {
    auto it = device_tracks_.find(device);
    if (it != device_tracks_.end()) return it->second;
    TrackInfo d;
    d.kind = TrackKind::kGpuDevice;
    d.name = "GPU " + std::to_string(device);
    auto name = device_names_.find(device);
    if (name != device_names_.end() && !name->second.empty()) d.name += " (" + name->second + ")";
    d.chrome_pid = kGpuChromePidBase + device;
    uint64_t uuid = NewTrack(d);
    device_tracks_[device] = uuid;
    return uuid;
  }

  // The track of stream `stream`'s GPU-side annotations, under the device
  // that runs the stream (the first such device; GPU 0 when no op ran on it).
  LaneSet& AnnotationSet(uint32_t stream) {
    auto it = annotations_.find(stream);
    if (it != annotations_.end()) return it->second;
    uint32_t device = 0;
    for (const auto& [key, set] : streams_) {
      if (key.second == stream) {
        device = key.first;
        break;
      }
    }
    TrackInfo t;
    t.kind = TrackKind::kGpuStream;
    t.parent_uuid = DeviceTrack(device);
    t.name = "Stream " + std::to_string(stream) + " GPU annotations";
    t.chrome_pid = kGpuChromePidBase + device;
    t.chrome_tid = kLaneChromeTidBase + next_lane_tid_++;
    LaneSet& set = annotations_[stream];
    set.base = t;
    set.lanes.push_back({NewTrack(t), {}});
    return set;
  }

  // Emits the ends of the lane's open slices that end at or before `ts`.
  void CloseUpTo(LaneSet::Lane* lane, int64_t ts) {
    while (!lane->open_ends.empty() && lane->open_ends.back() <= ts) {
      sink_->EndSlice(lane->uuid, lane->open_ends.back());
      lane->open_ends.pop_back();
    }
  }

  void CloseAll(LaneSet* set) {
    for (LaneSet::Lane& lane : set->lanes) CloseUpTo(&lane, std::numeric_limits<int64_t>::max());
  }

  // The lane of `set` where [start, end] nests; creates a lane when none does.
  uint64_t Place(LaneSet* set, int64_t start, int64_t end) {
    for (LaneSet::Lane& lane : set->lanes) {
      CloseUpTo(&lane, start);
      if (lane.open_ends.empty() || end <= lane.open_ends.back()) {
        lane.open_ends.push_back(end);
        return lane.uuid;
      }
    }
    TrackInfo t = set->base;
    t.kind = TrackKind::kOverlapLane;
    t.parent_uuid = set->base.kind == TrackKind::kThread ? process_uuid_ : set->base.parent_uuid;
    t.name = set->base.name + " (overlap " + std::to_string(set->lanes.size()) + ")";
    t.chrome_tid = kLaneChromeTidBase + next_lane_tid_++;
    set->lanes.push_back({NewTrack(t), {end}});
    return set->lanes.back().uuid;
  }

  // Merges ordered cursors by (start asc, end desc, cursor index asc): calls
  // on_row(row) for each row of each cursor (a row has start_ns and end_ns).
  template <typename Fn, typename... Row>
  static Status Merge(Fn&& on_row, RowCursor<Row>&... cursors) {
    constexpr size_t kCount = sizeof...(Row);
    std::array<bool, kCount> live{};
    {
      size_t i = 0;
      Status st = OkStatus();
      ((live[i] = cursors.Next(), st.ok() ? void(st = cursors.status()) : void(), ++i), ...);
      RETURN_IF_ERROR(st);
    }
    while (true) {
      const std::array<std::pair<int64_t, int64_t>, kCount> keys{
          std::pair<int64_t, int64_t>{cursors.row().start_ns, cursors.row().end_ns}...};
      int best = -1;
      for (size_t i = 0; i < kCount; ++i) {
        if (!live[i]) continue;
        if (best < 0) {
          best = static_cast<int>(i);
          continue;
        }
        const auto& c = keys[i];
        const auto& b = keys[best];
        if (c.first < b.first || (c.first == b.first && c.second > b.second))
          best = static_cast<int>(i);
      }
      if (best < 0) return OkStatus();
      size_t i = 0;
      Status st = OkStatus();
      (
          [&](auto& cursor) {
            if (i++ != static_cast<size_t>(best)) return;
            on_row(cursor.row());
            live[best] = cursor.Next();
            st = cursor.status();
          }(cursors),
          ...);
      RETURN_IF_ERROR(st);
    }
  }

  Status CpuPass() {
    // NVTX first: on a tie a range encloses the API call.
    ASSIGN_OR_RETURN(RowCursor<NvtxSliceRow> nvtx, NvtxSlices(reader_.db(), trace_end_));
    ASSIGN_OR_RETURN(RowCursor<ApiSliceRow> api, ApiSlices(reader_.db()));
    std::vector<uint64_t> flows;
    auto on_row = [&](const auto& r) {
      constexpr bool kNvtx = std::is_same_v<std::decay_t<decltype(r)>, NvtxSliceRow>;
      int64_t start = r.start_ns, end = r.end_ns;
      bool mark = false;
      if constexpr (kNvtx) mark = static_cast<NvtxKind>(r.kind) == NvtxKind::kMark;
      if (mark) {
        end = start;  // an instant: its end is no time
      } else {
        clamped_ += ClampRecordTimes(&start, &end);
      }
      bool gpu_side = false;
      if constexpr (kNvtx) gpu_side = gpu_side_domain_ > 0 && r.domain_id == gpu_side_domain_;
      LaneSet& set = gpu_side ? AnnotationSet(static_cast<uint32_t>(r.tid))
                              : threads_[static_cast<uint32_t>(r.tid)];
      SliceArg args[2];
      SliceEvent e;
      e.start_ns = start;
      e.end_ns = end;
      e.name = reader_.String(static_cast<StringId>(r.name_id));
      if constexpr (kNvtx) {
        auto kind = static_cast<NvtxKind>(r.kind);
        if (kind == NvtxKind::kMark) {
          // Instants nest wherever they fall: always lane 0.
          CloseUpTo(&set.lanes[0], start);
          sink_->Instant(set.lanes[0].uuid, start, e.name, "nvtx");
          ++stats_->instants;
          return;
        }
        e.category = "nvtx";
        size_t n = 0;
        if (options_.args && r.domain_id != 0) {
          args[n++] = {"domain", true, 0, reader_.String(static_cast<StringId>(r.domain_id))};
        }
        if (options_.args && kind == NvtxKind::kStartEnd)
          args[n++] = {"kind", true, 0, "start_end"};
        e.args = args;
        e.arg_count = n;
      } else {
        e.category = "cuda_api";
        uint32_t corr = static_cast<uint32_t>(r.correlation);
        size_t n = 0;
        if (options_.args) {
          args[n++] = {"correlation", false, corr, {}};
          if (r.return_code != 0) args[n++] = {"return_code", false, r.return_code, {}};
        }
        e.args = args;
        e.arg_count = n;
        flows.clear();
        if (CorrelationIndex::Entry* c = correlations_.Find(corr); c && !c->api_done) {
          c->api_done = true;
          uint32_t count = std::min<uint32_t>(c->gpu_count, (1u << kFlowChildBits) - 1);
          for (uint32_t i = 0; i < count; ++i) flows.push_back(CorrelationIndex::FlowId(corr, i));
        }
        e.flows_out = flows.data();
        e.flow_out_count = flows.size();
      }
      e.track = Place(&set, start, end);
      sink_->BeginSlice(e);
      ++stats_->slices;
      ++stats_->cpu_slices;
    };
    return Merge(on_row, nvtx, api);
  }

  Status GpuPass() {
    ASSIGN_OR_RETURN(RowCursor<KernelSliceRow> k, KernelSlices(reader_.db()));
    ASSIGN_OR_RETURN(RowCursor<MemcpySliceRow> c, MemcpySlices(reader_.db()));
    ASSIGN_OR_RETURN(RowCursor<MemsetSliceRow> s, MemsetSlices(reader_.db()));
    std::string grid, block, name;
    auto on_row = [&](const auto& r) {
      using Row = std::decay_t<decltype(r)>;
      int64_t start = r.start_ns, end = r.end_ns;
      clamped_ += ClampRecordTimes(&start, &end);
      LaneSet& set = streams_[{static_cast<uint32_t>(r.device), static_cast<uint32_t>(r.stream)}];
      uint32_t corr = static_cast<uint32_t>(r.correlation);
      SliceArg args[6];
      size_t n = 0;
      SliceEvent e;
      e.start_ns = start;
      e.end_ns = end;
      if (options_.args) args[n++] = {"correlation", false, corr, {}};
      if constexpr (std::is_same_v<Row, KernelSliceRow>) {
        e.category = "kernel";
        e.name = reader_.String(static_cast<StringId>(r.name_id));
        if (options_.args) {
          grid = std::to_string(r.grid[0]) + "," + std::to_string(r.grid[1]) + "," +
                 std::to_string(r.grid[2]);
          block = std::to_string(r.block[0]) + "," + std::to_string(r.block[1]) + "," +
                  std::to_string(r.block[2]);
          args[n++] = {"grid", true, 0, grid};
          args[n++] = {"block", true, 0, block};
          args[n++] = {"registers_per_thread", false, r.registers_per_thread, {}};
          args[n++] = {"shared_memory_bytes", false, r.shared_memory_bytes, {}};
        }
      } else if constexpr (std::is_same_v<Row, MemcpySliceRow>) {
        e.category = "memcpy";
        name = std::string("Memcpy ") + CopyKindName(static_cast<CopyKind>(r.copy_kind));
        e.name = name;
        if (options_.args) {
          args[n++] = {"bytes", false, r.bytes, {}};
          args[n++] = {"src_kind", true, 0, MemoryKindName(static_cast<MemoryKind>(r.src_kind))};
          args[n++] = {"dst_kind", true, 0, MemoryKindName(static_cast<MemoryKind>(r.dst_kind))};
        }
      } else {
        e.category = "memset";
        e.name = "Memset";
        if (options_.args) {
          args[n++] = {"bytes", false, r.bytes, {}};
          args[n++] = {"value", false, r.value, {}};
        }
      }
      e.args = args;
      e.arg_count = n;
      if (CorrelationIndex::Entry* ce = correlations_.Find(corr);
          ce && ce->has_api && ce->next_child < (1u << kFlowChildBits) - 1) {
        e.flow_in = CorrelationIndex::FlowId(corr, ce->next_child++);
        ++stats_->flows;
      }
      e.track = Place(&set, start, end);
      sink_->BeginSlice(e);
      ++stats_->slices;
      ++stats_->gpu_slices;
    };
    return Merge(on_row, k, c, s);
  }

  // The host model's tracks of thread `tid` (docs/host.md); `what` is 0 CPU
  // state, 1 samples, 2 OS runtime.
  LaneSet& HostSet(uint32_t tid, int what) {
    auto it = host_.find({tid, what});
    if (it != host_.end()) return it->second;
    static const char* kWhat[] = {"CPU state", "samples", "OS runtime"};
    TrackInfo t;
    t.kind = TrackKind::kHost;
    t.parent_uuid = process_uuid_;
    auto th = threads_.find(tid);
    t.name = (th != threads_.end() ? th->second.base.name : "thread " + std::to_string(tid)) +
             ": " + kWhat[what];
    t.chrome_pid = pid_;
    t.chrome_tid = kLaneChromeTidBase + next_lane_tid_++;
    LaneSet& set = host_[{tid, what}];
    set.base = t;
    set.lanes.push_back({NewTrack(t), {}});
    ++stats_->host_tracks;
    return set;
  }

  void HostSlice(LaneSet& set, SliceEvent& e) {
    e.track = Place(&set, e.start_ns, e.end_ns);
    sink_->BeginSlice(e);
    ++stats_->slices;
    ++stats_->host_slices;
  }

  // "train.py:152 train_step < train.py:140 train_loop < ..." (innermost first).
  std::string StackText(uint32_t callsite) {
    std::string s;
    for (auto id = chains_->Expand(callsite); !id.empty(); id.pop_back()) {
      const uint32_t f = id.back();
      if (f == 0 || f > frames_.size() || frames_[f - 1].id != f) continue;
      const FrameRecord& r = frames_[f - 1];
      std::string file = reader_.String(r.file);
      if (size_t slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
      if (!s.empty()) s += " < ";
      if (!file.empty()) s += file + (r.line > 0 ? ":" + std::to_string(r.line) : "") + " ";
      s += reader_.String(r.function);
    }
    return s;
  }

  Status HostPass() {
    ASSIGN_OR_RETURN(frames_, reader_.Frames());
    ASSIGN_OR_RETURN(callsites_, reader_.Callsites());
    chains_ = std::make_unique<CallsiteChains>(&callsites_);
    ASSIGN_OR_RETURN(std::vector<SchedRecord> sched, reader_.Sched());
    std::stable_sort(sched.begin(), sched.end(), [](const SchedRecord& a, const SchedRecord& b) {
      return a.tid != b.tid ? a.tid < b.tid : a.start_ns < b.start_ns;
    });
    for (const SchedRecord& r : sched) {
      SliceArg args[1];
      SliceEvent e;
      e.start_ns = r.start_ns;
      e.end_ns = r.end_ns;
      clamped_ += ClampRecordTimes(&e.start_ns, &e.end_ns);
      e.category = "cpu_state";
      e.name = r.state == ThreadState::kUnknown ? "off_cpu" : ThreadStateName(r.state);
      size_t n = 0;
      if (options_.args && r.cpu >= 0) args[n++] = {"cpu", false, r.cpu, {}};
      e.args = args;
      e.arg_count = n;
      HostSlice(HostSet(r.tid, 0), e);
    }
    // Samples: runs of one state at one stack become one slice, ending at the
    // next sample of the thread (the last one lasts one period).
    ASSIGN_OR_RETURN(std::vector<SampleRecord> samples, reader_.Samples());
    int64_t hz = 0;
    const int64_t period =
        ParseInt64(reader_.Meta("sample_hz"), &hz) && hz > 0 ? 1000000000 / hz : 1000000;
    for (size_t i = 0; i < samples.size();) {
      size_t j = i + 1;
      const SampleRecord& a = samples[i];
      while (j < samples.size() && samples[j].tid == a.tid && samples[j].state == a.state &&
             samples[j].callsite == a.callsite && samples[j].wait == a.wait)
        ++j;
      const bool more = j < samples.size() && samples[j].tid == a.tid;
      const std::string stack = StackText(a.callsite);
      const std::string name = std::string(ThreadStateName(a.state)) +
                               (stack.empty() ? "" : " " + stack.substr(0, stack.find(" < ")));
      SliceArg args[3];
      size_t n = 0;
      if (options_.args) {
        args[n++] = {"samples", false, static_cast<int64_t>(j - i), {}};
        if (a.wait != kNoString) args[n++] = {"wait", true, 0, reader_.String(a.wait)};
        if (!stack.empty()) args[n++] = {"stack", true, 0, stack};
      }
      SliceEvent e;
      e.start_ns = a.ts_ns;
      e.end_ns = more ? samples[j].ts_ns : samples[j - 1].ts_ns + period;
      e.category = "samples";
      e.name = name;
      e.args = args;
      e.arg_count = n;
      HostSlice(HostSet(a.tid, 1), e);
      i = j;
    }
    ASSIGN_OR_RETURN(std::vector<OsrtRecord> osrt, reader_.Osrt());
    std::stable_sort(osrt.begin(), osrt.end(), [](const OsrtRecord& a, const OsrtRecord& b) {
      return a.tid != b.tid             ? a.tid < b.tid
             : a.start_ns != b.start_ns ? a.start_ns < b.start_ns
                                        : a.end_ns > b.end_ns;
    });
    for (const OsrtRecord& r : osrt) {
      const std::string stack = StackText(r.callsite);
      SliceArg args[3];
      size_t n = 0;
      if (options_.args) {
        if (r.detail != kNoString) args[n++] = {"detail", true, 0, reader_.String(r.detail)};
        args[n++] = {"source", true, 0,
                     r.source == kOsrtTraced    ? "traced"
                     : r.source == kOsrtSampled ? "sampled"
                                                : "imported"};
        if (!stack.empty()) args[n++] = {"stack", true, 0, stack};
      }
      SliceEvent e;
      e.start_ns = r.start_ns;
      e.end_ns = r.end_ns;
      clamped_ += ClampRecordTimes(&e.start_ns, &e.end_ns);
      e.category = "osrt";
      e.name = reader_.String(r.name);
      e.args = args;
      e.arg_count = n;
      HostSlice(HostSet(r.tid, 2), e);
    }
    return OkStatus();
  }

  Status Counters() {
    int64_t bucket = 0;
    ASSIGN_OR_RETURN(auto util, GpuUtilizationSeries(reader_, options_.util_bucket_ns, &bucket));
    for (const DeviceSeries& s : util) {
      TrackInfo t;
      t.kind = TrackKind::kCounter;
      t.parent_uuid = DeviceTrack(s.device);
      t.name = "GPU " + std::to_string(s.device) + " utilization (%)";
      t.chrome_pid = kGpuChromePidBase + s.device;
      uint64_t uuid = NewTrack(t);
      for (const CounterPoint& p : s.points) sink_->Counter(uuid, p.ts_ns, p.value);
      stats_->counter_points += static_cast<int64_t>(s.points.size());
    }
    int64_t unknown_frees = 0;
    ASSIGN_OR_RETURN(auto memory, DeviceMemorySeries(reader_, &unknown_frees));
    for (const DeviceSeries& s : memory) {
      TrackInfo t;
      t.kind = TrackKind::kCounter;
      t.parent_uuid = DeviceTrack(s.device);
      t.name = "GPU " + std::to_string(s.device) + " memory in use";
      t.counter_is_bytes = true;
      t.chrome_pid = kGpuChromePidBase + s.device;
      uint64_t uuid = NewTrack(t);
      for (const CounterPoint& p : s.points) sink_->Counter(uuid, p.ts_ns, p.value);
      stats_->counter_points += static_cast<int64_t>(s.points.size());
    }
    return GpuMetricCounters();
  }

  // `profile --gpu-metrics`: one counter track per device and metric, a point
  // at each sample's start (rows come by device, metric, start).
  Status GpuMetricCounters() {
    ASSIGN_OR_RETURN(std::vector<GpuMetricRecord> rows, reader_.GpuMetrics());
    uint64_t uuid = 0;
    std::pair<uint32_t, StringId> current{0, kNoString};
    for (size_t i = 0; i < rows.size(); ++i) {
      const GpuMetricRecord& g = rows[i];
      if (i == 0 || current != std::make_pair(g.device, g.metric)) {
        current = {g.device, g.metric};
        const std::string& name = reader_.String(g.metric);
        const GpuMetricDef* def = FindGpuMetric(name);
        TrackInfo t;
        t.kind = TrackKind::kCounter;
        t.parent_uuid = DeviceTrack(g.device);
        t.name = "GPU " + std::to_string(g.device) + " " + std::string(GpuMetricLabel(name)) +
                 (def ? " (" + std::string(def->unit) + ")" : "");
        t.chrome_pid = kGpuChromePidBase + g.device;
        uuid = NewTrack(t);
      }
      sink_->Counter(uuid, g.start_ns, g.value);
      ++stats_->counter_points;
    }
    return OkStatus();
  }

  const TraceReader& reader_;
  const TimelineOptions& options_;
  TimelineSink* sink_;
  TimelineStats* stats_;
  CorrelationIndex correlations_;
  int64_t clamped_ = 0;  // records whose times were clamped (common/intervals.h)
  int64_t trace_end_ = 0;
  int32_t pid_ = 1;
  uint64_t next_uuid_ = 1;
  uint64_t process_uuid_ = 0;
  int64_t next_lane_tid_ = 0;
  std::map<uint32_t, LaneSet> threads_;  // ordered: deterministic output
  std::map<std::pair<uint32_t, uint32_t>, LaneSet> streams_;
  std::map<uint32_t, uint64_t> device_tracks_;
  std::map<uint32_t, std::string> device_names_;
  std::map<std::pair<uint32_t, int>, LaneSet> host_;  // (tid, track kind): HostSet()
  std::map<uint32_t, LaneSet> annotations_;           // by stream: AnnotationSet()
  int64_t gpu_side_domain_ = -1;                      // strings id of kGpuSideDomain
  std::vector<FrameRecord> frames_;
  std::vector<CallsiteRecord> callsites_;
  std::unique_ptr<CallsiteChains> chains_;  // over callsites_
};

}  // namespace

Status WalkTimeline(const TraceReader& reader, const TimelineOptions& options, TimelineSink* sink,
                    TimelineStats* stats) {
  *stats = TimelineStats{};
  Walker w(reader, options, sink, stats);
  return w.Run();
}

}  // namespace stepscope
