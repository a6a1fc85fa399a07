#include "report/interim_analysis.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace stepscope::interim {

StatusOr<std::vector<StepRow>> DetectSteps(const TraceReader& reader, std::string* source) {
  static const std::regex kStep(
      R"(^\s*(?:ProfilerStep#|step[ _#:-]?|iteration[ _#:-]?|iter[ _#:-]?)(\d+)\s*$)",
      std::regex::icase);
  std::vector<StepRow> steps;
  ASSIGN_OR_RETURN(Statement st,
                   reader.Query("SELECT start_ns, end_ns, name_id FROM nvtx WHERE kind != 3 AND "
                                "end_ns > start_ns ORDER BY start_ns, end_ns DESC"));
  std::smatch m;
  while (st.Step()) {
    const std::string& name = reader.String(static_cast<StringId>(st.Int(2)));
    if (name.size() > 64 || !std::regex_match(name, m, kStep)) continue;
    int64_t start = st.Int(0), end = st.Int(1);
    if (!steps.empty() && start < steps.back().end_ns)
      continue;  // nested in (or crossing) the previous step
    StepRow r;
    r.number = std::stoll(m[1].str().substr(0, 15));
    r.name = name;
    r.start_ns = start;
    r.end_ns = end;
    steps.push_back(std::move(r));
  }
  RETURN_IF_ERROR(st.status());
  *source = steps.empty() ? "no NVTX range named like \"step N\" or \"ProfilerStep#N\""
                          : "NVTX ranges named like \"step N\" / \"ProfilerStep#N\"";
  return steps;
}

namespace {

enum Category { kCompute = 0, kCommunication = 1, kMemcpy = 2, kCategories = 3 };

struct Segment {
  int64_t start, end;
  Category category;
};

bool IsCommunication(const std::string& name) {
  std::string lower(name.size(), ' ');
  std::transform(name.begin(), name.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower.find("nccl") != std::string::npos;
}

// Unions the intervals of each category, then sweeps them into segments
// classified by the highest-priority active category.
StatusOr<std::vector<Segment>> ClassifiedSegments(const TraceReader& reader) {
  std::vector<std::pair<int64_t, int64_t>> unions[kCategories];
  auto add = [&](Category c, int64_t s, int64_t e) {
    auto& u = unions[c];
    if (!u.empty() && s <= u.back().second) {
      u.back().second = std::max(u.back().second, e);
    } else {
      u.push_back({s, e});
    }
  };
  // Communication-ness per kernel name, computed once per name.
  std::vector<int8_t> comm(reader.strings().size(), -1);
  ASSIGN_OR_RETURN(Statement k,
                   reader.Query("SELECT start_ns, end_ns, name_id FROM kernels ORDER BY start_ns"));
  while (k.Step()) {
    size_t id = static_cast<size_t>(k.Int(2));
    if (id >= comm.size()) comm.resize(id + 1, -1);
    if (comm[id] < 0) comm[id] = IsCommunication(reader.String(static_cast<StringId>(id))) ? 1 : 0;
    add(comm[id] ? kCommunication : kCompute, k.Int(0), k.Int(1));
  }
  RETURN_IF_ERROR(k.status());
  ASSIGN_OR_RETURN(
      Statement m,
      reader.Query("SELECT start_ns, end_ns FROM memcpy UNION ALL SELECT start_ns, end_ns "
                   "FROM memset ORDER BY 1"));
  while (m.Step()) add(kMemcpy, m.Int(0), m.Int(1));
  RETURN_IF_ERROR(m.status());

  // Sweep: boundaries of every union interval, +1 at a start, -1 at an end.
  struct Edge {
    int64_t t;
    int delta;
    Category c;
  };
  std::vector<Edge> edges;
  for (int c = 0; c < kCategories; ++c) {
    for (auto& [s, e] : unions[c]) {
      edges.push_back({s, +1, static_cast<Category>(c)});
      edges.push_back({e, -1, static_cast<Category>(c)});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::vector<Segment> segments;
  int active[kCategories] = {0, 0, 0};
  for (size_t i = 0; i < edges.size(); ++i) {
    active[edges[i].c] += edges[i].delta;
    if (i + 1 == edges.size() || edges[i + 1].t == edges[i].t) continue;
    int64_t s = edges[i].t, e = edges[i + 1].t;
    for (int c = 0; c < kCategories; ++c) {
      if (active[c] > 0) {
        if (!segments.empty() && segments.back().end == s && segments.back().category == c) {
          segments.back().end = e;
        } else {
          segments.push_back({s, e, static_cast<Category>(c)});
        }
        break;
      }
    }
  }
  return segments;
}

Breakdown Window(const std::vector<Segment>& segments, int64_t start, int64_t end) {
  Breakdown b;
  auto it = std::lower_bound(segments.begin(), segments.end(), start,
                             [](const Segment& s, int64_t t) { return s.end <= t; });
  for (; it != segments.end() && it->start < end; ++it) {
    int64_t d = std::min(end, it->end) - std::max(start, it->start);
    if (d <= 0) continue;
    (it->category == kCompute         ? b.compute_ns
     : it->category == kCommunication ? b.communication_ns
                                      : b.memcpy_ns) += d;
  }
  b.idle_ns = std::max<int64_t>(0, (end - start) - b.compute_ns - b.communication_ns - b.memcpy_ns);
  return b;
}

}  // namespace

StatusOr<Breakdown> FillBreakdowns(const TraceReader& reader, std::vector<StepRow>* steps,
                                   int64_t window_start, int64_t window_end) {
  ASSIGN_OR_RETURN(std::vector<Segment> segments, ClassifiedSegments(reader));
  if (steps->empty()) return Window(segments, window_start, window_end);
  Breakdown total;
  for (StepRow& s : *steps) {
    s.breakdown = Window(segments, s.start_ns, s.end_ns);
    total.compute_ns += s.breakdown.compute_ns;
    total.communication_ns += s.breakdown.communication_ns;
    total.memcpy_ns += s.breakdown.memcpy_ns;
    total.idle_ns += s.breakdown.idle_ns;
  }
  return total;
}

StatusOr<std::vector<KernelRow>> TopKernels(const TraceReader& reader, int limit) {
  int64_t all = 0;
  {
    ASSIGN_OR_RETURN(Statement st, reader.Query("SELECT TOTAL(end_ns - start_ns) FROM kernels"));
    if (st.Step()) all = static_cast<int64_t>(st.Double(0));
  }
  ASSIGN_OR_RETURN(Statement st,
                   reader.Query("SELECT name_id, SUM(end_ns - start_ns) AS t, COUNT(*), "
                                "MIN(end_ns - start_ns), MAX(end_ns - start_ns) FROM kernels "
                                "GROUP BY name_id ORDER BY t DESC, name_id LIMIT " +
                                std::to_string(limit)));
  std::vector<KernelRow> rows;
  while (st.Step()) {
    KernelRow r;
    r.name = reader.String(static_cast<StringId>(st.Int(0)));
    r.total_ns = st.Int(1);
    r.count = st.Int(2);
    r.min_ns = st.Int(3);
    r.max_ns = st.Int(4);
    r.percent = all > 0 ? 100.0 * static_cast<double>(r.total_ns) / static_cast<double>(all) : 0;
    rows.push_back(std::move(r));
  }
  RETURN_IF_ERROR(st.status());
  return rows;
}

}  // namespace stepscope::interim
