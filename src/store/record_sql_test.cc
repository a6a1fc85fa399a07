// Every record's column list (format/record_fields.h) agrees with the schema,
// the writer's insert and the reader's select, and covers every member of the
// record but the ones known to stay out of the trace: a field declared in one
// place and not another fails here.
#include "store/record_sql.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <tuple>

#include "store/trace_reader.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

std::string TempPath(const char* name) {
  std::string p = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".sqlite";
  ::unlink(p.c_str());
  return p;
}

// How each record reaches the trace.
void Add(TraceWriter& w, const KernelRecord& r) { w.AddKernel(r); }
void Add(TraceWriter& w, const MemcpyRecord& r) { w.AddMemcpy(r); }
void Add(TraceWriter& w, const MemsetRecord& r) { w.AddMemset(r); }
void Add(TraceWriter& w, const ApiRecord& r) { w.AddApi(r); }
void Add(TraceWriter& w, const SyncRecord& r) { w.AddSync(r); }
void Add(TraceWriter& w, const MemoryRecord& r) { w.AddMemory(r); }
void Add(TraceWriter& w, const MemoryPoolRecord& r) { w.AddMemoryPool(r); }
void Add(TraceWriter& w, const UmRecord& r) { w.AddUm(r); }
void Add(TraceWriter& w, const NvtxRecord& r) { w.AddNvtx(r); }
void Add(TraceWriter& w, const OverheadRecord& r) { w.AddOverhead(r); }
void Add(TraceWriter& w, const DeviceRecord& r) { w.AddDevice(r); }
void Add(TraceWriter& w, const OomRecord& r) { w.AddOom(r, 3); }
void Add(TraceWriter& w, const HostAllocRecord& r) { w.AddHostAlloc(r); }
void Add(TraceWriter& w, const FrameRecord& r) { w.AddFrame(r); }
void Add(TraceWriter& w, const CallsiteRecord& r) { w.AddCallsite(r); }
void Add(TraceWriter& w, const SampleRecord& r) { w.AddSample(r); }
void Add(TraceWriter& w, const NativeSampleRecord& r) { w.AddNativeSample(r); }
void Add(TraceWriter& w, const SchedRecord& r) { w.AddSched(r); }
void Add(TraceWriter& w, const OsrtRecord& r) { w.AddOsrt(r); }
void Add(TraceWriter& w, const ApiCallsiteRecord& r) { w.AddApiCallsite(r); }
void Add(TraceWriter& w, const GpuMetricRecord& r) { w.AddGpuMetric(r); }

// Bytes of each record that no column holds: reserved fields, padding, and members the
// trace does not keep (OomRecord.cbid and .domain: the api row has them). A
// new member without a column changes these.
template <typename R>
constexpr size_t kUnstoredBytes =
    0;  // KernelRecord, OverheadRecord, ApiCallsiteRecord, GpuMetricRecord
template <>
constexpr size_t kUnstoredBytes<MemcpyRecord> = 4;  // reserved
template <>
constexpr size_t kUnstoredBytes<MemsetRecord> = 2 + 4;  // reserved, padding
template <>
constexpr size_t kUnstoredBytes<ApiRecord> = 7;  // reserved[3], 4 bytes of tail padding
template <>
constexpr size_t kUnstoredBytes<SyncRecord> = 3;  // reserved[3]
template <>
constexpr size_t kUnstoredBytes<MemoryRecord> = 5;  // reserved, reserved2
template <>
constexpr size_t kUnstoredBytes<MemoryPoolRecord> = 2;  // reserved
template <>
constexpr size_t kUnstoredBytes<UmRecord> = 3;  // reserved[3]
template <>
constexpr size_t kUnstoredBytes<NvtxRecord> = 6;  // reserved, reserved2
template <>
constexpr size_t kUnstoredBytes<DeviceRecord> = 4 + 4;  // reserved, padding
template <>
constexpr size_t kUnstoredBytes<OomRecord> = 4 + 1 + 2;  // cbid, domain, reserved
template <>
constexpr size_t kUnstoredBytes<HostAllocRecord> = 2;  // reserved
template <>
constexpr size_t kUnstoredBytes<FrameRecord> = 3;  // reserved[3]
template <>
constexpr size_t kUnstoredBytes<CallsiteRecord> = 2;  // reserved
template <>
constexpr size_t kUnstoredBytes<SampleRecord> = 3;  // reserved[3]
template <>
constexpr size_t kUnstoredBytes<SchedRecord> = 7;  // reserved[7]
template <>
constexpr size_t kUnstoredBytes<OsrtRecord> = 7;  // reserved[7]

// A record whose every stored member holds a value of its own (its column's
// position + 1, made valid for the reader's sanitizing).
template <typename R>
R Distinct() {
  R r{};
  int64_t i = 0;
  record_sql::ForEachField<R>([&](const auto& f) {
    ++i;
    if constexpr (!record_sql::kIsExtra<decltype(f)>) {
      auto& v = r.*(f.member);
      using M = std::remove_reference_t<decltype(v)>;
      if constexpr (std::is_array_v<M>) {
        std::snprintf(v, sizeof(v), "GPU-%d", static_cast<int>(i));
      } else {
        v = static_cast<M>(f.opts.read ? f.opts.read(i) : i);
      }
    }
  });
  return r;
}

template <typename R>
void CheckRecord(TraceWriter& w, sqlite3* db) {
  SCOPED_TRACE(RecordFormat<R>::kTable);
  const std::vector<std::string> cols = RecordColumnNames<R>();
  const bool writes_id = !cols.empty() && cols[0] == "id";

  // The schema's table has exactly these columns, in this order.
  const TableDef* t = FindTable(RecordFormat<R>::kTable);
  ASSERT_NE(t, nullptr);
  std::vector<std::string> schema;
  if (t->has_integer_pk && writes_id) schema.emplace_back("id");
  for (const ColumnDef& c : t->columns) schema.emplace_back(c.name);
  EXPECT_EQ(schema, cols);
  // ... and so has the table the writer created.
  std::vector<std::string> created;
  {
    auto st = Prepare(db, "SELECT name FROM pragma_table_info(?)");
    ASSERT_TRUE(st.ok());
    st->BindText(1, RecordFormat<R>::kTable);
    while (st->Step()) created.emplace_back(st->Text(0));
  }
  if (t->has_integer_pk && !writes_id) created.erase(created.begin());
  EXPECT_EQ(created, cols);

  // One placeholder per column in the insert; the select returns the columns in order.
  auto ins = Prepare(db, RecordInsertSql<R>());
  ASSERT_TRUE(ins.ok()) << ins.status().message();
  EXPECT_EQ(sqlite3_bind_parameter_count(ins->raw()), static_cast<int>(cols.size()));
  auto sel = Prepare(db, RecordSelectSql<R>());
  ASSERT_TRUE(sel.ok()) << sel.status().message();
  ASSERT_EQ(sel->ColumnCount(), static_cast<int>(cols.size()));
  for (int i = 0; i < sel->ColumnCount(); ++i) EXPECT_EQ(sel->ColumnName(i), cols[i]);
  for (size_t i = 0; i < cols.size(); ++i) {
    EXPECT_EQ(RecordColumnIndex<R>(cols[i]), static_cast<int>(i));
  }

  // Every member is stored but the known unstored bytes.
  size_t stored = 0;
  record_sql::ForEachField<R>([&](const auto& f) {
    if constexpr (!record_sql::kIsExtra<decltype(f)>) stored += sizeof(R{}.*(f.member));
  });
  EXPECT_EQ(sizeof(R) - stored, kUnstoredBytes<R>);

  Add(w, Distinct<R>());
}

template <typename R>
void CheckRoundTrip(sqlite3* db) {
  SCOPED_TRACE(RecordFormat<R>::kTable);
  auto rows = LoadRecords<R>(db, "");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  const R want = Distinct<R>();
  const R& got = (*rows)[0];
  record_sql::ForEachField<R>([&](const auto& f) {
    if constexpr (!record_sql::kIsExtra<decltype(f)>) {
      EXPECT_EQ(std::memcmp(&(got.*(f.member)), &(want.*(f.member)), sizeof(want.*(f.member))), 0)
          << f.column;
    }
  });
}

using AllRecords =
    std::tuple<KernelRecord, MemcpyRecord, MemsetRecord, ApiRecord, SyncRecord, MemoryRecord,
               MemoryPoolRecord, UmRecord, NvtxRecord, OverheadRecord, DeviceRecord, OomRecord,
               HostAllocRecord, FrameRecord, CallsiteRecord, SampleRecord, NativeSampleRecord,
               SchedRecord, OsrtRecord, ApiCallsiteRecord, GpuMetricRecord>;

TEST(RecordSql, SchemaInsertAndSelectAgreeForEveryRecord) {
  const std::string path = TempPath("record_sql");
  {
    auto w = TraceWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    std::apply([&](auto... r) { (CheckRecord<decltype(r)>(**w, (*w)->db()), ...); }, AllRecords{});
    ASSERT_TRUE((*w)->Finalize().ok());
  }
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::apply([&](auto... r) { (CheckRoundTrip<decltype(r)>((*reader)->db()), ...); }, AllRecords{});
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace stepscope
