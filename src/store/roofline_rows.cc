#include "store/roofline_rows.h"

#include <string_view>

#include "store/schema.h"
#include "store/sqlite_util.h"
#include "store/string_ids.h"

namespace stepscope {

namespace {

// Binds `row` to the insert of every roofline column in the schema's order;
// returns how many it bound.
int BindRooflineRow(Statement& ins, const RooflineRow& row, int64_t name_id, int64_t mangled_id) {
  int i = 1;
  ins.BindInt(i++, row.rank);
  ins.BindInt(i++, name_id);
  ins.BindInt(i++, mangled_id);
  for (int d = 0; d < 3; ++d) ins.BindInt(i++, row.grid[d]);
  for (int d = 0; d < 3; ++d) ins.BindInt(i++, row.block[d]);
  ins.BindInt(i++, row.step);
  ins.BindInt(i++, row.step_gpu_ns);
  ins.BindInt(i++, row.step_launches);
  ins.BindInt(i++, row.instances);
  ins.BindInt(i++, row.first_launch_index);
  ins.BindDouble(i++, row.duration_ns);
  ins.BindDouble(i++, row.flops);
  for (double f : row.precision_flops) ins.BindDouble(i++, f);
  ins.BindDouble(i++, row.tensor_int_ops);
  ins.BindDouble(i++, row.dram_read_bytes);
  ins.BindDouble(i++, row.dram_write_bytes);
  ins.BindDouble(i++, row.l2_bytes);
  ins.BindDouble(i++, row.l1_bytes);
  ins.BindDouble(i++, row.intensity_dram);
  ins.BindDouble(i++, row.flops_per_s);
  ins.BindDouble(i++, row.dram_bytes_per_s);
  ins.BindText(i++, row.precision);
  ins.BindText(i++, row.bound);
  ins.BindText(i++, row.bound_kind);
  ins.BindDouble(i++, row.pct_of_bound);
  ins.BindText(i++, row.counters_json);
  return i - 1;
}

// Decodes a row of "SELECT <every roofline column> FROM roofline".
RooflineRow DecodeRooflineRow(const TraceReader& trace, const Statement& st) {
  RooflineRow r;
  int i = 0;
  r.rank = st.Int(i++);
  r.name = trace.String(static_cast<StringId>(st.Int(i++)));
  r.mangled = trace.String(static_cast<StringId>(st.Int(i++)));
  for (int d = 0; d < 3; ++d) r.grid[d] = st.Int(i++);
  for (int d = 0; d < 3; ++d) r.block[d] = st.Int(i++);
  r.step = st.Int(i++);
  r.step_gpu_ns = st.Int(i++);
  r.step_launches = st.Int(i++);
  r.instances = st.Int(i++);
  r.first_launch_index = st.Int(i++);
  r.duration_ns = st.Double(i++);
  r.flops = st.Double(i++);
  for (double& f : r.precision_flops) f = st.Double(i++);
  r.tensor_int_ops = st.Double(i++);
  r.dram_read_bytes = st.Double(i++);
  r.dram_write_bytes = st.Double(i++);
  r.l2_bytes = st.Double(i++);
  r.l1_bytes = st.Double(i++);
  r.intensity_dram = st.Double(i++);
  r.flops_per_s = st.Double(i++);
  r.dram_bytes_per_s = st.Double(i++);
  r.precision = std::string(st.Text(i++));
  r.bound = std::string(st.Text(i++));
  r.bound_kind = std::string(st.Text(i++));
  r.pct_of_bound = st.Double(i++);
  r.counters_json = std::string(st.Text(i++));
  return r;
}

// The roofline table's columns, "a,b,c" and the matching "?1,?2,?3".
void RooflineColumns(const TableDef& def, std::string* cols, std::string* params) {
  for (size_t i = 0; i < def.columns.size(); ++i) {
    *cols += (i ? "," : "") + std::string(def.columns[i].name);
    *params += (i ? ",?" : "?") + std::to_string(i + 1);
  }
}

Status SetMeta(Statement& meta, const std::string& key, const std::string& value) {
  meta.Reset();
  meta.BindText(1, key);
  meta.BindText(2, value);
  meta.Step();
  return meta.ok() ? OkStatus() : meta.status();
}

Status WriteRooflineRows(sqlite3* db, const std::vector<RooflineRow>& rows,
                         const std::string& device, const std::string& ceilings_json) {
  const TableDef* def = FindTable("roofline");
  if (!def) return Internal("schema has no roofline table");
  RETURN_IF_ERROR(Exec(db, CreateTableSql(*def)));
  RETURN_IF_ERROR(Exec(db, "DELETE FROM roofline"));
  std::string cols, params;
  RooflineColumns(*def, &cols, &params);
  ASSIGN_OR_RETURN(Statement ins,
                   Prepare(db, "INSERT INTO roofline(" + cols + ") VALUES(" + params + ")"));
  for (const RooflineRow& row : rows) {
    ASSIGN_OR_RETURN(int64_t name_id, InternStringRow(db, row.name));
    ASSIGN_OR_RETURN(int64_t mangled_id, InternStringRow(db, row.mangled));
    ins.Reset();
    const int bound = BindRooflineRow(ins, row, name_id, mangled_id);
    if (bound != static_cast<int>(def->columns.size())) {
      return Internal("roofline insert binds " + std::to_string(bound) + " of " +
                      std::to_string(def->columns.size()) + " columns");
    }
    ins.Step();
    if (!ins.ok()) return ins.status();
  }
  ASSIGN_OR_RETURN(Statement meta,
                   Prepare(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)"));
  RETURN_IF_ERROR(SetMeta(meta, "roofline_device", device));
  RETURN_IF_ERROR(SetMeta(meta, "roofline_ceilings", ceilings_json));
  // The trace now holds a table of this minor schema version.
  return Exec(db, "UPDATE meta SET value = '" + std::to_string(kSchemaMinor) +
                      "' WHERE key = 'schema_minor' AND CAST(value AS INTEGER) < " +
                      std::to_string(kSchemaMinor));
}

struct Db {
  sqlite3* db = nullptr;
  ~Db() {
    if (db) sqlite3_close_v2(db);
  }
};

}  // namespace

Status StoreRooflineTable(const std::string& trace_path, const std::vector<RooflineRow>& rows,
                          const std::string& device, const std::string& ceilings_json) {
  Db d;
  if (sqlite3_open_v2(trace_path.c_str(), &d.db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    return IoError(trace_path + ": cannot open for writing the roofline table: " +
                   (d.db ? sqlite3_errmsg(d.db) : "out of memory"));
  }
  sqlite3_busy_timeout(d.db, 5000);
  RETURN_IF_ERROR(Exec(d.db, "BEGIN IMMEDIATE"));
  Status st = WriteRooflineRows(d.db, rows, device, ceilings_json);
  if (!st.ok()) {
    (void)Exec(d.db, "ROLLBACK");
    return st.WithContext(trace_path + ": storing the roofline table");
  }
  return Exec(d.db, "COMMIT");
}

StatusOr<std::vector<RooflineRow>> LoadRooflineTable(const TraceReader& trace) {
  const TableDef* def = FindTable("roofline");
  if (!def) return Internal("schema has no roofline table");
  std::string cols, params;
  RooflineColumns(*def, &cols, &params);
  ASSIGN_OR_RETURN(Statement st,
                   Prepare(trace.db(), "SELECT " + cols + " FROM roofline ORDER BY rank, id"));
  std::vector<RooflineRow> out;
  while (st.Step()) out.push_back(DecodeRooflineRow(trace, st));
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<std::vector<NvtxRangeRow>> LoadNvtxRanges(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db,
                                         "SELECT name_id, start_ns, end_ns, tid, domain_id FROM "
                                         "nvtx WHERE kind != 3 ORDER BY start_ns"));
  std::vector<NvtxRangeRow> out;
  while (st.Step()) out.push_back({st.Int(0), st.Int(1), st.Int(2), st.Int(3), st.Int(4)});
  RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<bool> HasApiRows(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, "SELECT 1 FROM api LIMIT 1"));
  return st.Step();
}

StatusOr<RowCursor<KernelLaunchRow>> KernelLaunches(sqlite3* db, LaunchFilter filter,
                                                    int64_t from_ns, int64_t to_ns) {
  std::string sql =
      "SELECT k.name_id, k.mangled_id, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, "
      "k.block_z, k.end_ns - k.start_ns FROM kernels k ";
  if (filter == LaunchFilter::kCalledIn) {
    sql +=
        "WHERE EXISTS (SELECT 1 FROM api a WHERE a.correlation = k.correlation AND a.start_ns >= "
        "?1 AND a.start_ns <= ?2)";
  } else if (filter == LaunchFilter::kStartedIn) {
    sql += "WHERE k.start_ns >= ?1 AND k.start_ns <= ?2";
  }
  ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
  if (filter != LaunchFilter::kAll) {
    st.BindInt(1, from_ns);
    st.BindInt(2, to_ns);
  }
  return RowCursor<KernelLaunchRow>(std::move(st), [](const Statement& s, KernelLaunchRow* r) {
    *r = {s.Int(0),
          s.Int(1),
          {s.Int(2), s.Int(3), s.Int(4)},
          {s.Int(5), s.Int(6), s.Int(7)},
          s.Int(8)};
  });
}

}  // namespace stepscope
