#include "roofline/roofline_report.h"

#include <algorithm>

#include "common/strings.h"
#include "store/schema.h"
#include "store/sqlite_util.h"

namespace stepscope {

RooflineReport BuildReport(const Selection& sel, const ProfileResults& results,
                           std::vector<std::string>* warnings) {
  RooflineReport r;
  r.step = sel.has_step ? sel.step.number : -1;
  r.gpu_name = results.device.name;
  r.uuid = results.device.uuid;
  std::vector<RooflineEntry> entries(sel.targets.size());
  for (size_t i = 0; i < sel.targets.size(); ++i) entries[i].target = sel.targets[i];
  struct Sum {
    double all = 0, memory = 0;
    int n_all = 0, n_memory = 0;
  };
  std::vector<std::map<std::string, Sum>> sums(entries.size());
  for (const ProfileInstance& inst : results.instances) {
    if (inst.target < 0 || static_cast<size_t>(inst.target) >= entries.size()) {
      warnings->push_back("result line for unknown kernel #" + std::to_string(inst.target) +
                          " ignored");
      continue;
    }
    if (inst.ranges != 1) {
      warnings->push_back("launch " + std::to_string(inst.launch_index) + " of " +
                          ShortKernelName(entries[inst.target].target.name, 60) + ": " +
                          std::to_string(inst.ranges) +
                          " ranges in its profiling window (expected 1); left out");
      continue;
    }
    RooflineEntry& e = entries[static_cast<size_t>(inst.target)];
    const bool mem = inst.group == "memory";
    for (const auto& [k, v] : inst.counters) {
      Sum& s = sums[static_cast<size_t>(inst.target)][k];
      (mem ? s.memory : s.all) += v;
      (mem ? s.n_memory : s.n_all)++;
    }
    if (e.instances == 0 || inst.launch_index < e.first_launch_index) {
      e.first_launch_index = inst.launch_index;
    }
    e.instances++;
  }
  // Launches alternate metric groups (range_profiler.cc): "all" (FLOPs, and
  // time and bytes under kernel replay) and "memory" (time and bytes from
  // one unreplayed run). A counter the memory launches have comes from them
  // only; every counter is stored as its mean over the launches it came
  // from times the instance count, so that counters / instances is a mean.
  for (size_t i = 0; i < entries.size(); ++i) {
    for (const auto& [k, s] : sums[i]) {
      const double mean = s.n_memory > 0 ? s.memory / s.n_memory : s.all / std::max(1, s.n_all);
      entries[i].counters[k] = mean * entries[i].instances;
    }
  }
  for (RooflineEntry& e : entries) {
    if (e.instances > 0) {
      r.entries.push_back(std::move(e));
    } else {
      warnings->push_back("no launch of " + ShortKernelName(e.target.name, 60) + " grid " +
                          Dim3Text(e.target.grid) + " block " + Dim3Text(e.target.block) +
                          " was profiled");
    }
  }
  return r;
}

void EvaluateReport(RooflineReport* r) {
  for (RooflineEntry& e : r->entries) {
    e.work = WorkFromCounters(e.counters, e.instances);
    e.result = Evaluate(e.work, r->ceilings);
  }
}

std::string ShortKernelName(const std::string& name, size_t max) {
  std::string s = name;
  if (StartsWith(s, "void ")) s = s.substr(5);
  // Drop the parameter list: the ')' at the end and its matching '('.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        if (i > 0) s = s.substr(0, i);
        break;
      }
    }
  }
  if (s.size() > max && max > 3) s = s.substr(0, max - 3) + "...";
  return s;
}

Table RooflineTable(const RooflineReport& r, bool short_names) {
  Table t({{"rank", "#", true},
           {"instances", "n", true},
           {"avg_us", "avg us", true},
           {"gflop", "GFLOP", true},
           {"tflops", "TFLOP/s", true},
           {"intensity", "FLOP/B", true},
           {"dram_gbs", "DRAM GB/s", true},
           {"precision", "precision", false},
           {"bound", "bound by", false},
           {"pct_of_bound", "% of bound", true},
           {"kind", "kind", false},
           {"name", "kernel", false}});
  for (const RooflineEntry& e : r.entries) {
    const RooflineResult& x = e.result;
    double n = e.instances > 0 ? e.instances : 1;
    t.AddRow({e.target.rank, e.instances, Cell(e.work.duration_ns / n / 1e3, 1),
              Cell(x.flops / n / 1e9, 3), Cell(x.flops_per_s / 1e12, 1), Cell(x.intensity_dram, 2),
              Cell(x.dram_bytes_per_s / 1e9, 1), x.precision.empty() ? "-" : x.precision,
              x.bound.empty() ? "-" : x.bound, Cell(x.pct_of_bound, 1), x.bound_kind,
              short_names ? ShortKernelName(e.target.name, 70) : e.target.name});
  }
  return t;
}

std::vector<ChartRoof> RoofsFromCeilings(const Ceilings& c) {
  std::vector<ChartRoof> roofs;
  for (const CeilingKey& k : CeilingKeys()) {
    std::string key = k.key;
    double v = c.Get(key);
    if (v <= 0) continue;
    if (key == "dram_bw" || key == "l2_bw") {
      roofs.push_back({std::string(k.label) + " " + FormatFixed(v / 1e12, 2) + " TB/s", true, v});
    } else if (std::string(k.unit) == "FLOP/s") {
      roofs.push_back(
          {std::string(k.label) + " " + FormatFixed(v / 1e12, 1) + " TFLOP/s", false, v});
    }
  }
  return roofs;
}

std::string ReportSvg(const RooflineReport& r) {
  std::vector<ChartPoint> points;
  for (const RooflineEntry& e : r.entries) {
    std::string label = ShortKernelName(e.target.name, 40) + "  " +
                        FormatFixed(e.result.flops_per_s / 1e12, 1) + " TFLOP/s, " +
                        FormatFixed(e.result.pct_of_bound, 0) + "% of " +
                        (e.result.bound.empty() ? "?" : e.result.bound);
    points.push_back({label, e.result.intensity_dram, e.result.flops_per_s});
  }
  std::string title = "Roofline: " + r.gpu_name +
                      (r.step >= 0 ? ", step " + std::to_string(r.step) : std::string());
  return RooflineSvg(title, RoofsFromCeilings(r.ceilings), points);
}

namespace {

StatusOr<int64_t> InternString(sqlite3* db, const std::string& s) {
  if (s.empty()) return int64_t{0};
  {
    ASSIGN_OR_RETURN(Statement q, Prepare(db, "SELECT id FROM strings WHERE value = ?1 LIMIT 1"));
    q.BindText(1, s);
    if (q.Step()) return q.Int(0);
    if (!q.ok()) return q.status();
  }
  ASSIGN_OR_RETURN(Statement ins, Prepare(db, "INSERT INTO strings(value) VALUES(?1)"));
  ins.BindText(1, s);
  ins.Step();
  if (!ins.ok()) return ins.status();
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db));
}

struct Db {
  sqlite3* db = nullptr;
  ~Db() {
    if (db) sqlite3_close_v2(db);
  }
};

Status WriteRows(sqlite3* db, const RooflineReport& r) {
  const TableDef* def = FindTable("roofline");
  if (!def) return Internal("schema has no roofline table");
  RETURN_IF_ERROR(Exec(db, CreateTableSql(*def)));
  RETURN_IF_ERROR(Exec(db, "DELETE FROM roofline"));
  std::string cols, params;
  for (size_t i = 0; i < def->columns.size(); ++i) {
    cols += (i ? "," : "") + std::string(def->columns[i].name);
    params += (i ? ",?" : "?") + std::to_string(i + 1);
  }
  ASSIGN_OR_RETURN(Statement ins,
                   Prepare(db, "INSERT INTO roofline(" + cols + ") VALUES(" + params + ")"));
  for (const RooflineEntry& e : r.entries) {
    ASSIGN_OR_RETURN(int64_t name_id, InternString(db, e.target.name));
    ASSIGN_OR_RETURN(int64_t mangled_id, InternString(db, e.target.mangled));
    const KernelWork& w = e.work;
    const RooflineResult& x = e.result;
    int i = 1;
    ins.Reset();
    ins.BindInt(i++, e.target.rank);
    ins.BindInt(i++, name_id);
    ins.BindInt(i++, mangled_id);
    for (int d = 0; d < 3; ++d) ins.BindInt(i++, e.target.grid[d]);
    for (int d = 0; d < 3; ++d) ins.BindInt(i++, e.target.block[d]);
    ins.BindInt(i++, r.step);
    ins.BindInt(i++, e.target.step_gpu_ns);
    ins.BindInt(i++, e.target.step_launches);
    ins.BindInt(i++, e.instances);
    ins.BindInt(i++, e.first_launch_index);
    ins.BindDouble(i++, w.duration_ns);
    ins.BindDouble(i++, x.flops);
    for (int p = 0; p < kPrecisionCount; ++p) ins.BindDouble(i++, w.flops[p]);
    ins.BindDouble(i++, w.tensor_int_ops);
    ins.BindDouble(i++, w.dram_read_bytes);
    ins.BindDouble(i++, w.dram_write_bytes);
    ins.BindDouble(i++, w.l2_bytes);
    ins.BindDouble(i++, w.l1_bytes);
    ins.BindDouble(i++, x.intensity_dram);
    ins.BindDouble(i++, x.flops_per_s);
    ins.BindDouble(i++, x.dram_bytes_per_s);
    ins.BindText(i++, x.precision);
    ins.BindText(i++, x.bound);
    ins.BindText(i++, x.bound_kind);
    ins.BindDouble(i++, x.pct_of_bound);
    ins.BindText(i++, CountersJson(e.counters));
    if (i - 1 != static_cast<int>(def->columns.size())) {
      return Internal("roofline insert binds " + std::to_string(i - 1) + " of " +
                      std::to_string(def->columns.size()) + " columns");
    }
    ins.Step();
    if (!ins.ok()) return ins.status();
  }
  ASSIGN_OR_RETURN(Statement meta,
                   Prepare(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)"));
  auto set_meta = [&](const std::string& k, const std::string& v) -> Status {
    meta.Reset();
    meta.BindText(1, k);
    meta.BindText(2, v);
    meta.Step();
    return meta.ok() ? OkStatus() : meta.status();
  };
  RETURN_IF_ERROR(set_meta("roofline_device", r.gpu_name + (r.uuid.empty() ? "" : " " + r.uuid)));
  RETURN_IF_ERROR(set_meta("roofline_ceilings", CeilingsJson(r.ceilings)));
  // The trace now holds a table of this minor schema version.
  RETURN_IF_ERROR(Exec(db, "UPDATE meta SET value = '" + std::to_string(kSchemaMinor) +
                               "' WHERE key = 'schema_minor' AND CAST(value AS INTEGER) < " +
                               std::to_string(kSchemaMinor)));
  return OkStatus();
}

}  // namespace

Status StoreRoofline(const std::string& trace_path, const RooflineReport& r) {
  Db d;
  if (sqlite3_open_v2(trace_path.c_str(), &d.db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    return IoError(trace_path + ": cannot open for writing the roofline table: " +
                   (d.db ? sqlite3_errmsg(d.db) : "out of memory"));
  }
  sqlite3_busy_timeout(d.db, 5000);
  RETURN_IF_ERROR(Exec(d.db, "BEGIN IMMEDIATE"));
  Status st = WriteRows(d.db, r);
  if (!st.ok()) {
    (void)Exec(d.db, "ROLLBACK");
    return st.WithContext(trace_path + ": storing the roofline table");
  }
  return Exec(d.db, "COMMIT");
}

StatusOr<RooflineReport> LoadStoredRoofline(const TraceReader& trace) {
  if (!TableExists(trace.db(), "roofline")) {
    return InvalidInput(
        trace.path() +
        ": no roofline table; run 'stepscope roofline --from TRACE -- COMMAND' first");
  }
  RooflineReport r;
  std::string device = trace.Meta("roofline_device");
  size_t gpu = device.rfind(" GPU-");
  r.gpu_name = gpu == std::string::npos ? device : device.substr(0, gpu);
  r.uuid = gpu == std::string::npos ? "" : device.substr(gpu + 1);
  std::string cj = trace.Meta("roofline_ceilings");
  if (!cj.empty()) {
    auto c = CeilingsFromJson(cj);
    if (c.ok()) r.ceilings = *c;
  }
  ASSIGN_OR_RETURN(
      Statement st,
      trace.Query("SELECT rank, name_id, mangled_id, grid_x, grid_y, grid_z, block_x, "
                  "block_y, block_z, step, step_gpu_ns, step_launches, instances, "
                  "first_launch_index, counters_json FROM roofline ORDER BY rank, id"));
  while (st.Step()) {
    RooflineEntry e;
    e.target.rank = static_cast<int>(st.Int(0));
    e.target.name = trace.String(static_cast<StringId>(st.Int(1)));
    e.target.mangled = trace.String(static_cast<StringId>(st.Int(2)));
    for (int d = 0; d < 3; ++d) e.target.grid[d] = static_cast<int32_t>(st.Int(3 + d));
    for (int d = 0; d < 3; ++d) e.target.block[d] = static_cast<int32_t>(st.Int(6 + d));
    r.step = st.Int(9);
    e.target.step_gpu_ns = st.Int(10);
    e.target.step_launches = st.Int(11);
    e.instances = static_cast<int>(st.Int(12));
    e.first_launch_index = st.Int(13);
    auto counters = CountersFromJson(std::string(st.Text(14)));
    if (!counters.ok()) {
      return InvalidInput(trace.path() + ": roofline row rank " + std::to_string(e.target.rank) +
                          ": counters_json: " + counters.status().message());
    }
    e.counters = std::move(*counters);
    r.entries.push_back(std::move(e));
  }
  if (!st.ok()) return st.status();
  if (r.entries.empty()) {
    return InvalidInput(
        trace.path() +
        ": no roofline results stored; run 'stepscope roofline --from TRACE -- COMMAND' first");
  }
  return r;
}

}  // namespace stepscope
