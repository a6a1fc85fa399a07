#include "analysis/model/trace_model.h"

#include "analysis/model/timeline.h"

#include <algorithm>
#include <map>
#include <thread>
#include <unordered_map>

#include "common/api_names.h"
#include "common/intervals.h"
#include "common/log.h"
#include "common/strings.h"
#include "store/callsite_interner.h"
#include "store/trace_reader.h"

namespace stepscope {

// One line per kind of change reading made, so no value is silently wrong.
static void WarnReadChanges(const TraceModel& m) {
  WarnClampedTimes(m.path(), m.clamped_records());
  if (m.cut_stacks() > 0) {
    LogWarn(
        "%s: %s call stacks deeper than %zu frames were read as their outermost %zu frames "
        "and the leaf",
        m.path().c_str(), FormatCount(m.cut_stacks()).c_str(), CallsiteInterner::kMaxDepth,
        CallsiteInterner::kMaxDepth - 1);
  }
}

StatusOr<std::unique_ptr<TraceModel>> TraceModel::Load(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path));
  Records r;
  r.path = path;
  r.strings = reader->strings();
  r.finalized = reader->finalized();
  int64_t v = 0;
  r.rank = ParseInt64(reader->Meta("rank"), &v) ? static_cast<int>(v) : -1;
  r.meta_start_ns = ParseInt64(reader->Meta("start_ns"), &v) ? v : 0;
  r.pid = ParseInt64(reader->Meta("pid"), &v) && v > 0 && v <= UINT32_MAX ? static_cast<uint32_t>(v)
                                                                          : 0;
  r.sample_hz = ParseInt64(reader->Meta("sample_hz"), &v) && v > 0 ? v : 0;
  r.native_sample_period_ns =
      ParseInt64(reader->Meta("native_sample_period_ns"), &v) && v > 0 ? v : 0;

  // The kernel table is usually the largest: read it on a second connection
  // while this thread reads the rest. A trace cut off by a crash may have a
  // -wal file: the first connection replayed it, the second sees the same data.
  Status kernel_status;
  std::thread kernel_thread([&] {
    auto second = TraceReader::Open(path);
    if (!second.ok()) {
      kernel_status = second.status();
      return;
    }
    auto k = (*second)->Kernels(TraceReader::RowOrder::kStored);
    if (!k.ok()) {
      kernel_status = k.status();
      return;
    }
    r.kernels = std::move(*k);
  });
  Status st = [&]() -> Status {
    // Big tables in stored order (a table scan); FromRecords orders in memory.
    ASSIGN_OR_RETURN(r.apis, reader->Apis(TraceReader::RowOrder::kStored));
    ASSIGN_OR_RETURN(r.memcpys, reader->Memcpys(TraceReader::RowOrder::kStored));
    ASSIGN_OR_RETURN(r.memsets, reader->Memsets(TraceReader::RowOrder::kStored));
    ASSIGN_OR_RETURN(r.syncs, reader->Syncs(TraceReader::RowOrder::kStored));
    ASSIGN_OR_RETURN(r.nvtx, reader->Nvtx());
    ASSIGN_OR_RETURN(r.memory, reader->MemoryEvents());
    ASSIGN_OR_RETURN(r.um, reader->UmEvents());
    ASSIGN_OR_RETURN(r.gpu_metrics, reader->GpuMetrics());
    ASSIGN_OR_RETURN(r.devices, reader->Devices());
    ASSIGN_OR_RETURN(r.frames, reader->Frames());
    ASSIGN_OR_RETURN(r.callsites, reader->Callsites());
    ASSIGN_OR_RETURN(r.samples, reader->Samples());
    ASSIGN_OR_RETURN(r.native_samples, reader->NativeSamples());
    ASSIGN_OR_RETURN(r.sched, reader->Sched());
    ASSIGN_OR_RETURN(r.osrt, reader->Osrt());
    ASSIGN_OR_RETURN(r.api_callsites, reader->ApiCallsites());
    ASSIGN_OR_RETURN(r.thread_names, reader->ThreadNames());
    return OkStatus();
  }();
  kernel_thread.join();
  if (!st.ok()) return InvalidInput(path + ": cannot read trace: " + st.message());
  if (!kernel_status.ok()) {
    return InvalidInput(path + ": cannot read kernels: " + kernel_status.message());
  }
  std::unique_ptr<TraceModel> m = FromRecords(std::move(r));
  WarnReadChanges(*m);
  return m;
}

int64_t TraceModel::cut_stacks() const { return static_cast<int64_t>(chains_->cut()); }

namespace {

// Bad input becomes data, never a crash: a corrupted trace may hold negative
// or huge times, ends before starts, or string ids past the string table.
// Times follow the readers' one rule (common/intervals.h, ClampRecordTimes),
// each record so changed counted; sizes are cut to 2^50 bytes; unknown
// string ids become 0 (""). Open NVTX ranges (end -1) stay open.
// Returns the number of records whose times were changed.
int64_t Sanitize(TraceModel::Records* r) {
  const StringId n = static_cast<StringId>(r->strings.size());
  auto id = [n](StringId* s) {
    if (*s >= n) *s = kNoString;
  };
  int64_t changed = 0;
  auto clamp = [&changed](int64_t* start, int64_t* end) {
    changed += ClampRecordTimes(start, end);
  };
  auto instant = [&changed](int64_t* ts) { changed += ClampInstant(ts); };
  for (auto& k : r->kernels) clamp(&k.start_ns, &k.end_ns), id(&k.name), id(&k.mangled_name);
  constexpr uint64_t kMaxBytes = uint64_t{1} << 50;  // 1 PiB: sums of sizes cannot overflow
  for (auto& c : r->memcpys) clamp(&c.start_ns, &c.end_ns), c.bytes = std::min(c.bytes, kMaxBytes);
  for (auto& c : r->memsets) clamp(&c.start_ns, &c.end_ns), c.bytes = std::min(c.bytes, kMaxBytes);
  for (auto& a : r->apis) clamp(&a.start_ns, &a.end_ns), id(&a.name);
  for (auto& s : r->syncs) clamp(&s.start_ns, &s.end_ns);
  for (auto& v : r->nvtx) {
    if (v.end_ns == -1) {  // open: only its start
      instant(&v.start_ns);
    } else {
      clamp(&v.start_ns, &v.end_ns);
    }
    id(&v.name);
    id(&v.domain);
  }
  for (auto& m : r->memory) {
    instant(&m.ts_ns);
    m.bytes = std::min(m.bytes, kMaxBytes);
  }
  for (auto& d : r->devices) id(&d.name);
  for (auto& u : r->um) clamp(&u.start_ns, &u.end_ns);
  for (auto& f : r->frames) id(&f.function), id(&f.file);
  for (auto& s : r->samples) instant(&s.ts_ns), id(&s.wait);
  for (auto& s : r->native_samples) instant(&s.ts_ns);
  for (auto& s : r->sched) clamp(&s.start_ns, &s.end_ns);
  for (auto& o : r->osrt) clamp(&o.start_ns, &o.end_ns), id(&o.name), id(&o.detail);
  return changed;
}

}  // namespace

std::unique_ptr<TraceModel> TraceModel::FromRecords(Records r) {
  std::unique_ptr<TraceModel> m(new TraceModel());
  m->r_ = std::move(r);
  if (m->r_.strings.empty()) m->r_.strings.emplace_back();
  m->clamped_records_ = Sanitize(&m->r_);
  {
    auto by_corr = [](const ApiCallsiteRecord& a, const ApiCallsiteRecord& b) {
      return a.correlation < b.correlation;
    };
    std::stable_sort(m->r_.api_callsites.begin(), m->r_.api_callsites.end(), by_corr);
    auto& smp = m->r_.samples;
    std::stable_sort(smp.begin(), smp.end(), [](const SampleRecord& a, const SampleRecord& b) {
      return a.tid != b.tid ? a.tid < b.tid : a.ts_ns < b.ts_ns;
    });
    std::stable_sort(m->r_.native_samples.begin(), m->r_.native_samples.end(),
                     [](const NativeSampleRecord& a, const NativeSampleRecord& b) {
                       return a.tid != b.tid ? a.tid < b.tid : a.ts_ns < b.ts_ns;
                     });
    std::stable_sort(
        m->r_.sched.begin(), m->r_.sched.end(),
        [](const SchedRecord& a, const SchedRecord& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(
        m->r_.osrt.begin(), m->r_.osrt.end(),
        [](const OsrtRecord& a, const OsrtRecord& b) { return a.start_ns < b.start_ns; });
  }
  // Start order for the host-side tables (rows may come in stored order);
  // stable, so equal starts keep their stored order. Kernels, memcpys and
  // memsets are ordered through gpu_ops().
  auto order = [](auto* v) {
    auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
    if (!std::is_sorted(v->begin(), v->end(), by_start))
      std::stable_sort(v->begin(), v->end(), by_start);
  };
  order(&m->r_.apis);
  order(&m->r_.syncs);
  order(&m->r_.nvtx);
  order(&m->r_.um);
  m->chains_ = std::make_unique<CallsiteChains>(&m->r_.callsites);
  m->Derive();
  return m;
}

TraceModel::~TraceModel() = default;

const FlatTimeline& TraceModel::Timeline(int device) const {
  // With one active device, "all devices" is that device.
  if (device < 0 && active_devices_.size() == 1) device = static_cast<int>(active_devices_[0]);
  auto it = timelines_.find(device);
  if (it == timelines_.end()) {
    it = timelines_
             .emplace(device, std::make_unique<FlatTimeline>(FlatTimeline::Build(*this, device)))
             .first;
  }
  return *it->second;
}

std::string TraceModel::file_name() const {
  size_t slash = r_.path.rfind('/');
  return slash == std::string::npos ? r_.path : r_.path.substr(slash + 1);
}

const std::string& TraceModel::String(StringId id) const {
  static const std::string kEmpty;
  return id < r_.strings.size() ? r_.strings[id] : kEmpty;
}

const DeviceRecord* TraceModel::Device(uint32_t id) const {
  for (const DeviceRecord& d : r_.devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

std::string MemcpyOpName(const MemcpyRecord& m) {
  switch (m.copy_kind) {
    case CopyKind::kHostToDevice:
      return "[CUDA memcpy Host-to-Device]";
    case CopyKind::kDeviceToHost:
      return "[CUDA memcpy Device-to-Host]";
    case CopyKind::kDeviceToDevice:
      return "[CUDA memcpy Device-to-Device]";
    case CopyKind::kHostToHost:
      return "[CUDA memcpy Host-to-Host]";
    case CopyKind::kPeerToPeer:
      return "[CUDA memcpy Peer-to-Peer]";
    default:
      break;
  }
  return std::string("[CUDA memcpy ") + CopyKindName(m.copy_kind) + "]";
}

std::string TraceModel::OpName(const GpuOp& op) const {
  switch (op.kind) {
    case GpuOpKind::kKernel:
      return String(r_.kernels[op.index].name);
    case GpuOpKind::kMemcpy:
      return MemcpyOpName(r_.memcpys[op.index]);
    case GpuOpKind::kMemset:
      return "[CUDA memset]";
  }
  return "";
}

uint32_t TraceModel::ApiByCorrelation(uint32_t correlation) const {
  if (!corr_dense_.empty()) {
    return correlation < corr_dense_.size() ? corr_dense_[correlation] : kNone;
  }
  auto it = std::lower_bound(corr_sorted_.begin(), corr_sorted_.end(),
                             std::make_pair(correlation, uint32_t{0}));
  return (it != corr_sorted_.end() && it->first == correlation) ? it->second : kNone;
}

void TraceModel::Derive() {
  // Kernel-name classification, once per distinct name.
  name_info_.assign(r_.strings.size(), KernelNameInfo{});
  std::vector<char> seen(r_.strings.size(), 0);
  for (const KernelRecord& k : r_.kernels) {
    if (k.name < seen.size() && !seen[k.name]) {
      seen[k.name] = 1;
      name_info_[k.name] = ClassifyKernelName(r_.strings[k.name]);
    }
  }
  blocking_name_.assign(r_.strings.size(), 0);
  std::vector<char> api_seen(r_.strings.size(), 0);
  for (const ApiRecord& a : r_.apis) {
    if (a.name < api_seen.size() && !api_seen[a.name]) {
      api_seen[a.name] = 1;
      blocking_name_[a.name] = ::stepscope::IsBlockingApiName(r_.strings[a.name]);
    }
  }
  BuildCorrelation();
  BuildOps();
  // Time span (before the NVTX index: open ranges end at end_ns_).
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto see = [&](int64_t s, int64_t e) {
    lo = std::min(lo, s);
    hi = std::max(hi, std::max(s, e));
  };
  if (!ops_.empty()) see(ops_.front().start_ns, ops_.front().end_ns);
  for (const GpuOp& o : ops_) hi = std::max(hi, o.end_ns);
  if (!r_.apis.empty()) see(r_.apis.front().start_ns, r_.apis.front().end_ns);
  for (const ApiRecord& a : r_.apis) hi = std::max(hi, a.end_ns);
  for (const SyncRecord& s : r_.syncs) see(s.start_ns, s.end_ns);
  for (const NvtxRecord& n : r_.nvtx) see(n.start_ns, n.end_ns);
  for (const MemoryRecord& m : r_.memory) see(m.ts_ns, m.ts_ns);
  if (lo == INT64_MAX) {
    lo = hi = 0;
  }
  origin_ns_ = r_.meta_start_ns > 0 ? std::min(r_.meta_start_ns, lo) : lo;
  end_ns_ = hi;
  BuildNvtxIndex();
}

void TraceModel::BuildCorrelation() {
  uint32_t max_corr = 0;
  for (const ApiRecord& a : r_.apis) max_corr = std::max(max_corr, a.correlation);
  const size_t n = r_.apis.size();
  if (n == 0) return;
  if (max_corr <= 4 * n + (1u << 20)) {
    corr_dense_.assign(static_cast<size_t>(max_corr) + 1, kNone);
    for (size_t i = 0; i < n; ++i) {
      uint32_t c = r_.apis[i].correlation;
      if (c != 0 && corr_dense_[c] == kNone) corr_dense_[c] = static_cast<uint32_t>(i);
    }
  } else {
    corr_sorted_.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (r_.apis[i].correlation != 0) {
        corr_sorted_.emplace_back(r_.apis[i].correlation, static_cast<uint32_t>(i));
      }
    }
    std::sort(corr_sorted_.begin(), corr_sorted_.end());
  }
}

void TraceModel::BuildOps() {
  auto launch = [&](uint32_t corr) { return corr == 0 ? kNone : ApiByCorrelation(corr); };
  ops_.reserve(r_.kernels.size() + r_.memcpys.size() + r_.memsets.size());
  for (size_t i = 0; i < r_.kernels.size(); ++i) {
    const KernelRecord& r = r_.kernels[i];
    ops_.push_back({r.start_ns, std::max(r.end_ns, r.start_ns), static_cast<uint32_t>(i),
                    launch(r.correlation), r.stream, static_cast<uint16_t>(r.device),
                    GpuOpKind::kKernel, NameInfo(r.name).category});
  }
  const size_t nk = ops_.size();
  for (size_t i = 0; i < r_.memcpys.size(); ++i) {
    const MemcpyRecord& r = r_.memcpys[i];
    ops_.push_back({r.start_ns, std::max(r.end_ns, r.start_ns), static_cast<uint32_t>(i),
                    launch(r.correlation), r.stream, static_cast<uint16_t>(r.device),
                    GpuOpKind::kMemcpy, OpCategory::kMemory});
  }
  const size_t nc = ops_.size();
  for (size_t i = 0; i < r_.memsets.size(); ++i) {
    const MemsetRecord& r = r_.memsets[i];
    ops_.push_back({r.start_ns, std::max(r.end_ns, r.start_ns), static_cast<uint32_t>(i),
                    launch(r.correlation), r.stream, static_cast<uint16_t>(r.device),
                    GpuOpKind::kMemset, OpCategory::kMemory});
  }
  // The loaders return each table ordered by start: merging keeps it cheap.
  auto by_start = [](const GpuOp& a, const GpuOp& b) { return a.start_ns < b.start_ns; };
  const size_t bounds[4] = {0, nk, nc, ops_.size()};
  for (int k = 0; k < 3; ++k) {
    if (!std::is_sorted(ops_.begin() + bounds[k], ops_.begin() + bounds[k + 1], by_start)) {
      std::stable_sort(ops_.begin() + bounds[k], ops_.begin() + bounds[k + 1], by_start);
    }
  }
  std::inplace_merge(ops_.begin(), ops_.begin() + nk, ops_.begin() + nc, by_start);
  std::inplace_merge(ops_.begin(), ops_.begin() + nc, ops_.end(), by_start);
  std::vector<uint32_t> devs;
  for (const GpuOp& o : ops_) {
    if (std::find(devs.begin(), devs.end(), o.device) == devs.end()) devs.push_back(o.device);
  }
  std::sort(devs.begin(), devs.end());
  active_devices_ = std::move(devs);
}

// For every thread: sweep its api calls and its push/pop ranges in start
// order with a stack of open ranges. Push/pop ranges nest per thread, so the
// top of the stack is the innermost range around a call.
void TraceModel::BuildNvtxIndex() {
  api_range_.assign(r_.apis.size(), kNone);
  nvtx_parent_.assign(r_.nvtx.size(), kNone);
  std::unordered_map<uint32_t, std::vector<uint32_t>>& ranges_by_tid = ranges_by_tid_;
  for (size_t i = 0; i < r_.nvtx.size(); ++i) {
    if (r_.nvtx[i].kind == NvtxKind::kPushPop) {
      ranges_by_tid[r_.nvtx[i].tid].push_back(static_cast<uint32_t>(i));
    }
  }
  if (ranges_by_tid.empty()) return;
  std::unordered_map<uint32_t, std::vector<uint32_t>> apis_by_tid;
  for (size_t i = 0; i < r_.apis.size(); ++i) {
    if (ranges_by_tid.count(r_.apis[i].tid)) {
      apis_by_tid[r_.apis[i].tid].push_back(static_cast<uint32_t>(i));
    }
  }
  for (auto& [tid, ranges] : ranges_by_tid) {
    // Outer ranges first when two start together (longer first).
    std::stable_sort(ranges.begin(), ranges.end(), [&](uint32_t a, uint32_t b) {
      const NvtxRecord& x = r_.nvtx[a];
      const NvtxRecord& y = r_.nvtx[b];
      if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
      if (RangeEnd(a) != RangeEnd(b)) return RangeEnd(a) > RangeEnd(b);
      return x.depth < y.depth;  // same extent: the outer range (pushed first) first
    });
    std::vector<uint32_t> stack;
    auto pop_ended = [&](int64_t t) {
      while (!stack.empty() && RangeEnd(stack.back()) <= t) {
        stack.pop_back();
      }
    };
    const std::vector<uint32_t>& calls = apis_by_tid[tid];
    size_t ri = 0;
    for (size_t ci = 0; ci <= calls.size(); ++ci) {
      const int64_t t = ci < calls.size() ? r_.apis[calls[ci]].start_ns : INT64_MAX;
      while (ri < ranges.size() && r_.nvtx[ranges[ri]].start_ns <= t) {
        const uint32_t rg = ranges[ri++];
        pop_ended(r_.nvtx[rg].start_ns);
        // A range that does not fit inside the top one ends it (mismatched push/pop).
        while (!stack.empty() && RangeEnd(rg) > RangeEnd(stack.back())) stack.pop_back();
        nvtx_parent_[rg] = stack.empty() ? kNone : stack.back();
        stack.push_back(rg);
      }
      if (ci == calls.size()) break;
      pop_ended(t);
      if (!stack.empty()) api_range_[calls[ci]] = stack.back();
    }
  }
  size_t most = 0;
  for (const auto& [tid, ranges] : ranges_by_tid) {
    if (ranges.size() > most || (ranges.size() == most && tid < main_tid_)) {
      most = ranges.size();
      main_tid_ = tid;
    }
  }
  // The process's own main thread, when it took part: a thread that only
  // holds more ranges (a library's, or the autograd thread's) is not "main".
  if (r_.pid != 0 && main_tid_ != r_.pid &&
      (ranges_by_tid.count(r_.pid) ||
       std::any_of(r_.apis.begin(), r_.apis.end(),
                   [&](const ApiRecord& a) { return a.tid == r_.pid; }))) {
    main_tid_ = r_.pid;
  }
  for (size_t i = 0; i < r_.apis.size(); ++i) {
    if (api_range_[i] == kNone && r_.apis[i].tid != main_tid_) {
      api_range_[i] = RangeAt(main_tid_, r_.apis[i].start_ns);
    }
  }
}

uint32_t TraceModel::RangeAt(uint32_t tid, int64_t t) const {
  auto it = ranges_by_tid_.find(tid);
  if (it == ranges_by_tid_.end()) return kNone;
  const std::vector<uint32_t>& v = it->second;
  auto pos = std::partition_point(v.begin(), v.end(),
                                  [&](uint32_t i) { return r_.nvtx[i].start_ns <= t; });
  if (pos == v.begin()) return kNone;
  uint32_t r = *(pos - 1);
  while (r != kNone && !(r_.nvtx[r].start_ns <= t && t < RangeEnd(r))) r = nvtx_parent_[r];
  return r;
}

}  // namespace stepscope
