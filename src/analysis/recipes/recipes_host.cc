// The host recipes: osrt_sum, python_hotspots, thread_states (docs/recipes.md,
// docs/host.md). They read the host model; a trace without it gives empty
// tables (python_hotspots says where its numbers come from).
#include <algorithm>
#include <map>

#include "analysis/model/host.h"
#include "analysis/recipes/recipes.h"

namespace stepscope {
namespace {

std::vector<Interval> Windows(const RecipeOptions& o) {
  return o.scope.all_time() ? std::vector<Interval>{} : o.scope.windows();
}

}  // namespace

// OS-runtime waits per function, nsys osrt_sum style, with the state each
// stands for (OsrtState).
StatusOr<Table> OsrtSum(const TraceModel& m, const RecipeOptions& o) {
  std::map<StringId, std::vector<int64_t>> by_name;
  for (const OsrtRecord& r : m.osrt()) {
    if (o.scope.InTime(r.start_ns)) by_name[r.name].push_back(r.end_ns - r.start_ns);
  }
  struct Row {
    DurationStats s;
    StringId name;
  };
  std::vector<Row> rows;
  int64_t grand = 0;
  for (auto& [name, d] : by_name) {
    rows.push_back({Summarize(&d), name});
    grand += rows.back().s.total;
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : m.String(a.name) < m.String(b.name);
  });
  std::vector<Column> cols = StatColumns("Num Calls");
  cols.push_back({"name", "Name", false});
  cols.push_back({"state", "State", false});
  Table t(cols);
  for (const Row& r : rows) {
    std::vector<Cell> cells = StatCells(r.s, grand);
    cells.emplace_back(m.String(r.name));
    cells.emplace_back(ThreadStateName(OsrtState(m.String(r.name))));
    t.AddRow(std::move(cells));
  }
  return t;
}

// Python lines by self time, from samples (every thread) or, without samples,
// from python_function spans.
StatusOr<Table> PythonHotspotsRecipe(const TraceModel& m, const RecipeOptions& o) {
  PythonHotspots h = ComputePythonHotspots(m, 0, Windows(o));
  Table t({{"self_pct", "Self (%)", true},
           {"self_ns", "Self Time (ns)", true},
           {"total_ns", "Total Time (ns)", true},
           {"samples", "Samples", true},
           {"running_samples", "Running Samples", true},
           {"location", "Python Line", false},
           {"source", "Source", false}});
  if (h.source.empty()) {
    t.AddRow({Cell(""), Cell(""), Cell(""), Cell(""), Cell(""),
              "no Python stacks in this trace (no host samples, no python_function spans)",
              "none"});
  }
  for (const PythonLine& l : h.lines) {
    const bool sampled = h.source == "samples";
    t.AddRow({Cell(h.total_ns > 0 ? 100.0 * l.self_ns / h.total_ns : 0.0, 1), Cell(l.self_ns),
              Cell(l.total_ns), sampled ? Cell(l.self_samples) : Cell(""),
              sampled ? Cell(l.running_samples) : Cell(""), l.label, h.source});
  }
  return t;
}

// Per thread: time in each state (docs/host.md says where each comes from).
StatusOr<Table> ThreadStates(const TraceModel& m, const RecipeOptions& o) {
  const std::vector<Interval> windows = Windows(o);
  Table t({{"tid", "TID", true},
           {"thread", "Thread", false},
           {"source", "Source", false},
           {"state", "State", false},
           {"time_ns", "Time (ns)", true},
           {"share_pct", "Share (%)", true},
           {"top_wait", "Top Wait", false}});
  for (uint32_t tid : HostThreads(m)) {
    HostSource src;
    const std::vector<HostSegment> segs = ThreadSegments(m, tid, &src);
    int64_t ns[kThreadStateMax + 1] = {};
    std::map<StringId, int64_t> waits[kThreadStateMax + 1];
    int64_t total = 0;
    for (const HostSegment& s : segs) {
      const int64_t d = InWindows(s.start_ns, s.end_ns, windows);
      if (d <= 0) continue;
      ns[static_cast<int>(s.state)] += d;
      if (s.wait != kNoString) waits[static_cast<int>(s.state)][s.wait] += d;
      total += d;
    }
    if (total == 0) continue;
    std::vector<int> order;
    for (int k = 0; k <= kThreadStateMax; ++k) {
      if (ns[k] > 0) order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ns[a] > ns[b]; });
    for (int k : order) {
      std::string top;
      int64_t best = 0;
      for (const auto& [w, d] : waits[k]) {
        if (d > best) best = d, top = m.String(w);
      }
      t.AddRow({Cell(static_cast<int64_t>(tid)), m.ThreadName(tid), HostSourceName(src),
                // Scheduling intervals off the CPU with no reason recorded.
                src == HostSource::kSched && k == 0 ? "off_cpu"
                                                    : ThreadStateName(static_cast<ThreadState>(k)),
                Cell(ns[k]), Cell(100.0 * ns[k] / total, 1), top});
    }
  }
  return t;
}

}  // namespace stepscope
