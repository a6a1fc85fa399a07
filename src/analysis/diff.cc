#include "analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/model/timeline.h"

namespace stepscope {
namespace {

struct Side {
  std::string basis;
  double step_ns = 0;
  double steps = 1;      // divisor for per-step numbers
  int64_t complete = 0;  // steady steps
  double busy_pct = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> kernels;  // name -> (total ns, count)
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;   // name -> (total ns, count)
  int64_t kernel_total = 0;
};

StatusOr<Side> Reduce(const TraceModel& m, const DiffOptions& o, bool use_steps) {
  Side s;
  StepSet set;
  if (use_steps) {
    ASSIGN_OR_RETURN(set, DetectSteps(m, o.steps));
  }
  std::vector<char> use_step(set.steps.size(), 0);
  int64_t window_ns = 0, busy_ns = 0;
  const FlatTimeline& tl = m.Timeline(o.steps.device);
  for (size_t k = 0; k < set.steps.size(); ++k) {
    if (!set.steps[k].steady()) continue;
    use_step[k] = 1;
    ++s.complete;
    window_ns += set.steps[k].duration();
    busy_ns += set.steps[k].breakdown.busy;
  }
  const bool by_steps = s.complete > 0;
  if (by_steps) {
    s.basis = "median step";
    s.step_ns = set.stats.median;
    s.steps = static_cast<double>(s.complete);
  } else {
    s.basis = "GPU span";
    s.step_ns = tl.empty() ? static_cast<double>(m.end_ns() - m.origin_ns())
                           : static_cast<double>(tl.last_ns() - tl.first_ns());
    window_ns = static_cast<int64_t>(s.step_ns);
    busy_ns = tl.Busy(tl.first_ns(), tl.last_ns());
  }
  s.busy_pct = window_ns > 0 ? 100.0 * busy_ns / window_ns : 0.0;
  const std::vector<int32_t> op_step = OpSteps(m, set);
  for (size_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& op = m.gpu_ops()[i];
    if (op.kind != GpuOpKind::kKernel) continue;
    if (o.steps.device >= 0 && op.device != o.steps.device) continue;
    if (by_steps && (op_step[i] < 0 || !use_step[op_step[i]])) continue;
    auto& k = s.kernels[m.String(m.kernels()[op.index].name)];
    k.first += op.end_ns - op.start_ns;
    ++k.second;
    s.kernel_total += op.end_ns - op.start_ns;
  }
  std::set<uint32_t> step_ranges;
  for (const Step& st : set.steps) step_ranges.insert(st.nvtx);
  for (size_t i = 0; i < m.nvtx().size(); ++i) {
    const NvtxRecord& r = m.nvtx()[i];
    if (r.kind == NvtxKind::kMark || r.end_ns < 0 || step_ranges.count(static_cast<uint32_t>(i)))
      continue;
    if (by_steps) {
      const int k = set.AtHostTime(r.start_ns);
      if (k < 0 || !use_step[k]) continue;
    }
    auto& x = s.ranges[m.String(r.name)];
    x.first += r.end_ns - r.start_ns;
    ++x.second;
  }
  return s;
}

std::string Status(int64_t b, int64_t a, double same_pct) {
  if (b == 0 && a > 0) return "added";
  if (a == 0 && b > 0) return "removed";
  if (b == 0) return "same";
  const double change = 100.0 * (a - b) / b;
  if (std::fabs(change) < same_pct) return "same";
  return change < 0 ? "faster" : "slower";
}

// One change table: per name, per-step time before/after (and counts).
Table ChangeTable(const std::map<std::string, std::pair<int64_t, int64_t>>& before, double bsteps,
                  const std::map<std::string, std::pair<int64_t, int64_t>>& after, double asteps,
                  const DiffOptions& o, bool averages, const std::string& label) {
  struct Row {
    std::string name;
    double b, a, bc, ac;
  };
  std::vector<Row> rows;
  std::set<std::string> names;
  for (const auto& [n, v] : before) names.insert(n);
  for (const auto& [n, v] : after) names.insert(n);
  for (const std::string& n : names) {
    auto bi = before.find(n);
    auto ai = after.find(n);
    const double bt = bi == before.end() ? 0 : bi->second.first,
                 bc = bi == before.end() ? 0 : bi->second.second;
    const double at = ai == after.end() ? 0 : ai->second.first,
                 ac = ai == after.end() ? 0 : ai->second.second;
    if (averages) {
      rows.push_back({n, bc > 0 ? bt / bc : 0, ac > 0 ? at / ac : 0, bc / bsteps, ac / asteps});
    } else {
      rows.push_back({n, bt / bsteps, at / asteps, bc / bsteps, ac / asteps});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    return std::fabs(x.a - x.b) > std::fabs(y.a - y.b);
  });
  if (o.limit > 0 && rows.size() > static_cast<size_t>(o.limit)) rows.resize(o.limit);
  const std::string what = averages ? "avg" : "per_step";
  Table t({{"status", "Status", false},
           {"before_" + what + "_ns", averages ? "Before Avg (ns)" : "Before/Step (ns)", true},
           {"after_" + what + "_ns", averages ? "After Avg (ns)" : "After/Step (ns)", true},
           {"delta_ns", "Delta (ns)", true},
           {"change_pct", "Change (%)", true},
           {"before_count_per_step", "Before #/Step", true},
           {"after_count_per_step", "After #/Step", true},
           {label, label == "name" ? "Name" : "Range", false}});
  for (const Row& r : rows) {
    const int64_t b = std::llround(r.b), a = std::llround(r.a);
    t.AddRow({Status(b, a, o.same_pct), Cell(b), Cell(a), Cell(a - b),
              b > 0 ? Cell(100.0 * (a - b) / b, 1) : Cell(""), Cell(r.bc, 2), Cell(r.ac, 2),
              r.name});
  }
  return t;
}

}  // namespace

StatusOr<TraceDiff> DiffTraces(const TraceModel& before, const TraceModel& after,
                               const DiffOptions& o) {
  ASSIGN_OR_RETURN(Side b, Reduce(before, o, true));
  ASSIGN_OR_RETURN(Side a, Reduce(after, o, true));
  TraceDiff d;
  // Compare like with like: if one side has no steps, both use the GPU span.
  if (b.basis != a.basis) {
    ASSIGN_OR_RETURN(b, Reduce(before, o, false));
    ASSIGN_OR_RETURN(a, Reduce(after, o, false));
  }
  d.basis = b.basis;
  d.before_ns = b.step_ns;
  d.after_ns = a.step_ns;
  d.speedup = a.step_ns > 0 ? b.step_ns / a.step_ns : 0.0;
  // One row per quantity, each in its own unit (the `unit` column); the last
  // two columns hold one unit each: the difference in the row's unit and the
  // relative change in %. Times in DiffOptions::unit (ns in CSV/JSON).
  d.summary = Table({{"metric", "Metric", false},
                     {"unit", "Unit", false},
                     {"before", "Before", true},
                     {"after", "After", true},
                     {"delta", "Delta", true},
                     {"change_pct", "Change (%)", true}});
  const double per_unit = o.unit == TimeUnit::kS    ? 1e9
                          : o.unit == TimeUnit::kMs ? 1e6
                          : o.unit == TimeUnit::kUs ? 1e3
                                                    : 1.0;
  const int digits = o.unit == TimeUnit::kNs ? 1 : 3;
  auto row = [&](const std::string& metric, const std::string& unit, double x, double y,
                 int places) {
    d.summary.AddRow({metric, unit, Cell(x, places), Cell(y, places), Cell(y - x, places),
                      x != 0 ? Cell(100.0 * (y / x - 1.0), 1) : Cell("")});
  };
  const std::string tu = TimeUnitName(o.unit);
  row("step time (" + d.basis + ")", tu, b.step_ns / per_unit, a.step_ns / per_unit, digits);
  row("steady steps", "steps", static_cast<double>(b.complete), static_cast<double>(a.complete), 0);
  row("GPU busy", "%", b.busy_pct, a.busy_pct, 1);
  row("kernel time per step", tu, b.kernel_total / b.steps / per_unit,
      a.kernel_total / a.steps / per_unit, digits);
  d.kernels = ChangeTable(b.kernels, b.steps, a.kernels, a.steps, o, false, "name");
  d.nvtx = ChangeTable(b.ranges, b.steps, a.ranges, a.steps, o, true, "range");
  // The new top-5.
  auto ranked = [](const Side& s) {
    std::vector<std::pair<int64_t, std::string>> v;
    for (const auto& [n, x] : s.kernels) v.push_back({-x.first, n});
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto rb = ranked(b), ra = ranked(a);
  d.top5 = Table({{"rank", "Rank", true},
                  {"rank_before", "Rank Before", false},
                  {"after_per_step_ns", "After/Step (ns)", true},
                  {"before_per_step_ns", "Before/Step (ns)", true},
                  {"share_pct", "Of Kernel Time (%)", true},
                  {"name", "Name", false}});
  for (size_t i = 0; i < ra.size() && i < 5; ++i) {
    std::string before_rank = "new";
    int64_t before_ns = 0;
    for (size_t j = 0; j < rb.size(); ++j) {
      if (rb[j].second == ra[i].second) {
        before_rank = std::to_string(j + 1);
        before_ns = static_cast<int64_t>(std::llround(-rb[j].first / b.steps));
      }
    }
    d.top5.AddRow(
        {Cell(static_cast<int64_t>(i + 1)), before_rank,
         Cell(static_cast<int64_t>(std::llround(-ra[i].first / a.steps))), Cell(before_ns),
         Cell(a.kernel_total > 0 ? 100.0 * -ra[i].first / a.kernel_total : 0.0, 1), ra[i].second});
  }
  return d;
}

}  // namespace stepscope
