// JSON form of RankSummary. Layout (docs/ranks.md has the full key list):
// scalars first, then "steps" (one object per line), "kernels" and "sections"
// (one object per name, per-step arrays parallel to "steps"), and
// "collectives" grouped by (device, stream, name) with parallel arrays, the
// i-th entry of a group being that group's collective number i (its seq).
// Grouping keeps a summary with thousands of collectives small and fast to read.
#include <algorithm>
#include <map>
#include <tuple>

#include "common/json_value.h"
#include "common/json_writer.h"
#include "common/table.h"
#include "ranks/rank_summary.h"

namespace stepscope {
namespace {

void AppendKey(std::string* out, const char* key) {
  out->append(JsonQuote(key));
  out->append(": ");
}

void AppendIntArray(std::string* out, const std::vector<int64_t>& v) {
  out->push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    out->append(std::to_string(v[i]));
  }
  out->push_back(']');
}

void AppendNamed(std::string* out, const std::vector<NamedTimes>& list, bool kernels) {
  out->append("[");
  for (size_t i = 0; i < list.size(); ++i) {
    const NamedTimes& n = list[i];
    out->append(i ? ",\n  {" : "\n  {");
    AppendKey(out, "name");
    out->append(JsonQuote(n.name));
    if (kernels) {
      out->append(", ");
      AppendKey(out, "nccl");
      out->append(n.nccl ? "true" : "false");
      out->append(", ");
      AppendKey(out, "threads");
      out->append(std::to_string(n.threads));
      if (!n.step_threads.empty()) {  // unknown: left out
        out->append(", ");
        AppendKey(out, "step_threads");
        AppendIntArray(out, n.step_threads);
      }
    }
    out->append(", ");
    AppendKey(out, "total_ns");
    AppendIntArray(out, n.total_ns);
    out->append(", ");
    AppendKey(out, "count");
    AppendIntArray(out, n.count);
    out->append(", ");
    AppendKey(out, "median_ns");
    AppendIntArray(out, n.median_ns);
    out->append("}");
  }
  out->append(list.empty() ? "]" : "\n ]");
}

}  // namespace

std::string SummaryToJson(const RankSummary& s) {
  std::string o = "{";
  auto str = [&](const char* k, const std::string& v) {
    o.append("\n ");
    AppendKey(&o, k);
    o.append(JsonQuote(v));
    o.append(",");
  };
  auto num = [&](const char* k, int64_t v) {
    o.append("\n ");
    AppendKey(&o, k);
    o.append(std::to_string(v));
    o.append(",");
  };
  str("format", kRankSummaryFormat);
  num("version", kRankSummaryVersion);
  str("trace", s.trace);
  num("rank", s.rank);
  num("local_rank", s.local_rank);
  num("world_size", s.world_size);
  str("host", s.host);
  num("pid", s.pid);
  str("clock", s.clock);
  num("clock_offset_ns", s.clock_offset_ns);
  str("step_source", s.step_source);
  num("main_tid", s.main_tid);
  o.append("\n ");
  AppendKey(&o, "critical_stream");
  o.append("{\"device\": " + std::to_string(s.critical_device) +
           ", \"stream\": " + std::to_string(s.critical_stream) + "},");

  o.append("\n ");
  AppendKey(&o, "steps");
  o.append("[");
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepSummary& st = s.steps[i];
    o.append(i ? ",\n  {" : "\n  {");
    o.append("\"step\": " + std::to_string(st.step));
    o.append(", \"start_ns\": " + std::to_string(st.start_ns));
    o.append(", \"end_ns\": " + std::to_string(st.end_ns));
    o.append(", \"gpu_start_ns\": " + std::to_string(st.gpu_start_ns));
    o.append(", \"gpu_end_ns\": " + std::to_string(st.gpu_end_ns));
    o.append(", \"compute_ns\": " + std::to_string(st.compute_ns));
    o.append(", \"comm_ns\": " + std::to_string(st.comm_ns));
    o.append(", \"overlap_ns\": " + std::to_string(st.overlap_ns));
    o.append(", \"launch_late_ns\": " + std::to_string(st.launch_late_ns));
    o.append(", \"kernels\": " + std::to_string(st.kernels));
    o.append(", \"host_cpu_ns\": " + std::to_string(st.host_cpu_ns));
    o.append(", \"host_ready_ns\": " + std::to_string(st.host_ready_ns));
    o.append("}");
  }
  o.append(s.steps.empty() ? "]," : "\n ],");

  o.append("\n ");
  AppendKey(&o, "kernels");
  AppendNamed(&o, s.kernels, true);
  o.append(",\n ");
  AppendKey(&o, "sections");
  AppendNamed(&o, s.sections, false);
  o.append(",\n ");
  AppendKey(&o, "python");
  AppendNamed(&o, s.python, false);
  o.append(",");

  // Collectives grouped by (device, stream, name), groups in order of first use.
  struct Group {
    const CollectiveSummary* first;
    std::vector<int64_t> step, start, end, free;
  };
  std::vector<Group> groups;
  std::map<std::tuple<uint32_t, uint32_t, std::string>, size_t> index;
  for (const CollectiveSummary& c : s.collectives) {
    auto key = std::make_tuple(c.device, c.stream, c.name);
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) groups.push_back({&c, {}, {}, {}, {}});
    Group& g = groups[it->second];
    g.step.push_back(c.step);
    g.start.push_back(c.start_ns);
    g.end.push_back(c.end_ns);
    g.free.push_back(c.free_ns);
  }
  o.append("\n ");
  AppendKey(&o, "collectives");
  o.append("[");
  for (size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    o.append(i ? ",\n  {" : "\n  {");
    o.append("\"name\": " + JsonQuote(g.first->name));
    o.append(", \"device\": " + std::to_string(g.first->device));
    o.append(", \"stream\": " + std::to_string(g.first->stream));
    o.append(", \"stream_index\": " + std::to_string(g.first->stream_index));
    o.append(",\n   \"step\": ");
    AppendIntArray(&o, g.step);
    o.append(",\n   \"start_ns\": ");
    AppendIntArray(&o, g.start);
    o.append(",\n   \"end_ns\": ");
    AppendIntArray(&o, g.end);
    o.append(",\n   \"free_ns\": ");
    AppendIntArray(&o, g.free);
    o.append("}");
  }
  o.append(groups.empty() ? "]" : "\n ]");
  o.append("\n}\n");
  return o;
}

namespace {

// Reading helpers: each failure names the key so the error says where.
class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

  Status Error(const std::string& what) const {
    return InvalidInput(origin_ + ": " + what + "; re-create it with 'stepscope summarize'");
  }

  Status Int(const JsonValue& obj, const char* key, int64_t* out, bool required = true) const {
    const JsonValue* v = obj.Get(key);
    if (!v) {
      if (!required) return OkStatus();
      return Error(std::string("missing key \"") + key + "\"");
    }
    if (v->type() != JsonValue::Type::kInt)
      return Error(std::string("\"") + key + "\" is not an integer");
    *out = v->AsInt();
    return OkStatus();
  }

  Status Str(const JsonValue& obj, const char* key, std::string* out) const {
    const JsonValue* v = obj.Get(key);
    if (!v) return OkStatus();
    if (!v->is_string()) return Error(std::string("\"") + key + "\" is not a string");
    *out = v->AsString();
    return OkStatus();
  }

  // An integer array of exactly `n` elements (n < 0: any length).
  Status IntArray(const JsonValue& obj, const char* key, const std::string& where, int64_t n,
                  std::vector<int64_t>* out) const {
    const JsonValue* v = obj.Get(key);
    if (!v || !v->is_array()) return Error(where + ": \"" + key + "\" is missing or not an array");
    if (n >= 0 && static_cast<int64_t>(v->items().size()) != n) {
      return Error(where + ": \"" + key + "\" has " + std::to_string(v->items().size()) +
                   " entries, expected " + std::to_string(n));
    }
    out->clear();
    out->reserve(v->items().size());
    for (const JsonValue& e : v->items()) {
      if (e.type() != JsonValue::Type::kInt)
        return Error(where + ": \"" + key + "\" holds a non-integer");
      out->push_back(e.AsInt());
    }
    return OkStatus();
  }

  const JsonValue* Array(const JsonValue& obj, const char* key) const {
    const JsonValue* v = obj.Get(key);
    return v && v->is_array() ? v : nullptr;
  }

 private:
  const std::string& origin_;
};

Status ReadNamed(const Reader& r, const JsonValue& root, const char* key, int64_t nsteps,
                 std::vector<NamedTimes>* out, bool required = true) {
  const JsonValue* arr = r.Array(root, key);
  if (!arr && !required) return OkStatus();
  if (!arr) return r.Error(std::string("missing array \"") + key + "\"");
  for (size_t i = 0; i < arr->items().size(); ++i) {
    const JsonValue& e = arr->items()[i];
    std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!e.is_object()) return r.Error(where + " is not an object");
    NamedTimes n;
    RETURN_IF_ERROR(r.Str(e, "name", &n.name));
    if (const JsonValue* nccl = e.Get("nccl")) n.nccl = nccl->AsBool();
    RETURN_IF_ERROR(r.Int(e, "threads", &n.threads, false));
    if (e.Get("step_threads"))
      RETURN_IF_ERROR(r.IntArray(e, "step_threads", where, nsteps, &n.step_threads));
    RETURN_IF_ERROR(r.IntArray(e, "total_ns", where, nsteps, &n.total_ns));
    RETURN_IF_ERROR(r.IntArray(e, "count", where, nsteps, &n.count));
    RETURN_IF_ERROR(r.IntArray(e, "median_ns", where, nsteps, &n.median_ns));
    out->push_back(std::move(n));
  }
  return OkStatus();
}

}  // namespace

StatusOr<RankSummary> SummaryFromJson(std::string_view json, const std::string& origin) {
  Reader r(origin);
  auto parsed = ParseJson(json);
  if (!parsed.ok()) {
    return InvalidInput(origin + ": not a rank summary (" + parsed.status().message() +
                        "); pass traces or files written by 'stepscope summarize'");
  }
  const JsonValue& root = *parsed;
  if (!root.is_object() || !root.Get("format") ||
      root.Get("format")->AsString() != kRankSummaryFormat) {
    return InvalidInput(origin + ": JSON but not a stepscope rank summary (no \"format\": \"" +
                        kRankSummaryFormat +
                        "\"); pass traces or files written by 'stepscope summarize'");
  }
  int64_t version = 0;
  RETURN_IF_ERROR(r.Int(root, "version", &version));
  if (version < kRankSummaryOldestVersion || version > kRankSummaryVersion) {
    return InvalidInput(origin + ": rank summary version " + std::to_string(version) +
                        ", this stepscope reads versions " +
                        std::to_string(kRankSummaryOldestVersion) + "-" +
                        std::to_string(kRankSummaryVersion) +
                        "; re-create it with 'stepscope summarize' of this version");
  }
  RankSummary s;
  RETURN_IF_ERROR(r.Str(root, "trace", &s.trace));
  RETURN_IF_ERROR(r.Int(root, "rank", &s.rank));
  RETURN_IF_ERROR(r.Int(root, "local_rank", &s.local_rank, false));
  RETURN_IF_ERROR(r.Int(root, "world_size", &s.world_size, false));
  RETURN_IF_ERROR(r.Str(root, "host", &s.host));
  RETURN_IF_ERROR(r.Int(root, "pid", &s.pid, false));
  RETURN_IF_ERROR(r.Str(root, "clock", &s.clock));
  RETURN_IF_ERROR(r.Int(root, "clock_offset_ns", &s.clock_offset_ns, false));
  RETURN_IF_ERROR(r.Str(root, "step_source", &s.step_source));
  RETURN_IF_ERROR(r.Int(root, "main_tid", &s.main_tid, false));
  if (const JsonValue* cs = root.Get("critical_stream"); cs && cs->is_object()) {
    int64_t d = 0, st = 0;
    RETURN_IF_ERROR(r.Int(*cs, "device", &d, false));
    RETURN_IF_ERROR(r.Int(*cs, "stream", &st, false));
    s.critical_device = static_cast<uint32_t>(d);
    s.critical_stream = static_cast<uint32_t>(st);
  }

  const JsonValue* steps = r.Array(root, "steps");
  if (!steps) return r.Error("missing array \"steps\"");
  for (const JsonValue& e : steps->items()) {
    if (!e.is_object()) return r.Error("an entry of \"steps\" is not an object");
    StepSummary st;
    RETURN_IF_ERROR(r.Int(e, "step", &st.step));
    RETURN_IF_ERROR(r.Int(e, "start_ns", &st.start_ns));
    RETURN_IF_ERROR(r.Int(e, "end_ns", &st.end_ns));
    RETURN_IF_ERROR(r.Int(e, "gpu_start_ns", &st.gpu_start_ns, false));
    RETURN_IF_ERROR(r.Int(e, "gpu_end_ns", &st.gpu_end_ns, false));
    RETURN_IF_ERROR(r.Int(e, "compute_ns", &st.compute_ns, false));
    RETURN_IF_ERROR(r.Int(e, "comm_ns", &st.comm_ns, false));
    RETURN_IF_ERROR(r.Int(e, "overlap_ns", &st.overlap_ns, false));
    RETURN_IF_ERROR(r.Int(e, "launch_late_ns", &st.launch_late_ns, false));
    RETURN_IF_ERROR(r.Int(e, "kernels", &st.kernels, false));
    RETURN_IF_ERROR(r.Int(e, "host_cpu_ns", &st.host_cpu_ns, false));
    RETURN_IF_ERROR(r.Int(e, "host_ready_ns", &st.host_ready_ns, false));
    if (!s.steps.empty() && st.step <= s.steps.back().step) {
      return r.Error("\"steps\" are not in increasing step order (step " + std::to_string(st.step) +
                     ")");
    }
    s.steps.push_back(st);
  }
  const int64_t n = static_cast<int64_t>(s.steps.size());
  RETURN_IF_ERROR(ReadNamed(r, root, "kernels", n, &s.kernels));
  RETURN_IF_ERROR(ReadNamed(r, root, "sections", n, &s.sections));
  RETURN_IF_ERROR(ReadNamed(r, root, "python", n, &s.python, false));

  const JsonValue* colls = r.Array(root, "collectives");
  if (!colls) return r.Error("missing array \"collectives\"");
  for (size_t g = 0; g < colls->items().size(); ++g) {
    const JsonValue& e = colls->items()[g];
    std::string where = "collectives[" + std::to_string(g) + "]";
    if (!e.is_object()) return r.Error(where + " is not an object");
    CollectiveSummary c;
    int64_t device = 0, stream = 0, stream_index = 0;
    RETURN_IF_ERROR(r.Str(e, "name", &c.name));
    RETURN_IF_ERROR(r.Int(e, "device", &device, false));
    RETURN_IF_ERROR(r.Int(e, "stream", &stream, false));
    RETURN_IF_ERROR(r.Int(e, "stream_index", &stream_index, false));
    c.device = static_cast<uint32_t>(device);
    c.stream = static_cast<uint32_t>(stream);
    c.stream_index = static_cast<int32_t>(stream_index);
    std::vector<int64_t> step, start, end;
    RETURN_IF_ERROR(r.IntArray(e, "step", where, -1, &step));
    RETURN_IF_ERROR(r.IntArray(e, "start_ns", where, static_cast<int64_t>(step.size()), &start));
    RETURN_IF_ERROR(r.IntArray(e, "end_ns", where, static_cast<int64_t>(step.size()), &end));
    std::vector<int64_t> free(step.size(), -1);
    if (version >= 2) {
      RETURN_IF_ERROR(r.IntArray(e, "free_ns", where, static_cast<int64_t>(step.size()), &free));
    }
    for (size_t i = 0; i < step.size(); ++i) {
      c.seq = static_cast<int64_t>(i);
      c.step = step[i];
      c.start_ns = start[i];
      c.end_ns = end[i];
      // Unknown stays -1; a free time beyond the kernel's duration is the duration.
      c.free_ns = free[i] < 0 ? -1 : std::min(free[i], std::max<int64_t>(0, end[i] - start[i]));
      s.collectives.push_back(c);
    }
  }
  // Back to start order (the writer grouped them).
  std::stable_sort(s.collectives.begin(), s.collectives.end(),
                   [](const CollectiveSummary& a, const CollectiveSummary& b) {
                     return a.start_ns < b.start_ns;
                   });
  return s;
}

std::string DefaultSummaryPath(const std::string& trace_path) {
  const std::string ext = ".sqlite";
  std::string stem = trace_path;
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0) {
    stem.resize(stem.size() - ext.size());
  }
  return stem + ".summary.json";
}

}  // namespace stepscope
