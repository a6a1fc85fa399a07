#include "analysis/memory/memory_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "common/json_writer.h"
#include "common/strings.h"

namespace stepscope::memory {

namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

// A step number, or an empty cell when no step range contains the moment.
Cell StepCell(int64_t step) { return step >= 0 ? Cell(step) : Cell(""); }

class Builder {
 public:
  Builder(const MemoryAnalysis& a, const TraceReader& r, const ReportOptions& o)
      : a_(a), r_(r), o_(o) {}

  MemoryReport Build() {
    Header();
    Peaks();
    LiveAtPeak();
    Largest();
    NeverFreed();
    Threads();
    Pools();
    Torch();
    TorchLiveAtPeak();
    Ooms();
    Quality();
    return std::move(rep_);
  }

 private:
  std::string Range(StringId id) const { return id ? r_.String(id) : "(no range)"; }
  std::string Api(const Allocation& al) const {
    if (al.api) return r_.String(al.api);
    if (al.kind == SeriesKind::kHostMalloc) return "malloc";
    if (al.kind == SeriesKind::kHostMmap) return "mmap";
    return "(unknown call)";
  }
  double Pct(uint64_t part, uint64_t whole) const {
    return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  }
  Table& Section(const std::string& name, const std::string& title, std::vector<Column> cols) {
    rep_.sections.push_back({name, title, Table(std::move(cols))});
    return rep_.sections.back().table;
  }
  // What held a series' memory after `event`: allocations grouped by (NVTX
  // range, API call), largest bytes first, at most --top groups.
  struct Holder {
    std::string range, api;
    uint64_t count = 0, bytes = 0;
  };
  std::vector<Holder> TopHolders(size_t event, SeriesKey key) const {
    std::map<std::pair<std::string, std::string>, Holder> groups;
    for (const Allocation* al : a_.profile.LiveAfter(event, key)) {
      Holder& h = groups[{Range(al->range), Api(*al)}];
      ++h.count;
      h.bytes += al->bytes;
    }
    std::vector<Holder> v;
    for (auto& [k, h] : groups) {
      h.range = k.first;
      h.api = k.second;
      v.push_back(std::move(h));
    }
    std::stable_sort(v.begin(), v.end(),
                     [](const Holder& x, const Holder& y) { return x.bytes > y.bytes; });
    if (v.size() > o_.top) v.resize(o_.top);
    return v;
  }

  // Series that get their own peak analysis: per-place totals, pinned, managed.
  std::vector<SeriesKey> TopSeries() const {
    std::vector<SeriesKey> out;
    for (const auto& [key, st] : a_.profile.series) {
      if (key.kind == SeriesKind::kTotal || key.kind == SeriesKind::kPinned ||
          key.kind == SeriesKind::kManaged) {
        out.push_back(key);
      }
    }
    return out;
  }

  void Header() {
    auto& h = rep_.header;
    h.push_back("trace: " + r_.path() +
                (a_.trace.finalized ? " (finalized)" : " (CUT OFF: meta.finalized = 0)"));
    std::string devs;
    for (const auto& [id, bytes] : a_.trace.device_memory_bytes) {
      devs += (devs.empty() ? "" : ", ") + PlaceName(static_cast<int32_t>(id)) + " " +
              FormatBytes(bytes);
    }
    h.push_back("records: " + FormatCount(static_cast<int64_t>(a_.trace.memory_rows)) +
                " memory, " + FormatCount(static_cast<int64_t>(a_.trace.host_alloc_rows)) +
                " host_alloc" + (devs.empty() ? "" : "; devices: " + devs));
    if (a_.has_torch) {
      uint64_t entries = 0;
      for (const auto& d : a_.torch_devices) entries += d.entries;
      h.push_back("pytorch allocator: " + a_.torch_path + " (written at " + a_.torch.reason + ", " +
                  FormatCount(static_cast<int64_t>(entries)) + " history entries)");
    }
    for (const std::string& n : a_.notes) h.push_back("note: " + n);
  }

  // `lead`, then `more`: the columns of tables that start alike.
  static std::vector<Column> AppendColumns(std::vector<Column> lead,
                                           const std::vector<Column>& more) {
    lead.insert(lead.end(), more.begin(), more.end());
    return lead;
  }
  // A peak's columns (peaks, pytorch): the place and series, the peak in bytes
  // and in words, when (seconds, step, NVTX range); then `more`.
  static std::vector<Column> PeakColumns(const std::vector<Column>& more) {
    return AppendColumns({{"place"},
                          {"series"},
                          {"peak_bytes", "peak_bytes", true},
                          {"peak", "peak", true},
                          {"at_s", "at_s", true},
                          {"step", "step", true},
                          {"range"}},
                         more);
  }

  void Peaks() {
    Table& t =
        Section("peaks", "peaks: bytes in use per place and series (CUPTI and host-mem records)",
                PeakColumns({{"allocs", "allocs", true},
                             {"frees", "frees", true},
                             {"in_use_at_end", "in_use_at_end", true}}));
    for (const auto& [key, st] : a_.profile.series) {
      std::string range;
      int64_t step = -1;
      if (st.peak_event != kNever) {
        const AllocEvent& e = a_.trace.events[st.peak_event];
        NvtxAt at = a_.At(e.tid, e.call_ns);
        range = at.range ? r_.String(at.range) : "";
        step = at.step;
      }
      t.AddRow({PlaceName(key.place), SeriesKindName(key.kind), st.peak_bytes,
                FormatBytes(st.peak_bytes), Cell(st.peak_ns >= 0 ? a_.Seconds(st.peak_ns) : 0.0, 6),
                StepCell(step), range, st.allocs, st.frees, st.end_bytes});
    }
  }

  // A group of held allocations' columns (live_at_peak, never_freed): the
  // place and series, the NVTX range and call, how many, their bytes in bytes
  // and in words; then `more`.
  static std::vector<Column> HolderColumns(const std::vector<Column>& more) {
    return AppendColumns({{"place"},
                          {"series"},
                          {"range"},
                          {"api"},
                          {"count", "count", true},
                          {"bytes", "bytes", true},
                          {"size", "size", true}},
                         more);
  }

  void LiveAtPeak() {
    Table& t = Section("live_at_peak",
                       "live at peak: what held the memory at each peak, by NVTX range and call",
                       HolderColumns({{"share_pct", "share_pct", true}}));
    for (SeriesKey key : TopSeries()) {
      const SeriesStats& st = a_.profile.series.at(key);
      if (st.peak_event == kNever || st.peak_bytes == 0) continue;
      for (const Holder& h : TopHolders(st.peak_event, key)) {
        t.AddRow({PlaceName(key.place), SeriesKindName(key.kind), h.range, h.api, h.count, h.bytes,
                  FormatBytes(h.bytes), Cell(Pct(h.bytes, st.peak_bytes), 1)});
      }
    }
  }

  void AllocationRow(Table& t, const Allocation& al) {
    t.AddRow({PlaceName(al.place), SeriesKindName(al.kind), al.bytes, FormatBytes(al.bytes),
              Cell(a_.Seconds(al.alloc_ns), 6),
              al.free_ns >= 0 ? Cell(a_.Seconds(al.free_ns), 6) : Cell("never"), Api(al),
              Range(al.range), StepCell(al.step), al.tid, Hex(al.address)});
  }
  std::vector<Column> AllocationColumns() {
    return {{"place"},
            {"series"},
            {"bytes", "bytes", true},
            {"size", "size", true},
            {"alloc_s", "alloc_s", true},
            {"free_s", "free_s", true},
            {"api"},
            {"range"},
            {"step", "step", true},
            {"tid", "tid", true},
            {"address"}};
  }

  void Largest() {
    Table& t = Section("largest", "largest allocations", AllocationColumns());
    std::vector<const Allocation*> v;
    for (const Allocation& al : a_.profile.allocations) v.push_back(&al);
    std::stable_sort(v.begin(), v.end(),
                     [](const Allocation* x, const Allocation* y) { return x->bytes > y->bytes; });
    if (v.size() > o_.top) v.resize(o_.top);
    for (const Allocation* al : v) AllocationRow(t, *al);
  }

  void NeverFreed() {
    std::string what = a_.trace.finalized
                           ? "never freed: still allocated when the traced process ended"
                           : "live at the cut-off: still allocated when the trace was cut off "
                             "(not necessarily leaks)";
    Table& t =
        Section("never_freed", what, HolderColumns({{"first_alloc_s", "first_alloc_s", true}}));
    struct G {
      uint64_t count = 0, bytes = 0;
      int64_t first = INT64_MAX;
    };
    std::map<std::tuple<int32_t, SeriesKind, std::string, std::string>, G> groups;
    for (const Allocation& al : a_.profile.allocations) {
      if (al.free_event != kNever) continue;
      G& g = groups[{al.place, al.kind, Range(al.range), Api(al)}];
      ++g.count;
      g.bytes += al.bytes;
      g.first = std::min(g.first, al.alloc_ns);
    }
    std::vector<std::pair<std::tuple<int32_t, SeriesKind, std::string, std::string>, G>> v(
        groups.begin(), groups.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& x, const auto& y) { return x.second.bytes > y.second.bytes; });
    for (const auto& [k, g] : v) {
      t.AddRow({PlaceName(std::get<0>(k)), SeriesKindName(std::get<1>(k)), std::get<2>(k),
                std::get<3>(k), g.count, g.bytes, FormatBytes(g.bytes),
                Cell(a_.Seconds(g.first), 6)});
    }
  }

  // Per place and allocating thread: how much each thread allocated, held at
  // the place's peak, and never freed.
  void Threads() {
    Table& t = Section("threads", "by thread: who allocated, held at the peak, never freed",
                       {{"place"},
                        {"tid", "tid", true},
                        {"thread"},
                        {"allocs", "allocs", true},
                        {"allocated_bytes", "allocated_bytes", true},
                        {"at_peak_bytes", "at_peak_bytes", true},
                        {"never_freed_bytes", "never_freed_bytes", true}});
    auto names = r_.ThreadNames();
    struct G {
      uint64_t allocs = 0, bytes = 0, at_peak = 0, never = 0;
    };
    std::map<std::pair<int32_t, uint32_t>, G> groups;
    for (const Allocation& al : a_.profile.allocations) {
      if (!CountsTowardTotal(al.kind)) continue;
      G& g = groups[{al.place, al.tid}];
      ++g.allocs;
      g.bytes += al.bytes;
      if (al.free_event == kNever) g.never += al.bytes;
      auto it = a_.profile.series.find({al.place, SeriesKind::kTotal});
      if (it != a_.profile.series.end() && it->second.peak_event != kNever &&
          al.LiveAfter(it->second.peak_event)) {
        g.at_peak += al.bytes;
      }
    }
    for (const auto& [k, g] : groups) {
      std::string name;
      if (names.ok() && names->count(k.second)) name = names->at(k.second);
      t.AddRow({PlaceName(k.first), k.second, name, g.allocs, g.bytes, g.at_peak, g.never});
    }
  }

  void Pools() {
    Table& t = Section("pools", "stream-ordered memory pools (CUPTI MEMORY_POOL)",
                       {{"pool"},
                        {"place"},
                        {"first_s", "first_s", true},
                        {"max_size", "max_size", true},
                        {"max_used", "max_used", true},
                        {"last_op"},
                        {"managed", "managed", true}});
    struct P {
      uint32_t device = 0;
      int64_t first = 0;
      uint64_t max_size = 0, max_used = 0;
      MemoryPoolOp last = MemoryPoolOp::kUnknown;
      bool managed = false;
    };
    std::map<uint64_t, P> pools;
    for (const MemoryPoolRecord& r : a_.trace.pools) {
      auto [it, fresh] = pools.try_emplace(r.address);
      P& p = it->second;
      if (fresh) p.first = r.ts_ns;
      p.device = r.device;
      p.max_size = std::max(p.max_size, r.size);
      p.max_used = std::max(p.max_used, r.utilized_bytes);
      p.last = r.op;
      p.managed = r.is_managed != 0;
    }
    for (const auto& [addr, p] : pools) {
      t.AddRow({Hex(addr), PlaceName(static_cast<int32_t>(p.device)), Cell(a_.Seconds(p.first), 6),
                p.max_size, p.max_used, MemoryPoolOpName(p.last), p.managed ? 1 : 0});
    }
  }

  void Torch() {
    Table& t = Section(
        "pytorch",
        "pytorch caching allocator: allocated (tensors) and reserved (segments), from its history",
        PeakColumns({{"torch_max", "torch_max", true},
                     {"diff_pct", "diff_pct", true},
                     {"at_dump", "at_dump", true},
                     {"model_misses", "model_misses", true}}));
    for (const TorchDeviceProfile& d : a_.torch_devices) {
      auto row = [&](SeriesKind kind, uint64_t peak, int64_t ns, int64_t torch_max, int64_t end,
                     uint64_t misses) {
        NvtxAt at;
        if (ns >= 0 && a_.torch_clock_aligned) at = a_.At(0, ns);
        double diff = torch_max > 0
                          ? 100.0 * (static_cast<double>(peak) - static_cast<double>(torch_max)) /
                                static_cast<double>(torch_max)
                          : 0.0;
        t.AddRow({PlaceName(d.device), SeriesKindName(kind), peak, FormatBytes(peak),
                  ns >= 0 ? Cell(a_.Seconds(ns), 6) : Cell(""), StepCell(at.step),
                  at.range ? r_.String(at.range) : "", torch_max >= 0 ? Cell(torch_max) : Cell(""),
                  torch_max > 0 ? Cell(diff, 2) : Cell(""), end, misses});
      };
      row(SeriesKind::kTorchAllocated, d.peak_allocated, d.peak_allocated_ns,
          d.counters.max_allocated, d.end_allocated, d.model_misses);
      row(SeriesKind::kTorchReserved, d.peak_reserved, d.peak_reserved_ns, d.counters.max_reserved,
          d.end_reserved, 0);
    }
  }

  // Groups tensors by their user frame; rows go to `t` with `lead` cells first.
  void TensorGroups(Table& t, const std::vector<Cell>& lead,
                    const std::vector<const TorchTensor*>& live, uint64_t whole) {
    struct G {
      uint64_t count = 0, bytes = 0, requested = 0;
      int32_t stack = -1;
    };
    std::map<std::string, G> groups;
    for (const TorchTensor* tt : live) {
      G& g = groups[FrameLabel(UserFrame(a_.torch, tt->stack))];
      ++g.count;
      g.bytes += tt->block_size;
      g.requested += tt->requested;
      if (g.stack < 0) g.stack = tt->stack;
    }
    std::vector<std::pair<std::string, G>> v(groups.begin(), groups.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& x, const auto& y) { return x.second.bytes > y.second.bytes; });
    if (v.size() > o_.top) v.resize(o_.top);
    for (const auto& [label, g] : v) {
      std::vector<Cell> row = lead;
      for (Cell c : std::vector<Cell>{label, g.count, g.bytes, FormatBytes(g.bytes), g.requested,
                                      Cell(Pct(g.bytes, whole), 1), StackText(g.stack)}) {
        row.push_back(c);
      }
      t.AddRow(std::move(row));
    }
  }
  std::string StackText(int32_t stack) const {
    if (stack < 0) return "";
    std::vector<std::string> parts;
    for (int32_t fi : a_.torch.stacks[static_cast<size_t>(stack)]) {
      if (fi < 0) continue;
      const TorchFrame& f = a_.torch.frames[static_cast<size_t>(fi)];
      parts.push_back(f.file + ":" + std::to_string(f.line) + " " + f.function);
      if (parts.size() == 12) break;
    }
    return Join(parts, " <- ");
  }
  std::vector<Column> TensorColumns(std::vector<Column> lead) {
    return AppendColumns(std::move(lead), {{"site"},
                                           {"count", "count", true},
                                           {"bytes", "bytes", true},
                                           {"size", "size", true},
                                           {"requested", "requested", true},
                                           {"share_pct", "share_pct", true},
                                           {"stack"}});
  }

  void TorchLiveAtPeak() {
    Table& t =
        Section("pytorch_live_at_peak", "live tensors at the allocated peak, by Python source line",
                TensorColumns({{"place"}}));
    for (const TorchDeviceProfile& d : a_.torch_devices) {
      if (d.peak_allocated_index == kNever) continue;
      TensorGroups(t, {PlaceName(d.device)}, d.LiveAt(d.peak_allocated_index), d.peak_allocated);
    }
  }

  void Ooms() {
    Table& t = Section("oom", "out-of-memory events",
                       {{"oom", "oom", true},
                        {"source"},
                        {"at_s", "at_s", true},
                        {"place"},
                        {"call"},
                        {"requested", "requested", true},
                        {"free", "free", true},
                        {"total", "total", true},
                        {"step", "step", true},
                        {"range"}});
    int n = 0;
    std::vector<std::pair<int, const OomEvent*>> cuda;
    for (const OomEvent& o : a_.trace.ooms) {
      ++n;
      NvtxAt at = a_.At(o.tid, o.ts_ns);
      int64_t total = o.total_bytes;
      if (total < 0 && o.device >= 0 &&
          a_.trace.device_memory_bytes.count(static_cast<uint32_t>(o.device))) {
        total =
            static_cast<int64_t>(a_.trace.device_memory_bytes.at(static_cast<uint32_t>(o.device)));
      }
      t.AddRow(
          {n, o.from_oom_table ? "cuda-oom-record" : "cuda-api-error", Cell(a_.Seconds(o.ts_ns), 6),
           o.device >= 0                   ? PlaceName(o.device)
           : o.kind == SeriesKind::kPinned ? PlaceName(kHostPlace)
                                           : "",
           r_.String(o.api), o.requested_bytes >= 0 ? Cell(o.requested_bytes) : Cell(""),
           o.free_bytes >= 0 ? Cell(o.free_bytes) : Cell(""), total >= 0 ? Cell(total) : Cell(""),
           StepCell(at.step), at.range ? r_.String(at.range) : ""});
      cuda.push_back({n, &o});
    }
    std::vector<std::tuple<int, const TorchDeviceProfile*, const TorchOomAt*>> torch;
    for (const TorchDeviceProfile& d : a_.torch_devices) {
      for (const TorchOomAt& o : d.ooms) {
        ++n;
        NvtxAt at;
        if (a_.torch_clock_aligned) at = a_.At(0, o.ts_ns);
        t.AddRow({n, "pytorch-allocator", Cell(a_.Seconds(o.ts_ns), 6), PlaceName(d.device),
                  FormatLabel(o.stack), o.requested >= 0 ? Cell(o.requested) : Cell(""),
                  o.device_free >= 0 ? Cell(o.device_free) : Cell(""),
                  o.total >= 0 ? Cell(o.total) : Cell(""), StepCell(at.step),
                  at.range ? r_.String(at.range) : ""});
        torch.push_back({n, &d, &o});
      }
    }
    // The live set at each OOM: device allocations (CUPTI) and tensors (PyTorch).
    Table& l = Section("oom_live", "live at each OOM: the largest holders",
                       {{"oom", "oom", true},
                        {"what"},
                        {"site"},
                        {"count", "count", true},
                        {"bytes", "bytes", true},
                        {"size", "size", true},
                        {"stack"}});
    for (const auto& [id, o] : cuda) {
      size_t ev = LastEventAtOrBefore(a_.trace.events, o->ts_ns);
      if (ev == kNever) continue;
      // Pinned requests fail on the host; a failed api row alone does not name
      // its device: take the GPU holding the most memory then.
      int32_t place = o->kind == SeriesKind::kPinned ? kHostPlace
                      : o->device >= 0               ? o->device
                                                     : BusiestGpu(ev);
      SeriesKey key{place, o->kind == SeriesKind::kDevice ? SeriesKind::kTotal : o->kind};
      for (const Holder& h : TopHolders(ev, key)) {
        l.AddRow({id, PlaceName(place) + " allocations", h.range + " / " + h.api, h.count, h.bytes,
                  FormatBytes(h.bytes), ""});
      }
    }
    for (const auto& [id, d, o] : torch) {
      if (o->index == kNever) continue;
      std::vector<const TorchTensor*> live = d->LiveAt(o->index);
      Table tmp(TensorColumns({}));
      TensorGroups(tmp, {}, live, 0);
      for (const auto& row : tmp.rows()) {
        // site, count, bytes, size, requested, share, stack
        l.AddRow({id, PlaceName(d->device) + " tensors", row[0], row[1], row[2], row[3], row[6]});
      }
    }
  }
  std::string FormatLabel(int32_t stack) const {
    return stack >= 0 ? FrameLabel(UserFrame(a_.torch, stack)) : "";
  }
  int32_t BusiestGpu(size_t ev) const {
    int32_t best = 0;
    uint64_t most = 0;
    for (const auto& [key, st] : a_.profile.series) {
      if (key.kind != SeriesKind::kTotal || key.place == kHostPlace) continue;
      uint64_t b = a_.profile.BytesAfter(ev, key);
      if (b >= most) {
        most = b;
        best = key.place;
      }
    }
    return best;
  }

  void Quality() {
    Table& t = Section("quality", "data quality: records the analysis could not use as they are",
                       {{"name"}, {"value", "value", true}, {"meaning"}});
    const MemoryQuality& q = a_.profile.quality;
    auto row = [&](const char* name, int64_t v, const char* doc) { t.AddRow({name, v, doc}); };
    row("trace_finalized", a_.trace.finalized ? 1 : 0, "0: the trace was cut off mid-run");
    row("unknown_frees", static_cast<int64_t>(q.unknown_frees),
        "frees of an address with no live allocation (allocated before tracing, or a lost record)");
    row("unknown_free_bytes", static_cast<int64_t>(q.unknown_free_bytes),
        "bytes those frees claimed");
    row("null_frees", static_cast<int64_t>(q.null_frees), "frees of address 0 (ignored)");
    row("realloc_of_live", static_cast<int64_t>(q.realloc_of_live),
        "allocations at a still-live address (the earlier free was lost)");
    row("unknown_ops", static_cast<int64_t>(q.unknown_ops),
        "memory rows that are neither alloc nor free");
    for (const TorchDeviceProfile& d : a_.torch_devices) {
      std::string p = PlaceName(d.device) + ".";
      t.AddRow({p + "pytorch_model_misses", static_cast<int64_t>(d.model_misses),
                "allocations whose block size was not derivable (rounded size used)"});
      t.AddRow({p + "pytorch_unknown_frees", static_cast<int64_t>(d.unknown_frees),
                "free_requested of an address with no recorded alloc"});
      t.AddRow({p + "pytorch_history_full", d.history_full ? 1 : 0,
                "1: the history ring lost its oldest entries"});
      if (d.snapshot_allocated >= 0) {
        t.AddRow({p + "pytorch_allocated_drift", d.end_allocated - d.snapshot_allocated,
                  "replayed allocated at the end minus the final snapshot's (0 when consistent)"});
        t.AddRow({p + "pytorch_reserved_drift", d.end_reserved - d.snapshot_reserved,
                  "replayed reserved at the end minus the final snapshot's (0 when consistent)"});
      }
    }
  }

  const MemoryAnalysis& a_;
  const TraceReader& r_;
  const ReportOptions& o_;
  MemoryReport rep_;
};

}  // namespace

MemoryReport BuildMemoryReport(const MemoryAnalysis& analysis, const TraceReader& reader,
                               const ReportOptions& options) {
  return Builder(analysis, reader, options).Build();
}

std::string RenderMemoryReport(const MemoryReport& report, OutputFormat format,
                               const std::string& only) {
  std::string out;
  if (format == OutputFormat::kText && only.empty()) {
    for (const std::string& h : report.header) out += h + "\n";
  }
  // JSON: one object of named tables, one section or all.
  if (format == OutputFormat::kJson) out += "{";
  bool first = true;
  for (const MemorySection& s : report.sections) {
    if (!only.empty() && s.name != only) continue;
    switch (format) {
      case OutputFormat::kText:
        if (!only.empty()) {
          out += s.table.RenderText();
        } else if (s.table.size() > 0) {
          out += "\n== " + s.title + "\n" + s.table.RenderText();
        }
        break;
      case OutputFormat::kCsv:
        if (only.empty()) out += std::string(first ? "" : "\n") + "# " + s.name + "\n";
        out += s.table.RenderCsv();
        break;
      case OutputFormat::kJson: {
        std::string body = s.table.RenderJson();
        while (!body.empty() && body.back() == '\n') body.pop_back();
        out += std::string(first ? "\n" : ",\n") + JsonQuote(s.name) + ": " + body;
      } break;
    }
    first = false;
  }
  if (format == OutputFormat::kJson) out += first ? "}\n" : "\n}\n";
  return out;
}

Table TimelineTable(const MemoryAnalysis& analysis, const std::vector<TimelinePoint>& points) {
  Table t({{"ts_ns"}, {"t_s"}, {"place"}, {"series"}, {"bytes"}});
  for (const TimelinePoint& p : points) {
    t.AddRow({p.ts_ns, Cell(analysis.Seconds(p.ts_ns), 6), PlaceName(p.place),
              SeriesKindName(p.kind), p.bytes});
  }
  return t;
}

}  // namespace stepscope::memory
