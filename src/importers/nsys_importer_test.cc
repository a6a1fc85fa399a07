// The nsys importer on exports built in the test from NVIDIA's documented
// schema: enum values are translated by name through the ENUM_* tables, and
// CUPTI's numbering is assumed without them; columns may be missing.
#include "importers/nsys_importer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "importers/import.h"
#include "store/sqlite_util.h"

namespace stepscope {
namespace {

class NsysImport : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = "/tmp/stepscope_nsys_" + std::to_string(getpid()) + "_" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
    in_ = base + ".in.sqlite";
    out_ = base + ".out.sqlite";
    unlink(in_.c_str());
  }
  void TearDown() override {
    if (db_) sqlite3_close(db_);
    unlink(in_.c_str());
    unlink(out_.c_str());
  }
  void Build(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(in_.c_str(), &db), SQLITE_OK);
    Status st = Exec(db, sql);
    sqlite3_close(db);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  Status Import() {
    Status st = ImportTrace(in_, out_, ImportFormat::kAuto, &result_);
    if (st.ok()) {
      EXPECT_EQ(sqlite3_open_v2(out_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    }
    return st;
  }
  std::string Row(const std::string& sql) {
    auto st = Prepare(db_, sql);
    EXPECT_TRUE(st.ok()) << sql;
    std::string out;
    while (st.ok() && st->Step()) {
      for (int i = 0; i < st->ColumnCount(); ++i) out += (i ? "|" : "") + std::string(st->Text(i));
      out += ";";
    }
    return out;
  }
  std::string in_, out_;
  ImportResult result_;
  sqlite3* db_ = nullptr;
};

TEST(NsysIds, GlobalTidBitLayout) {
  // NVIDIA: PID = globalTid / 0x1000000 % 0x1000000, TID = globalTid % 0x1000000.
  int64_t g = (int64_t{1} << 56) | (int64_t{4242} << 24) | 4243;
  EXPECT_EQ(NsysPid(g), 4242u);
  EXPECT_EQ(NsysTid(g), 4243u);
  EXPECT_EQ(NsysPid(int64_t{0xFFFFFF} << 24), 0xFFFFFFu);
}

TEST_F(NsysImport, EnumsAreTranslatedByName) {
  // Deliberately not CUPTI's numbering: 7 = HtoD, 9 = pinned, 8 = device, 5 = stream sync.
  Build(R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
    CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
    CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
    CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
    INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (7, 'CUDA_MEMCPY_OPER_HTOD', 'Host-to-Device');
    INSERT INTO ENUM_CUDA_MEM_KIND VALUES (9, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
      (8, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'), (4, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static');
    INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (5, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE', 'Stream sync');
    INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (159, 'NvtxPushPopRange', 'NVTX PushPop Range');
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, contextId INT, streamId INT,
      correlationId INT, globalPid INT, bytes INT, copyKind INT, srcKind INT, dstKind INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10, 20, 0, 1, 7, 3, 0, 64, 7, 9, 8);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT, end INT, deviceId INT, contextId INT, streamId INT,
      correlationId INT, globalPid INT, value INT, bytes INT, memKind INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (30, 40, 0, 1, 7, 4, 0, 0, 16, 4);
    CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INT, end INT, deviceId INT, contextId INT,
      streamId INT, correlationId INT, globalPid INT, syncType INT, eventId INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (50, 60, 0, 1, 7, 5, 0, 5, 0);
    CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, text TEXT, globalTid INT);
    INSERT INTO NVTX_EVENTS VALUES (0, 100, 159, 'outer', 16777217), (10, 20, 159, 'inner', 16777217),
      (0, 100, 59, 'type 59 is not a range here', 16777217);
  )");
  ASSERT_TRUE(Import().ok());
  EXPECT_EQ(Row("SELECT copy_kind, src_kind, dst_kind FROM memcpy"), "1|2|3;");
  EXPECT_EQ(Row("SELECT memory_kind FROM memset"), "6;");
  EXPECT_EQ(Row("SELECT type FROM sync"), "3;");
  EXPECT_EQ(Row("SELECT name, tid, depth FROM nvtx_v ORDER BY start_ns"), "outer|1|0;inner|1|1;");
  EXPECT_EQ(result_.stats.Get("nsys_nvtx_other_events"), 1);
  EXPECT_EQ(Row("SELECT value FROM meta WHERE key = 'pid'"), "1;");
}

TEST_F(NsysImport, WithoutEnumTablesCuptiNumberingAndMissingColumnsReadAsZero) {
  Build(R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel_v7000'), (3, 'cuLaunchKernel');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, demangledName INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5, 9, 1), (20, 10, 1), (NULL, 3, 1);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, copyKind INT, srcKind INT, dstKind INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1, 2, 8, 3, 3), (3, 4, 99, 1, 2);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, globalTid INT, correlationId INT, nameId INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 16777222, 1, 2), (3, 4, 16777222, 2, 77);
    CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (start INT, end INT, globalTid INT, correlationId INT, nameId INT);
    INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (5, 6, 16777222, 3, 3);
  )");
  ASSERT_TRUE(Import().ok());
  EXPECT_EQ(Row("SELECT start_ns, end_ns, grid_x, name FROM kernels_v"), "5|9|0|k;");
  EXPECT_EQ(result_.stats.Get("import_malformed_bad_time"), 2);
  EXPECT_EQ(Row("SELECT copy_kind, src_kind, dst_kind FROM memcpy ORDER BY id"), "8|3|3;0|1|2;");
  EXPECT_EQ(Row("SELECT tid, domain, name FROM api_v ORDER BY id"),
            "6|0|cudaLaunchKernel;6|0|;6|1|cuLaunchKernel;");
  EXPECT_EQ(Row("SELECT tid FROM threads"), "6;");
}

TEST_F(NsysImport, AnSqliteFileThatIsNotAnExportIsRejected) {
  Build("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); CREATE TABLE other (x INT);");
  Status st = Import();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_NE(st.message().find(in_ + ": sqlite_master: no StringIds and CUPTI_ACTIVITY_KIND_*"),
            std::string::npos)
      << st.message();
  EXPECT_NE(access(in_.c_str(), F_OK), -1);
  EXPECT_EQ(access(out_.c_str(), F_OK), -1);  // nothing left behind
}

}  // namespace
}  // namespace stepscope
