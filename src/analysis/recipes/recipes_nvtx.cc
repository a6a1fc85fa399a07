// The NVTX recipes: nvtx_sum, nvtx_gpu_proj_sum, nvtx_pace.
#include <algorithm>
#include <map>

#include "analysis/recipes/recipes.h"

namespace stepscope {
namespace {

const char* Style(NvtxKind k) { return k == NvtxKind::kStartEnd ? "StartEnd" : "PushPop"; }

std::string RangeLabel(const TraceModel& m, const NvtxRecord& r) {
  const std::string& domain = m.String(r.domain);
  return domain.empty() ? m.String(r.name) : domain + ":" + m.String(r.name);
}

// Key of a range group: (domain, name, kind).
uint64_t RangeKey(const NvtxRecord& r) {
  return (static_cast<uint64_t>(r.domain) << 34) | (static_cast<uint64_t>(r.name) << 2) |
         static_cast<uint64_t>(r.kind);
}

}  // namespace

StatusOr<Table> NvtxSum(const TraceModel& m, const RecipeOptions& o) {
  std::map<uint64_t, std::vector<int64_t>> groups;
  std::map<uint64_t, uint32_t> example;
  for (size_t i = 0; i < m.nvtx().size(); ++i) {
    const NvtxRecord& r = m.nvtx()[i];
    // Marks have no duration; ranges left open by a cut-off trace have no end.
    if (r.kind == NvtxKind::kMark || r.end_ns < 0 || !o.scope.InTime(r.start_ns)) continue;
    const uint64_t key = RangeKey(r);
    groups[key].push_back(r.end_ns - r.start_ns);
    example.emplace(key, static_cast<uint32_t>(i));
  }
  struct Row {
    DurationStats s;
    std::string style, label;
  };
  std::vector<Row> rows;
  int64_t grand = 0;
  for (auto& [key, d] : groups) {
    const NvtxRecord& r = m.nvtx()[example[key]];
    rows.push_back({Summarize(&d), Style(r.kind), RangeLabel(m, r)});
    grand += rows.back().s.total;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : a.label < b.label;
  });
  std::vector<Column> cols = StatColumns();
  cols.push_back({"style", "Style", false});
  cols.push_back({"range", "Range", false});
  Table t(cols);
  for (const Row& r : rows) {
    std::vector<Cell> c = StatCells(r.s, grand);
    c.push_back(r.style);
    c.push_back(r.label);
    t.AddRow(std::move(c));
  }
  return t;
}

// Projection: every GPU op in scope is credited to the innermost push/pop
// range around its launching call and to all enclosing ranges. Ops arrive in
// start order, so each range instance's busy time (the union of its ops) is
// accumulated incrementally without storing op lists.
StatusOr<Table> NvtxGpuProjSum(const TraceModel& m, const RecipeOptions& o) {
  struct Instance {
    int64_t first = 0, last = 0, busy = 0, cur_end = INT64_MIN, ops = 0;
  };
  std::vector<Instance> inst(m.nvtx().size());
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.api == kNone || !o.scope.IncludesOp(m, op)) continue;
    for (uint32_t r = m.api_range()[op.api]; r != kNone; r = m.nvtx_parent()[r]) {
      Instance& x = inst[r];
      if (x.ops == 0) {
        x.first = op.start_ns;
        x.last = op.end_ns;
        x.busy = op.end_ns - op.start_ns;
        x.cur_end = op.end_ns;
      } else {
        x.last = std::max(x.last, op.end_ns);
        if (op.start_ns >= x.cur_end) {
          x.busy += op.end_ns - op.start_ns;
          x.cur_end = op.end_ns;
        } else if (op.end_ns > x.cur_end) {
          x.busy += op.end_ns - x.cur_end;
          x.cur_end = op.end_ns;
        }
      }
      ++x.ops;
    }
  }
  struct Group {
    std::vector<int64_t> proj;
    int64_t range_total = 0, busy = 0, ops = 0, depth_sum = 0;
    uint32_t example = 0;
  };
  std::map<uint64_t, Group> groups;
  for (size_t i = 0; i < inst.size(); ++i) {
    if (inst[i].ops == 0) continue;
    const NvtxRecord& r = m.nvtx()[i];
    Group& g = groups[RangeKey(r)];
    g.example = static_cast<uint32_t>(i);
    g.proj.push_back(inst[i].last - inst[i].first);
    g.range_total += m.RangeEnd(static_cast<uint32_t>(i)) - r.start_ns;
    g.busy += inst[i].busy;
    g.ops += inst[i].ops;
    g.depth_sum += r.depth;
  }
  struct Row {
    DurationStats s;
    Group* g;
    std::string label;
  };
  std::vector<Row> rows;
  for (auto& [key, g] : groups) {
    const size_t n = g.proj.size();
    rows.push_back({Summarize(&g.proj), &g, RangeLabel(m, m.nvtx()[g.example])});
    (void)n;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : a.label < b.label;
  });
  Table t({{"total_proj_ns", "Total Proj Time (ns)", true},
           {"total_busy_ns", "Total GPU Busy (ns)", true},
           {"busy_pct", "Busy (%)", true},
           {"total_range_ns", "Total Range Time (ns)", true},
           {"instances", "Instances", true},
           {"proj_avg_ns", "Proj Avg (ns)", true},
           {"proj_med_ns", "Proj Med (ns)", true},
           {"proj_min_ns", "Proj Min (ns)", true},
           {"proj_max_ns", "Proj Max (ns)", true},
           {"proj_stddev_ns", "Proj StdDev (ns)", true},
           {"total_gpu_ops", "Total GPU Ops", true},
           {"avg_gpu_ops", "Avg GPU Ops", true},
           {"avg_range_lvl", "Avg Range Lvl", true},
           {"style", "Style", false},
           {"range", "Range", false}});
  for (const Row& r : rows) {
    const Group& g = *r.g;
    const double n = static_cast<double>(r.s.count);
    t.AddRow({Cell(r.s.total), Cell(g.busy),
              Cell(r.s.total > 0 ? 100.0 * g.busy / r.s.total : 0.0, 1), Cell(g.range_total),
              Cell(r.s.count), Cell(r.s.mean, 1), Cell(r.s.median, 1), Cell(r.s.min), Cell(r.s.max),
              Cell(r.s.stddev, 1), Cell(g.ops), Cell(g.ops / n, 1), Cell(g.depth_sum / n, 1),
              Style(m.nvtx()[g.example].kind), r.label});
  }
  return t;
}

StatusOr<Table> NvtxPace(const TraceModel& m, const RecipeOptions& o) {
  std::vector<uint32_t> picked;
  std::string name = o.name;
  if (name.empty()) {
    // Default: the detected steps' ranges; else the most frequent range name.
    ASSIGN_OR_RETURN(StepSet steps, DetectSteps(m, o.steps));
    if (steps.method == "nvtx") {
      for (const Step& s : steps.steps) picked.push_back(s.nvtx);
    } else {
      std::map<StringId, int64_t> count;
      for (const NvtxRecord& r : m.nvtx()) {
        if (r.kind != NvtxKind::kMark) ++count[r.name];
      }
      StringId best = 0;
      int64_t most = 0;
      for (const auto& [n, c] : count) {
        if (c > most) {
          most = c;
          best = n;
        }
      }
      if (most > 0) name = m.String(best);
    }
  }
  if (picked.empty() && !name.empty()) {
    // Each name id compared once: a long name is never compared per range.
    std::vector<int8_t> match(m.strings().size(), -1);
    for (size_t i = 0; i < m.nvtx().size(); ++i) {
      const NvtxRecord& r = m.nvtx()[i];
      if (r.kind == NvtxKind::kMark) continue;
      int8_t& is = match[r.name < match.size() ? r.name : 0];
      if (is < 0) is = m.String(r.name) == name;
      if (is) picked.push_back(static_cast<uint32_t>(i));
    }
  }
  std::sort(picked.begin(), picked.end(),
            [&](uint32_t a, uint32_t b) { return m.nvtx()[a].start_ns < m.nvtx()[b].start_ns; });
  Table t({{"instance", "Instance", true},
           {"start_ns", "Start (ns)", true},
           {"end_ns", "End (ns)", true},
           {"duration_ns", "Duration (ns)", true},
           {"gap_ns", "Gap (ns)", true},
           {"period_ns", "Period (ns)", true},
           {"range", "Range", false, kNameTextMaxWidth}});
  // One label per (domain, name, open): rows share it, never copy it.
  std::map<std::pair<uint64_t, bool>, SharedText> labels;
  int64_t n = 0, prev_start = 0, prev_end = 0;
  for (uint32_t i : picked) {
    const NvtxRecord& r = m.nvtx()[i];
    if (!o.scope.InTime(r.start_ns)) continue;
    const int64_t end = m.RangeEnd(i);
    SharedText& label = labels[{RangeKey(r), m.IsOpen(i)}];
    if (!label) {
      label =
          std::make_shared<const std::string>(RangeLabel(m, r) + (m.IsOpen(i) ? " (open)" : ""));
    }
    t.AddRow({Cell(n), Cell(r.start_ns - m.origin_ns()), Cell(end - m.origin_ns()),
              Cell(end - r.start_ns), n ? Cell(r.start_ns - prev_end) : Cell(""),
              n ? Cell(r.start_ns - prev_start) : Cell(""), label});
    prev_start = r.start_ns;
    prev_end = end;
    ++n;
  }
  return t;
}

}  // namespace stepscope
