#include "analysis/model/um.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <map>

#include "analysis/model/summary.h"
#include "common/stats.h"

namespace stepscope {
namespace {

// Gap between fault-driven device->host migrations that still counts as one
// burst (the CPU touching one buffer page by page, with its own work between
// the faults).
constexpr int64_t kBurstGapNs = 5'000'000;

// Fault groups closer than this are one stall: between two groups the kernel
// waits for the replay of the first and the driver's pickup of the next
// batch (tens of microseconds in UVM), it does not run.
constexpr int64_t kReplayGapNs = 200'000;

// Migrations at least this large run near the link's speed.
constexpr uint64_t kLargeMigration = 256 * 1024;

// Bytes over copy time of the migrations of the given kinds (user prefetches
// only, when asked; at least min_bytes each).
double Bandwidth(const std::vector<UmRecord>& um, std::initializer_list<UmCounterKind> kinds,
                 bool user_only, uint64_t min_bytes = 0) {
  uint64_t bytes = 0;
  int64_t ns = 0;
  for (const UmRecord& u : um) {
    if (u.end_ns <= u.start_ns || u.value < min_bytes) continue;
    if (std::find(kinds.begin(), kinds.end(), u.kind) == kinds.end()) continue;
    if (user_only && u.flags != kUmCauseUser) continue;
    bytes += u.value;
    ns += u.end_ns - u.start_ns;
  }
  return ns > 0 ? static_cast<double>(bytes) / static_cast<double>(ns) : 0.0;
}

// Migrations that faults caused: the faulted page itself (coherence) and the
// neighbours the driver moved with it (its speculative prefetch: on a lent
// H100 most of a faulting kernel's host->device bytes, 2026-11-24).
bool FaultDriven(const UmRecord& u) {
  return u.flags == kUmCauseCoherence || u.flags == kUmCausePrefetch;
}

// Bytes over time of the trace's explicit pinned copies of one direction
// (>= 256 KiB: they run near the link's speed).
double CopyBandwidth(const TraceModel& m, CopyKind kind) {
  uint64_t bytes = 0;
  int64_t ns = 0;
  for (const MemcpyRecord& c : m.memcpys()) {
    if (c.copy_kind != kind || c.bytes < kLargeMigration || c.end_ns <= c.start_ns) continue;
    const MemoryKind host = kind == CopyKind::kHostToDevice ? c.src_kind : c.dst_kind;
    if (host != MemoryKind::kPinned) continue;
    bytes += c.bytes;
    ns += c.end_ns - c.start_ns;
  }
  return ns > 0 ? static_cast<double>(bytes) / static_cast<double>(ns) : 0.0;
}

// The host->device and device->host speeds a prefetch would move the bytes
// at, the first known of: the trace's prefetches, the bench ceiling, its large
// migrations, its migrations, its pinned copies, the GPU model's figure.
void PickBandwidths(const TraceModel& m, double h2d_link_bytes_per_ns, double d2h_link_bytes_per_ns,
                    double h2d_published_bytes_per_ns, double d2h_published_bytes_per_ns,
                    UmAnalysis* out) {
  UmAnalysis& a = *out;
  const std::vector<UmRecord>& um = m.um();
  const double large =
      Bandwidth(um, {UmCounterKind::kBytesHtoD, UmCounterKind::kBytesDtoH}, false, kLargeMigration);
  auto pick = [&](UmCounterKind kind, double link, double published, UmBandwidthSource* source) {
    const std::pair<double, UmBandwidthSource> tries[] = {
        {Bandwidth(um, {kind}, true), UmBandwidthSource::kPrefetches},
        {link, UmBandwidthSource::kBench},
        {large, UmBandwidthSource::kLargeMigrations},
        {Bandwidth(um, {kind}, false), UmBandwidthSource::kMigrations},
        {CopyBandwidth(m, kind == UmCounterKind::kBytesHtoD ? CopyKind::kHostToDevice
                                                            : CopyKind::kDeviceToHost),
         UmBandwidthSource::kCopies},
        {published, UmBandwidthSource::kPublished}};
    for (const auto& [bw, from] : tries) {
      if (bw > 0) {
        *source = from;
        return bw;
      }
    }
    return 0.0;
  };
  a.htod_bytes_per_ns = pick(UmCounterKind::kBytesHtoD, h2d_link_bytes_per_ns,
                             h2d_published_bytes_per_ns, &a.htod_bw_source);
  a.dtoh_bytes_per_ns = pick(UmCounterKind::kBytesDtoH, d2h_link_bytes_per_ns,
                             d2h_published_bytes_per_ns, &a.dtoh_bw_source);
}

// A sweep over one evidence list (kernels of one device rarely overlap;
// each kernel scans from the first interval that can still reach it).
struct Sweep {
  const std::vector<const UmRecord*>& ev;
  std::vector<int64_t> max_end;
  size_t first = 0;
  // Driver rows: the kernel time inside each (their bytes and faults happen
  // while kernels run, so a row is shared among the kernels it overlaps).
  std::vector<int64_t> kernel_ns;
  explicit Sweep(const std::vector<const UmRecord*>& e) : ev(e), max_end(e.size()) {
    for (size_t i = 0; i < ev.size(); ++i)
      max_end[i] = std::max(i ? max_end[i - 1] : 0, ev[i]->end_ns);
  }
  void Advance(int64_t s) {
    while (first < ev.size() && ev[first]->end_ns < s && max_end[first] < s) ++first;
  }
  // Driver rows overlapping the kernel [s, e): the kernel's part of their
  // values (each row's value times the kernel's share of its kernel time,
  // which includes this kernel, so never 0) and their whole values; the
  // overlaps into *cover when given.
  std::pair<double, double> Shares(int64_t s, int64_t e, std::vector<Interval>* cover) {
    Advance(s);
    double share = 0, total = 0;
    for (size_t j = first; j < ev.size() && ev[j]->start_ns < e; ++j) {
      const UmRecord& u = *ev[j];
      const int64_t cs = std::max(u.start_ns, s), ce = std::min(u.end_ns, e);
      if (ce <= cs || kernel_ns[j] <= 0) continue;
      if (cover) cover->push_back({cs, ce});
      share += static_cast<double>(u.value) *
               std::min(1.0, static_cast<double>(ce - cs) / static_cast<double>(kernel_ns[j]));
      total += static_cast<double>(u.value);
    }
    return {share, total};
  }
  // The evidence clipped to [s, e); fault groups counted into k.
  void Cover(int64_t s, int64_t e, std::vector<Interval>* cover, UmKernelStall* k) {
    Advance(s);
    for (size_t j = first; j < ev.size() && ev[j]->start_ns < e; ++j) {
      const UmRecord& u = *ev[j];
      const int64_t cs = std::max(u.start_ns, s), ce = std::min(u.end_ns, e);
      if (ce <= cs) continue;
      cover->push_back({cs, ce});
      if (u.kind == UmCounterKind::kGpuPageFault) {
        ++k->fault_groups;
        k->faults += static_cast<int64_t>(u.value);
      }
    }
  }
};

// Kernel time of `device` inside each of the sweep's driver rows.
void KernelTimeInRows(const TraceModel& m, int device, Sweep* sw) {
  const auto& all_ops = m.gpu_ops();
  int64_t longest = 0;
  for (const GpuOp& o : all_ops)
    if (o.kind == GpuOpKind::kKernel) longest = std::max(longest, o.end_ns - o.start_ns);
  sw->kernel_ns.assign(sw->ev.size(), 0);
  for (size_t j = 0; j < sw->ev.size(); ++j) {
    const UmRecord& u = *sw->ev[j];
    auto it = std::lower_bound(all_ops.begin(), all_ops.end(), u.start_ns - longest,
                               [](const GpuOp& o, int64_t t) { return o.start_ns < t; });
    for (; it != all_ops.end() && it->start_ns < u.end_ns; ++it) {
      if (it->kind != GpuOpKind::kKernel || (device >= 0 && it->device != device)) continue;
      sw->kernel_ns[j] +=
          std::max<int64_t>(0, std::min(u.end_ns, it->end_ns) - std::max(u.start_ns, it->start_ns));
    }
  }
}

// Fault-free runs of each kernel (name, grid, block): their durations.
using KernelKey = std::array<int64_t, 7>;
KernelKey KeyOf(const TraceModel& m, const GpuOp& o) {
  const KernelRecord& r = m.kernels()[o.index];
  return KernelKey{r.name, r.grid_x, r.grid_y, r.grid_z, r.block_x, r.block_y, r.block_z};
}

// What the records say of one kernel beyond its stall: the fault-driven
// migrations inside it.
struct Ext {
  int64_t mig_span = 0;  // first to last fault-driven migration in the kernel
  int64_t mig_end = 0;   // end of the last
};

// Per kernel of `device`: the time its fault evidence covers (recorded_ns)
// and the migrations inside it; kernels with evidence into a->kernels (their
// Ext in *ext), the durations of the others into *clean.
void RecordedStalls(const TraceModel& m, int device, UmAnalysis* out,
                    std::map<KernelKey, std::vector<int64_t>>* clean_out,
                    std::vector<Ext>* ext_out) {
  UmAnalysis& a = *out;
  const std::vector<UmRecord>& um = m.um();
  std::map<KernelKey, std::vector<int64_t>>& clean = *clean_out;
  std::vector<Ext>& ext = *ext_out;
  // Evidence intervals, sorted by start (um() is start-ordered): the GPU fault
  // groups, the driver's GPU-fault totals, and the fault-driven host->device
  // migrations; the driver's host->device totals give the bytes.
  std::vector<const UmRecord*> faults, drv_faults, htod, drv_htod;
  for (const UmRecord& u : um) {
    if (u.kind == UmCounterKind::kGpuPageFault) faults.push_back(&u);
    if (u.kind == UmCounterKind::kDriverGpuFaults) drv_faults.push_back(&u);
    if (u.kind == UmCounterKind::kBytesHtoD && FaultDriven(u)) htod.push_back(&u);
    if (u.kind == UmCounterKind::kDriverHtoD) drv_htod.push_back(&u);
  }
  Sweep fault_sweep(faults), drv_fault_sweep(drv_faults), mig_sweep(htod), drv_mig_sweep(drv_htod);
  KernelTimeInRows(m, device, &drv_fault_sweep);
  KernelTimeInRows(m, device, &drv_mig_sweep);
  size_t first_mig = 0;
  const auto& ops = m.gpu_ops();
  std::vector<Interval> cover;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const GpuOp& o = ops[i];
    if (o.kind != GpuOpKind::kKernel || (device >= 0 && o.device != device)) continue;
    UmKernelStall k;
    k.op = i;
    cover.clear();
    fault_sweep.Cover(o.start_ns, o.end_ns, &cover, &k);
    // The driver's totals: its GPU faults are evidence when no fault group
    // was recorded (not asked for); its host->device bytes are the kernel's.
    if (cover.empty()) {
      // Each poll interval (~1 ms) holds the faults of whatever ran in it,
      // shared by kernel time. A kernel is a faulting one when its share is
      // at least a tenth of its intervals' faults: a short kernel that only
      // touches the interval of a faulting neighbour is not.
      std::vector<Interval> drv;
      const auto [share, total] = drv_fault_sweep.Shares(o.start_ns, o.end_ns, &drv);
      if (share >= 1 && share >= 0.1 * total) {
        cover = std::move(drv);
        k.faults = std::llround(share);
      }
    }
    k.htod_bytes = static_cast<uint64_t>(
        std::llround(drv_mig_sweep.Shares(o.start_ns, o.end_ns, nullptr).first));
    // Per kernel: its fault groups, else (none recorded: not asked for, or
    // lost; CUPTI on the lent VMs delivered them for the first kernel only,
    // docs/um.md) the span from its first to its last fault-driven migration:
    // the copies themselves are short, the fault handling between them is
    // what the kernel waits for.
    if (cover.empty()) {
      mig_sweep.Cover(o.start_ns, o.end_ns, &cover, &k);
      if (cover.size() > 1) {
        Interval span = cover.front();
        for (const Interval& iv : cover)
          span = {std::min(span.start, iv.start), std::max(span.end, iv.end)};
        cover.assign(1, span);
      }
    }
    std::sort(cover.begin(), cover.end(),
              [](const Interval& x, const Interval& y) { return x.start < y.start; });
    if (cover.empty()) clean[KeyOf(m, o)].push_back(o.end_ns - o.start_ns);
    Ext x;
    int64_t cur_s = -1, cur_e = -1;
    for (const Interval& iv : cover) {
      if (iv.start > cur_e + kReplayGapNs) {
        if (cur_e > cur_s) k.stalled_ns += cur_e - cur_s;
        cur_s = iv.start;
        cur_e = iv.end;
      } else {
        cur_e = std::max(cur_e, iv.end);
      }
    }
    if (cur_e > cur_s) k.stalled_ns += cur_e - cur_s;
    while (first_mig < htod.size() && htod[first_mig]->start_ns < o.start_ns) ++first_mig;
    int64_t m0 = -1;
    for (size_t j = first_mig; j < htod.size() && htod[j]->start_ns < o.end_ns; ++j) {
      k.htod_bytes_recorded += htod[j]->value;
      if (m0 < 0) m0 = htod[j]->start_ns;
      x.mig_end = std::max(x.mig_end, std::min(htod[j]->end_ns, o.end_ns));
    }
    x.mig_span = m0 >= 0 ? std::max<int64_t>(0, x.mig_end - m0) : 0;
    k.recorded_ns = k.stalled_ns;
    if (k.stalled_ns > 0) {
      a.kernels.push_back(k);
      ext.push_back(x);
    }
  }
}

// The fault-stalled time and its bytes (um.h): against the kernel's fault-free
// runs where it has some, else the whole kernel.
void StalledTimeAndBytes(const TraceModel& m, std::map<KernelKey, std::vector<int64_t>>* clean,
                         const std::vector<Ext>& ext, UmAnalysis* out) {
  UmAnalysis& a = *out;
  const auto& ops = m.gpu_ops();
  std::map<KernelKey, int64_t> resident;
  for (auto& [key, v] : *clean) resident[key] = LowerMedian(&v);
  for (size_t n = 0; n < a.kernels.size(); ++n) {
    UmKernelStall& k = a.kernels[n];
    const GpuOp& o = ops[k.op];
    const int64_t dur = o.end_ns - o.start_ns;
    auto r = resident.find(KeyOf(m, o));
    if (r != resident.end()) {
      // The reference wins over the evidence: a kernel that computes while
      // its faults are served stalls less than its fault groups span.
      k.resident_ns = r->second;
      k.stalled_ns = std::clamp<int64_t>(dur - r->second, 0, dur);
    } else {
      // The whole kernel: the records' head, gaps and tail are the same
      // storm, unrecorded (um.h).
      k.stalled_ns = dur;
    }
    // The driver's totals over the kernel are complete: no extrapolation.
    if (a.has_driver_totals) continue;
    // Bytes past the records: the recorded migrations' rate over their own
    // span, continued to the end of the stall.
    k.htod_bytes = k.htod_bytes_recorded;
    const int64_t tail = o.end_ns - ext[n].mig_end;
    // (A rate needs a span: at least a tenth of the kernel.)
    if (k.resident_ns < 0 && ext[n].mig_span * 10 >= dur && ext[n].mig_end > 0 && tail > 0) {
      k.htod_bytes += static_cast<uint64_t>(static_cast<double>(k.htod_bytes_recorded) * tail /
                                            ext[n].mig_span);
    }
  }
}

// CPU side: fault-driven device->host migrations while no kernel of the
// device ran, grouped into bursts.
void CpuBursts(const TraceModel& m, int device, UmAnalysis* out) {
  UmAnalysis& a = *out;
  const std::vector<UmRecord>& um = m.um();
  const auto& ops = m.gpu_ops();
  size_t op_i = 0;
  UmCpuBurst cur;
  auto flush = [&]() {
    if (cur.migrations > 0) a.cpu_bursts.push_back(cur);
    cur = UmCpuBurst{};
  };
  // CUPTI's fault-driven records; without them, the driver's device->host
  // totals of the poll intervals that also saw CPU faults (a user prefetch
  // to the CPU moves bytes without faults).
  bool cupti_dtoh = false;
  for (const UmRecord& u : um) cupti_dtoh |= u.kind == UmCounterKind::kBytesDtoH && FaultDriven(u);
  std::vector<int64_t> cpu_fault_polls;
  for (const UmRecord& u : um)
    if (u.kind == UmCounterKind::kDriverCpuFaults) cpu_fault_polls.push_back(u.start_ns);
  std::sort(cpu_fault_polls.begin(), cpu_fault_polls.end());
  for (const UmRecord& u : um) {
    const bool driver =
        !cupti_dtoh && u.kind == UmCounterKind::kDriverDtoH &&
        std::binary_search(cpu_fault_polls.begin(), cpu_fault_polls.end(), u.start_ns);
    if (!driver && (u.kind != UmCounterKind::kBytesDtoH || !FaultDriven(u))) continue;
    // A poll interval starts at the previous poll, often inside the kernel
    // the CPU waited for: its end says where it is.
    const int64_t at = driver ? u.end_ns : u.start_ns;
    while (op_i < ops.size() && ops[op_i].end_ns <= at) ++op_i;
    bool in_kernel = false;
    for (size_t j = op_i; j < ops.size() && ops[j].start_ns <= at; ++j) {
      if (ops[j].kind == GpuOpKind::kKernel && ops[j].end_ns > at &&
          (device < 0 || ops[j].device == device))
        in_kernel = true;
    }
    if (in_kernel) continue;
    if (cur.migrations > 0 && u.start_ns - cur.end_ns > kBurstGapNs) flush();
    if (cur.migrations == 0) cur.start_ns = u.start_ns;
    cur.end_ns = std::max(cur.end_ns, u.end_ns);
    cur.dtoh_bytes += u.value;
    ++cur.migrations;
  }
  flush();
}

}  // namespace

int64_t UmPrefetchSaving(int64_t stalled_ns, uint64_t bytes, double bytes_per_ns) {
  if (bytes_per_ns <= 0) return 0;
  const double t = static_cast<double>(bytes) / bytes_per_ns;
  return std::max<int64_t>(0, stalled_ns - std::llround(t));
}

const char* UmBandwidthSourceText(UmBandwidthSource s) {
  switch (s) {
    case UmBandwidthSource::kPrefetches:
      return "measured on the trace's prefetches";
    case UmBandwidthSource::kBench:
      return "the stepscope bench pinned-copy ceiling";
    case UmBandwidthSource::kLargeMigrations:
      return "the speed of the trace's large migrations";
    case UmBandwidthSource::kMigrations:
      return "the migrations' own copy speed";
    case UmBandwidthSource::kCopies:
      return "the speed of the trace's pinned copies";
    case UmBandwidthSource::kPublished:
      return "the host-link figure of this GPU model (the table of GPU models, docs/rules.md); run "
             "stepscope bench for this machine's";
    case UmBandwidthSource::kNone:
      break;
  }
  return "unknown";
}

UmAnalysis AnalyzeUm(const TraceModel& m, int device, double h2d_link_bytes_per_ns,
                     double d2h_link_bytes_per_ns, double h2d_published_bytes_per_ns,
                     double d2h_published_bytes_per_ns) {
  UmAnalysis a;
  if (m.um().empty()) return a;
  PickBandwidths(m, h2d_link_bytes_per_ns, d2h_link_bytes_per_ns, h2d_published_bytes_per_ns,
                 d2h_published_bytes_per_ns, &a);
  for (const UmRecord& u : m.um()) {
    a.has_gpu_faults |= u.kind == UmCounterKind::kGpuPageFault;
    a.has_driver_totals |= IsUmDriverTotal(u.kind);
  }
  std::map<KernelKey, std::vector<int64_t>> clean;
  std::vector<Ext> ext;
  RecordedStalls(m, device, &a, &clean, &ext);
  StalledTimeAndBytes(m, &clean, ext, &a);
  CpuBursts(m, device, &a);
  return a;
}

}  // namespace stepscope
