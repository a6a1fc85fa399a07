#include "store/trace_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

#include "common/log.h"
#include "common/strings.h"
#include "store/record_sql.h"
#include "store/schema.h"

namespace stepscope {

namespace {

uint32_t BigEndian(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// A file shorter than its SQLite header says (a copy or a download cut
// short) reads as zeros past its end: refuse it at open rather than fail on
// whichever table lies past the end. Only when the header's page count is
// valid (its change counter equals version-valid-for) and no -wal or hot
// -journal file beside it holds pages SQLite has yet to write back or roll back.
Status CheckNotCutShort(const std::string& path, const unsigned char* header, std::streamsize n) {
  const std::string fix = "; record it again, or salvage what is left with 'sqlite3 FILE .recover'";
  if (n < 100) {
    return InvalidInput(path + ": the file is cut short (" + std::to_string(n) +
                        " bytes, less than an SQLite header)" + fix);
  }
  uint32_t page_size = BigEndian(header + 16, 2);
  if (page_size == 1) page_size = 65536;
  const uint64_t pages = BigEndian(header + 28, 4);
  const bool count_valid = BigEndian(header + 24, 4) == BigEndian(header + 92, 4);
  struct stat file, side;
  if (!count_valid || pages == 0 || ::stat(path.c_str(), &file) != 0) return OkStatus();
  for (const char* suffix : {"-wal", "-journal"}) {
    if (::stat((path + suffix).c_str(), &side) == 0 && side.st_size > 0) return OkStatus();
  }
  const uint64_t want = pages * page_size;
  if (static_cast<uint64_t>(file.st_size) >= want) return OkStatus();
  return InvalidInput(path + ": the file is cut short (" + FormatCount(file.st_size) +
                      " bytes; its SQLite header says " + FormatCount(static_cast<int64_t>(want)) +
                      ")" + fix);
}

std::atomic<bool> g_warn_not_finalized{false};

// Once per path per process: a command may open a trace several times
// (TraceModel reads the kernels on a second connection; report opens it twice).
void WarnNotFinalizedOnce(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!warned.insert(path).second) return;
  }
  LogWarn("%s was not finalized (the run was killed?): the last <= 0.25 s may be missing",
          path.c_str());
}

}  // namespace

void TraceReader::WarnIfNotFinalized() { g_warn_not_finalized = true; }

StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  std::unique_ptr<TraceReader> r(new TraceReader());
  Status st = r->Init(path);
  if (!st.ok()) return st;
  if (g_warn_not_finalized && r->Meta("finalized") == "0") WarnNotFinalizedOnce(path);
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
    unsigned char header[100] = {0};
    f.read(reinterpret_cast<char*>(header), sizeof(header));
    if (f.gcount() == 0) return InvalidInput(path + ": empty file, not a stepscope trace");
    if (f.gcount() < 16 || std::memcmp(header, "SQLite format 3", 16) != 0) {
      return InvalidInput(path +
                          ": not an SQLite file (offset 0: bad header); for torch.profiler JSON "
                          "run 'stepscope import' first");
    }
    RETURN_IF_ERROR(CheckNotCutShort(path, header, f.gcount()));
  }
  // Read-write when we may (SQLite replays a crashed trace's WAL), else read-only.
  int flags = (::access(path.c_str(), W_OK) == 0) ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    return InvalidInput(path + ": cannot open as SQLite: " + sqlite3_errmsg(db_));
  }
  sqlite3_busy_timeout(db_, 2000);
  // A damaged schema page fails here with one line naming the file
  // (SqliteError), not as "no meta table" below.
  RETURN_IF_ERROR(ProbeSchema(db_));
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

std::string OrderBy(TraceReader::RowOrder order) {
  return order == TraceReader::RowOrder::kByStart ? " ORDER BY start_ns, id" : " ORDER BY id";
}

}  // namespace

StatusOr<std::vector<KernelRecord>> TraceReader::Kernels(RowOrder order) const {
  return LoadRecords<KernelRecord>(db_, OrderBy(order));
}

StatusOr<std::vector<MemcpyRecord>> TraceReader::Memcpys(RowOrder order) const {
  return LoadRecords<MemcpyRecord>(db_, OrderBy(order));
}

StatusOr<std::vector<MemsetRecord>> TraceReader::Memsets(RowOrder order) const {
  return LoadRecords<MemsetRecord>(db_, OrderBy(order));
}

StatusOr<std::vector<ApiRecord>> TraceReader::Apis(RowOrder order) const {
  return LoadRecords<ApiRecord>(db_, OrderBy(order));
}

StatusOr<std::vector<SyncRecord>> TraceReader::Syncs(RowOrder order) const {
  return LoadRecords<SyncRecord>(db_, OrderBy(order));
}

StatusOr<std::vector<MemoryRecord>> TraceReader::MemoryEvents() const {
  return LoadRecords<MemoryRecord>(db_, " ORDER BY ts_ns, id");
}

StatusOr<std::vector<MemoryPoolRecord>> TraceReader::MemoryPoolEvents() const {
  return LoadRecords<MemoryPoolRecord>(db_, " ORDER BY ts_ns, id");
}

StatusOr<std::vector<UmRecord>> TraceReader::UmEvents() const {
  if (!TableExists(db_, "um")) return std::vector<UmRecord>{};  // traces before schema 1.4
  return LoadRecords<UmRecord>(db_, " ORDER BY start_ns, id");
}

StatusOr<std::vector<GpuMetricRecord>> TraceReader::GpuMetrics() const {
  if (!TableExists(db_, "gpu_metrics")) return std::vector<GpuMetricRecord>{};  // before 1.8
  return LoadRecords<GpuMetricRecord>(db_, " ORDER BY device, metric_id, start_ns, id");
}

StatusOr<std::vector<NvtxRecord>> TraceReader::Nvtx() const {
  constexpr int kEnd = RecordColumnIndex<NvtxRecord>("end_ns");
  constexpr int kUnclosed = RecordColumnIndex<NvtxRecord>("unclosed");
  static_assert(kEnd >= 0 && kUnclosed >= 0, "nvtx columns renamed");
  return LoadRecords<NvtxRecord>(
      db_, " ORDER BY start_ns, id", [](const Statement& s, NvtxRecord& r) {
        // -1: not ended. The collector writes a range still open when the
        // process died (or recording stopped) with end_ns = the trace's end
        // and unclosed = 1 for SQL readers; the model sees it as never ended,
        // as in a cut-off trace.
        r.end_ns = (r.end_ns == -1 || s.Int(kUnclosed) != 0) ? -1 : ReadTime(s.Int(kEnd));
      });
}

StatusOr<std::vector<OverheadRecord>> TraceReader::Overheads() const {
  return LoadRecords<OverheadRecord>(db_, " ORDER BY start_ns, id");
}

StatusOr<std::vector<DeviceRecord>> TraceReader::Devices() const {
  return LoadRecords<DeviceRecord>(db_, " ORDER BY id");
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
