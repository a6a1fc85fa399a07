#include "store/trace_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "common/strings.h"
#include "store/schema.h"

namespace stepscope {

StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  std::unique_ptr<TraceReader> r(new TraceReader());
  Status st = r->Init(path);
  if (!st.ok()) return st;
  return r;
}

TraceReader::~TraceReader() {
  if (db_) sqlite3_close_v2(db_);
}

Status TraceReader::Init(const std::string& path) {
  path_ = path;
  // Check the header ourselves: SQLite would happily create an empty database
  // or report "file is not a database" without naming the file.
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) return InvalidInput(path + ": cannot open: " + std::strerror(errno));
    char magic[16] = {0};
    f.read(magic, 16);
    if (f.gcount() == 0) return InvalidInput(path + ": empty file, not a stepscope trace");
    if (f.gcount() < 16 || std::memcmp(magic, "SQLite format 3", 16) != 0) {
      return InvalidInput(path +
                          ": not an SQLite file (offset 0: bad header); for torch.profiler JSON "
                          "run 'stepscope import' first");
    }
  }
  // Read-write when we may (SQLite replays a crashed trace's WAL), else read-only.
  int flags = (::access(path.c_str(), W_OK) == 0) ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    return InvalidInput(path + ": cannot open as SQLite: " + sqlite3_errmsg(db_));
  }
  sqlite3_busy_timeout(db_, 2000);
  if (!TableExists(db_, "meta")) {
    return InvalidInput(path +
                        ": SQLite file is not a stepscope trace (no meta table); "
                        "import nsys exports with 'stepscope import'");
  }
  {
    auto st = Prepare(db_, "SELECT key, value FROM meta");
    if (!st.ok()) return InvalidInput(path + ": unreadable meta table: " + st.status().message());
    while (st->Step()) meta_[std::string(st->Text(0))] = PrintableText(st->Text(1));
    if (!st->ok()) return InvalidInput(path + ": " + st->status().message());
  }
  RETURN_IF_ERROR(CheckSchemaVersion());
  RETURN_IF_ERROR(AdaptOlderLayout());
  {
    // Ids index a vector: writers number strings densely from 1, so an id far
    // past the row count (hand-written fixtures leave gaps: 64 Ki slack, at
    // most 2 MB) is damage; refuse it before allocating for it.
    auto range =
        Prepare(db_, "SELECT COUNT(*), COALESCE(MAX(id), 0), COALESCE(MIN(id), 0) FROM strings");
    if (!range.ok()) return InvalidInput(path + ": " + range.status().message());
    if (!range->Step()) return InvalidInput(path + ": strings table: " + range->status().message());
    const int64_t rows = range->Int(0), max_id = range->Int(1), min_id = range->Int(2);
    if (min_id < 0 || max_id > 2 * rows + 65536) {
      return InvalidInput(path + ": strings table: id " +
                          std::to_string(min_id < 0 ? min_id : max_id) + " is out of range for " +
                          std::to_string(rows) + " rows; the trace is damaged");
    }
    strings_.resize(static_cast<size_t>(max_id) + 1);
    auto st = Prepare(db_, "SELECT id, value FROM strings ORDER BY id");
    if (!st.ok()) return InvalidInput(path + ": " + st.status().message());
    // Names reach terminals, JSON and HTML: valid UTF-8 without control
    // characters from here on (an escape sequence in a kernel name is noise).
    while (st->Step()) strings_[static_cast<size_t>(st->Int(0))] = PrintableText(st->Text(1));
    if (!st->ok()) return InvalidInput(path + ": strings table: " + st->status().message());
  }
  if (strings_.empty()) strings_.emplace_back();
  return OkStatus();
}

// Major versions change meaning: refuse a newer one (and a damaged number).
// Minor versions only add (schema.h), so any trace of our major is read;
// AdaptOlderLayout() fills in what an older minor lacks.
Status TraceReader::CheckSchemaVersion() const {
  auto it = meta_.find("schema_version");
  if (it == meta_.end()) return InvalidInput(path_ + ": not a stepscope trace (no schema_version)");
  int64_t major = 0, minor = 0;
  const std::string minor_text = Meta("schema_minor", "0");
  if (!ParseInt64(it->second, &major) || major < 1 || !ParseInt64(minor_text, &minor) ||
      minor < 0) {
    return InvalidInput(path_ + ": schema version '" + it->second + "." + minor_text +
                        "' is not a version; the trace's meta table is damaged");
  }
  if (major != kSchemaVersion) {
    return InvalidInput(path_ + ": trace schema version " + it->second + "." + minor_text +
                        " is newer than this stepscope reads (" + std::to_string(kSchemaVersion) +
                        ".x); use a newer stepscope");
  }
  return OkStatus();
}

// A trace of an older minor version lacks the tables and columns added since.
// Temporary objects on this connection stand in for them, so readers query
// one layout and the file is never modified: an empty TEMP table for a
// missing table, a TEMP view with NULL for missing columns over an existing
// one (temp objects shadow main ones of the same name).
Status TraceReader::AdaptOlderLayout() {
  for (const TableDef& t : SchemaTables()) {
    std::vector<std::string> have;
    {
      ASSIGN_OR_RETURN(Statement st, Prepare(db_, "SELECT name FROM pragma_table_info(?, 'main')"));
      st.BindText(1, t.name);
      while (st.Step()) have.emplace_back(st.Text(0));
      RETURN_IF_ERROR(st.status());
    }
    std::string sql;
    if (have.empty()) {
      sql = CreateTableSql(t);
      sql.replace(0, std::strlen("CREATE TABLE IF NOT EXISTS"), "CREATE TEMP TABLE");
    } else {
      std::vector<std::string> cols;
      if (t.has_integer_pk) cols.emplace_back("id");
      for (const ColumnDef& c : t.columns) cols.emplace_back(c.name);
      std::string select;
      bool missing = false;
      for (const std::string& c : cols) {
        const bool present = std::find(have.begin(), have.end(), c) != have.end();
        missing |= !present;
        select += std::string(select.empty() ? "" : ", ") + (present ? c : "NULL AS " + c);
      }
      if (!missing) continue;
      sql = "CREATE TEMP VIEW " + std::string(t.name) + " AS SELECT " + select + " FROM main." +
            t.name;
    }
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return InvalidInput(path_ + ": cannot adapt the table layout of schema " +
                          Meta("schema_version") + "." + Meta("schema_minor", "0") + " (" + t.name +
                          "): " + msg);
    }
  }
  return OkStatus();
}

std::string TraceReader::Meta(const std::string& key, const std::string& fallback) const {
  auto it = meta_.find(key);
  return it == meta_.end() ? fallback : it->second;
}

int64_t TraceReader::Stat(const std::string& name) const {
  auto st = Prepare(db_, "SELECT value FROM stats WHERE name = ?");
  if (!st.ok()) return 0;
  st->BindText(1, name);
  return st->Step() ? st->Int(0) : 0;
}

const std::string& TraceReader::String(StringId id) const {
  static const std::string kEmpty;
  return id < strings_.size() ? strings_[id] : kEmpty;
}

namespace {

// Times from a trace are clamped to [0, 2^62] ns (146 years), so that the
// difference of any two fits in an int64: a damaged INT64_MIN becomes 0 (the
// same bounds as TraceModel's sanitizing).
int64_t TimeNs(int64_t v) { return std::clamp<int64_t>(v, 0, int64_t{1} << 62); }

template <typename T, typename Fill>
StatusOr<std::vector<T>> LoadAll(sqlite3* db, const std::string& sql, Fill fill) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
  std::vector<T> out;
  while (st.Step()) {
    T r{};
    fill(st, r);
    out.push_back(r);
  }
  if (!st.ok()) return st.status();
  return out;
}

std::string OrderBy(TraceReader::RowOrder order) {
  return order == TraceReader::RowOrder::kByStart ? " ORDER BY start_ns, id" : " ORDER BY id";
}

}  // namespace

StatusOr<std::vector<KernelRecord>> TraceReader::Kernels(RowOrder order) const {
  return LoadAll<KernelRecord>(
      db_,
      "SELECT start_ns,end_ns,device,context,stream,correlation,name_id,mangled_id,grid_x,grid_y,"
      "grid_z,block_x,block_y,block_z,registers_per_thread,static_smem_bytes,dynamic_smem_bytes,"
      "graph_id,graph_node_id FROM kernels" +
          OrderBy(order),
      [](const Statement& s, KernelRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = TimeNs(s.Int(1));
        r.device = static_cast<uint32_t>(s.Int(2));
        r.context = static_cast<uint32_t>(s.Int(3));
        r.stream = static_cast<uint32_t>(s.Int(4));
        r.correlation = static_cast<uint32_t>(s.Int(5));
        r.name = static_cast<StringId>(s.Int(6));
        r.mangled_name = static_cast<StringId>(s.Int(7));
        r.grid_x = static_cast<int32_t>(s.Int(8));
        r.grid_y = static_cast<int32_t>(s.Int(9));
        r.grid_z = static_cast<int32_t>(s.Int(10));
        r.block_x = static_cast<int32_t>(s.Int(11));
        r.block_y = static_cast<int32_t>(s.Int(12));
        r.block_z = static_cast<int32_t>(s.Int(13));
        r.registers_per_thread = static_cast<uint32_t>(s.Int(14));
        r.static_smem_bytes = static_cast<int32_t>(s.Int(15));
        r.dynamic_smem_bytes = static_cast<int32_t>(s.Int(16));
        r.graph_id = static_cast<uint32_t>(s.Int(17));
        r.graph_node_id = static_cast<uint64_t>(s.Int(18));
      });
}

StatusOr<std::vector<MemcpyRecord>> TraceReader::Memcpys(RowOrder order) const {
  return LoadAll<MemcpyRecord>(
      db_,
      "SELECT start_ns,end_ns,device,context,stream,correlation,bytes,copy_kind,src_kind,dst_kind,"
      "is_async,dst_device,graph_id FROM memcpy" +
          OrderBy(order),
      [](const Statement& s, MemcpyRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = TimeNs(s.Int(1));
        r.device = static_cast<uint32_t>(s.Int(2));
        r.context = static_cast<uint32_t>(s.Int(3));
        r.stream = static_cast<uint32_t>(s.Int(4));
        r.correlation = static_cast<uint32_t>(s.Int(5));
        r.bytes = static_cast<uint64_t>(s.Int(6));
        r.copy_kind = static_cast<CopyKind>(s.Int(7));
        r.src_kind = static_cast<MemoryKind>(s.Int(8));
        r.dst_kind = static_cast<MemoryKind>(s.Int(9));
        r.is_async = s.IsNull(10) ? kAsyncUnknown : static_cast<uint8_t>(s.Int(10));
        r.dst_device = static_cast<uint32_t>(s.Int(11));
        r.graph_id = static_cast<uint32_t>(s.Int(12));
      });
}

StatusOr<std::vector<MemsetRecord>> TraceReader::Memsets(RowOrder order) const {
  return LoadAll<MemsetRecord>(
      db_,
      "SELECT start_ns,end_ns,device,context,stream,correlation,bytes,value,memory_kind,is_async,"
      "graph_id FROM memset" +
          OrderBy(order),
      [](const Statement& s, MemsetRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = TimeNs(s.Int(1));
        r.device = static_cast<uint32_t>(s.Int(2));
        r.context = static_cast<uint32_t>(s.Int(3));
        r.stream = static_cast<uint32_t>(s.Int(4));
        r.correlation = static_cast<uint32_t>(s.Int(5));
        r.bytes = static_cast<uint64_t>(s.Int(6));
        r.value = static_cast<uint32_t>(s.Int(7));
        r.memory_kind = static_cast<MemoryKind>(s.Int(8));
        r.is_async = s.IsNull(9) ? kAsyncUnknown : static_cast<uint8_t>(s.Int(9));
        r.graph_id = static_cast<uint32_t>(s.Int(10));
      });
}

StatusOr<std::vector<ApiRecord>> TraceReader::Apis(RowOrder order) const {
  return LoadAll<ApiRecord>(
      db_,
      std::string(
          "SELECT start_ns,end_ns,tid,correlation,domain,cbid,name_id,return_code FROM api") +
          OrderBy(order),
      [](const Statement& s, ApiRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = TimeNs(s.Int(1));
        r.tid = static_cast<uint32_t>(s.Int(2));
        r.correlation = static_cast<uint32_t>(s.Int(3));
        r.domain = static_cast<ApiDomain>(s.Int(4));
        r.cbid = static_cast<uint32_t>(s.Int(5));
        r.name = static_cast<StringId>(s.Int(6));
        r.return_code = static_cast<int32_t>(s.Int(7));
      });
}

StatusOr<std::vector<SyncRecord>> TraceReader::Syncs(RowOrder order) const {
  return LoadAll<SyncRecord>(
      db_,
      std::string("SELECT start_ns,end_ns,tid,correlation,type,context,stream,event FROM sync") +
          OrderBy(order),
      [](const Statement& s, SyncRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = TimeNs(s.Int(1));
        r.tid = static_cast<uint32_t>(s.Int(2));
        r.correlation = static_cast<uint32_t>(s.Int(3));
        r.type = static_cast<SyncType>(s.Int(4));
        r.context = static_cast<uint32_t>(s.Int(5));
        r.stream = static_cast<uint32_t>(s.Int(6));
        r.event = static_cast<uint32_t>(s.Int(7));
      });
}

StatusOr<std::vector<MemoryRecord>> TraceReader::MemoryEvents() const {
  return LoadAll<MemoryRecord>(
      db_,
      "SELECT ts_ns,op,address,bytes,memory_kind,device,context,stream,correlation,is_async,"
      "pool_address FROM memory ORDER BY ts_ns, id",
      [](const Statement& s, MemoryRecord& r) {
        r.ts_ns = TimeNs(s.Int(0));
        r.op = static_cast<MemoryOp>(s.Int(1));
        r.address = static_cast<uint64_t>(s.Int(2));
        r.bytes = static_cast<uint64_t>(s.Int(3));
        r.memory_kind = static_cast<MemoryKind>(s.Int(4));
        r.device = static_cast<uint32_t>(s.Int(5));
        r.context = static_cast<uint32_t>(s.Int(6));
        r.stream = static_cast<uint32_t>(s.Int(7));
        r.correlation = static_cast<uint32_t>(s.Int(8));
        r.is_async = static_cast<uint8_t>(s.Int(9));
        r.pool_address = static_cast<uint64_t>(s.Int(10));
      });
}

StatusOr<std::vector<MemoryPoolRecord>> TraceReader::MemoryPoolEvents() const {
  return LoadAll<MemoryPoolRecord>(
      db_,
      "SELECT ts_ns,op,address,size,utilized_bytes,release_threshold,device,is_managed "
      "FROM memory_pool ORDER BY ts_ns, id",
      [](const Statement& s, MemoryPoolRecord& r) {
        r.ts_ns = TimeNs(s.Int(0));
        r.op = static_cast<MemoryPoolOp>(s.Int(1));
        r.address = static_cast<uint64_t>(s.Int(2));
        r.size = static_cast<uint64_t>(s.Int(3));
        r.utilized_bytes = static_cast<uint64_t>(s.Int(4));
        r.release_threshold = static_cast<uint64_t>(s.Int(5));
        r.device = static_cast<uint32_t>(s.Int(6));
        r.is_managed = static_cast<uint8_t>(s.Int(7));
      });
}

StatusOr<std::vector<UmRecord>> TraceReader::UmEvents() const {
  if (!TableExists(db_, "um")) return std::vector<UmRecord>{};  // traces before schema 1.4
  return LoadAll<UmRecord>(db_,
                           "SELECT start_ns,end_ns,kind,value,address,src_id,dst_id,flags FROM um "
                           "ORDER BY start_ns, id",
                           [](const Statement& s, UmRecord& r) {
                             r.start_ns = s.Int(0);
                             r.end_ns = s.Int(1);
                             int64_t k = s.Int(2);
                             r.kind = k >= 0 && k <= 8 ? static_cast<UmCounterKind>(k)
                                                       : UmCounterKind::kUnknown;
                             r.value = static_cast<uint64_t>(s.Int(3));
                             r.address = static_cast<uint64_t>(s.Int(4));
                             r.src_id = static_cast<uint32_t>(s.Int(5));
                             r.dst_id = static_cast<uint32_t>(s.Int(6));
                             r.flags = static_cast<uint32_t>(s.Int(7));
                           });
}

StatusOr<std::vector<NvtxRecord>> TraceReader::Nvtx() const {
  return LoadAll<NvtxRecord>(
      db_,
      "SELECT start_ns,end_ns,tid,end_tid,kind,depth,domain_id,name_id,category,color,"
      "COALESCE(unclosed, 0) FROM nvtx ORDER BY start_ns, id",
      [](const Statement& s, NvtxRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        // -1: not ended. The collector writes a range still open when the
        // process died (or recording stopped) with end_ns = the trace's end
        // and unclosed = 1 for SQL readers; the model sees it as never ended,
        // as in a cut-off trace.
        r.end_ns = (s.Int(1) == -1 || s.Int(10) != 0) ? -1 : TimeNs(s.Int(1));
        r.tid = static_cast<uint32_t>(s.Int(2));
        r.end_tid = static_cast<uint32_t>(s.Int(3));
        r.kind = static_cast<NvtxKind>(s.Int(4));
        r.depth = static_cast<uint8_t>(s.Int(5));
        r.domain = static_cast<StringId>(s.Int(6));
        r.name = static_cast<StringId>(s.Int(7));
        r.category = static_cast<uint32_t>(s.Int(8));
        r.color = static_cast<uint32_t>(s.Int(9));
      });
}

StatusOr<std::vector<OverheadRecord>> TraceReader::Overheads() const {
  return LoadAll<OverheadRecord>(
      db_, "SELECT start_ns,end_ns,tid,kind_id FROM overhead ORDER BY start_ns, id",
      [](const Statement& s, OverheadRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = TimeNs(s.Int(1));
        r.tid = static_cast<uint32_t>(s.Int(2));
        r.kind = static_cast<StringId>(s.Int(3));
      });
}

StatusOr<std::vector<DeviceRecord>> TraceReader::Devices() const {
  return LoadAll<DeviceRecord>(
      db_,
      "SELECT id,name_id,uuid,cc_major,cc_minor,sm_count,global_memory_bytes,"
      "memory_bandwidth_bytes_per_s,l2_cache_bytes,core_clock_khz,max_threads_per_block,"
      "max_shared_memory_per_block,max_warps_per_sm FROM devices ORDER BY id",
      [](const Statement& s, DeviceRecord& r) {
        r.id = static_cast<uint32_t>(s.Int(0));
        r.name = static_cast<StringId>(s.Int(1));
        std::string_view uuid = s.Text(2);
        std::memcpy(r.uuid, uuid.data(), std::min(uuid.size(), sizeof(r.uuid) - 1));
        r.cc_major = static_cast<uint32_t>(s.Int(3));
        r.cc_minor = static_cast<uint32_t>(s.Int(4));
        r.sm_count = static_cast<uint32_t>(s.Int(5));
        r.global_memory_bytes = static_cast<uint64_t>(s.Int(6));
        r.memory_bandwidth_bytes_per_s = static_cast<uint64_t>(s.Int(7));
        r.l2_cache_bytes = static_cast<uint32_t>(s.Int(8));
        r.core_clock_khz = static_cast<uint32_t>(s.Int(9));
        r.max_threads_per_block = static_cast<uint32_t>(s.Int(10));
        r.max_shared_memory_per_block = static_cast<uint32_t>(s.Int(11));
        r.max_warps_per_sm = static_cast<uint32_t>(s.Int(12));
      });
}

StatusOr<std::unordered_map<uint32_t, std::string>> TraceReader::ThreadNames() const {
  ASSIGN_OR_RETURN(Statement st, Prepare(db_, "SELECT tid, name_id FROM threads"));
  std::unordered_map<uint32_t, std::string> out;
  while (st.Step())
    out[static_cast<uint32_t>(st.Int(0))] = String(static_cast<StringId>(st.Int(1)));
  if (!st.ok()) return st.status();
  return out;
}

}  // namespace stepscope
