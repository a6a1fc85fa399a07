#include "roofline/selection.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>

#include <tuple>
#include "common/bounded_regex.h"

#include "common/stats.h"
#include "common/step_names.h"
#include "common/strings.h"
#include "store/roofline_rows.h"

namespace stepscope {

StatusOr<std::vector<StepRange>> FindSteps(const TraceReader& trace) {
  // The one step definition (common/step_names.h), as `steps` and the rules.
  ASSIGN_OR_RETURN(std::vector<NvtxRangeRow> ranges, LoadNvtxRanges(trace.db()));
  StepRangeFinder finder;
  for (const NvtxRangeRow& r : ranges) {
    NvtxStepRange x;
    x.start_ns = r.start_ns;
    x.end_ns = r.end_ns;
    x.open = x.end_ns < x.start_ns;
    if (x.open) x.end_ns = INT64_MAX;
    x.tid = static_cast<uint32_t>(r.tid);
    finder.Add(trace.String(static_cast<StringId>(r.name_id)),
               trace.String(static_cast<StringId>(r.domain_id)), x);
  }
  std::vector<StepRange> steps;
  for (const NvtxStepRange& x : finder.Finish(nullptr, nullptr)) {
    if (!x.open) steps.push_back({x.number, x.start_ns, x.end_ns});  // a cut-off step: no
  }
  return steps;
}

namespace {

using Key = std::tuple<int64_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t>;

struct Group {
  int64_t mangled_id = 0;
  int64_t ns = 0;
  int64_t launches = 0;
};

Status Accumulate(sqlite3* db, LaunchFilter filter, const StepRange& step,
                  std::map<Key, Group>* groups) {
  ASSIGN_OR_RETURN(RowCursor<KernelLaunchRow> launches,
                   KernelLaunches(db, filter, step.start_ns, step.end_ns));
  while (launches.Next()) {
    const KernelLaunchRow& r = launches.row();
    Key k{r.name_id,
          static_cast<int32_t>(r.grid[0]),
          static_cast<int32_t>(r.grid[1]),
          static_cast<int32_t>(r.grid[2]),
          static_cast<int32_t>(r.block[0]),
          static_cast<int32_t>(r.block[1]),
          static_cast<int32_t>(r.block[2])};
    Group& g = (*groups)[k];
    g.mangled_id = r.mangled_id;
    g.ns += r.duration_ns;
    g.launches += 1;
  }
  return launches.status();
}

}  // namespace

StatusOr<Selection> SelectKernels(const TraceReader& trace, const SelectionOptions& opt) {
  Selection sel;
  std::optional<std::regex> re;
  if (!opt.kernel_regex.empty()) {
    try {
      re.emplace(opt.kernel_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidInput("--kernel '" + opt.kernel_regex +
                          "': invalid regular expression: " + e.what());
    }
  }
  ASSIGN_OR_RETURN(std::vector<StepRange> steps, FindSteps(trace));
  sel.steps_in_trace = static_cast<int64_t>(steps.size());
  std::map<Key, Group> groups;
  if (steps.empty()) {
    if (opt.step >= 0) {
      return InvalidInput(trace.path() + ": no NVTX 'step N' ranges, so --step " +
                          std::to_string(opt.step) +
                          " cannot be found; drop --step to rank kernels over the whole trace");
    }
    sel.method = "whole trace";
    RETURN_IF_ERROR(Accumulate(trace.db(), LaunchFilter::kAll, StepRange{}, &groups));
  } else {
    const StepRange* chosen = nullptr;
    if (opt.step >= 0) {
      for (const StepRange& s : steps) {
        if (s.number == opt.step) chosen = &s;  // the last one if a number repeats
      }
      if (!chosen) {
        return InvalidInput(trace.path() + ": no NVTX range 'step " + std::to_string(opt.step) +
                            "' (the trace has steps " + std::to_string(steps.front().number) +
                            ".." + std::to_string(steps.back().number) + ")");
      }
    } else {
      // The median step: away from warm-up at the start and teardown at the end.
      std::vector<StepRange> by_number = steps;
      const int64_t median = LowerMedian(&by_number, [](const StepRange& a, const StepRange& b) {
                               return a.number < b.number;
                             }).number;
      for (const StepRange& s : steps) {
        if (s.number == median) chosen = &s;
      }
    }
    sel.has_step = true;
    sel.step = *chosen;
    ASSIGN_OR_RETURN(bool have_api, HasApiRows(trace.db()));
    // By the launching call when the trace has calls, else by the kernel's start.
    sel.method = have_api ? "launch api in step" : "gpu start in step";
    RETURN_IF_ERROR(Accumulate(trace.db(),
                               have_api ? LaunchFilter::kCalledIn : LaunchFilter::kStartedIn,
                               sel.step, &groups));
  }
  std::vector<KernelTarget> all;
  for (const auto& [k, g] : groups) {
    sel.step_kernel_ns += g.ns;
    KernelTarget t;
    t.name = trace.String(static_cast<StringId>(std::get<0>(k)));
    t.mangled = trace.String(static_cast<StringId>(g.mangled_id));
    t.grid[0] = std::get<1>(k);
    t.grid[1] = std::get<2>(k);
    t.grid[2] = std::get<3>(k);
    t.block[0] = std::get<4>(k);
    t.block[1] = std::get<5>(k);
    t.block[2] = std::get<6>(k);
    t.step_gpu_ns = g.ns;
    t.step_launches = g.launches;
    if (re && RegexSubjectTooLong(t.name)) {
      ++sel.names_not_searched;  // never matches: common/bounded_regex.h
      continue;
    }
    if (re && !BoundedRegexSearch(t.name, *re)) continue;
    all.push_back(std::move(t));
  }
  std::sort(all.begin(), all.end(), [](const KernelTarget& a, const KernelTarget& b) {
    if (a.step_gpu_ns != b.step_gpu_ns) return a.step_gpu_ns > b.step_gpu_ns;
    if (a.name != b.name) return a.name < b.name;
    return std::lexicographical_compare(a.grid, a.grid + 3, b.grid, b.grid + 3) ||
           (std::equal(a.grid, a.grid + 3, b.grid) &&
            std::lexicographical_compare(a.block, a.block + 3, b.block, b.block + 3));
  });
  if (opt.top > 0 && static_cast<int>(all.size()) > opt.top)
    all.resize(static_cast<size_t>(opt.top));
  for (size_t i = 0; i < all.size(); ++i) all[i].rank = static_cast<int>(i) + 1;
  sel.targets = std::move(all);
  return sel;
}

Table SelectionTable(const Selection& s) {
  Table t({{"rank", "#", true},
           {"gpu_time_us", "GPU time us", true},
           {"share_pct", "% of step", true},
           {"launches", "launches", true},
           {"grid", "grid", false},
           {"block", "block", false},
           {"name", "kernel", false}});
  for (const KernelTarget& k : s.targets) {
    double share = s.step_kernel_ns > 0 ? 100.0 * static_cast<double>(k.step_gpu_ns) /
                                              static_cast<double>(s.step_kernel_ns)
                                        : 0;
    t.AddRow({k.rank, Cell(static_cast<double>(k.step_gpu_ns) / 1e3, 2), Cell(share, 1),
              k.step_launches, Dim3Text(k.grid), Dim3Text(k.block), k.name});
  }
  return t;
}

}  // namespace stepscope
