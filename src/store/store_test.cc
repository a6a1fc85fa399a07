#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "store/schema.h"
#include "store/trace_reader.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

std::string TempPath(const char* name) {
  std::string p = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".sqlite";
  ::unlink(p.c_str());
  return p;
}

TEST(Store, RoundTripEveryRecordKind) {
  std::string path = TempPath("roundtrip");
  {
    auto w = TraceWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    TraceWriter& tw = **w;
    KernelRecord k{};
    k.start_ns = 1000;
    k.end_ns = 3000;
    k.device = 1;
    k.stream = 7;
    k.correlation = 42;
    k.name = tw.Intern("void gemm<128>(float*)");
    k.mangled_name = tw.Intern("_Z4gemmILi128EEvPf");
    k.grid_x = 132;
    k.block_x = 256;
    k.registers_per_thread = 168;
    k.dynamic_smem_bytes = 98304;
    k.graph_node_id = 1ull << 40;
    tw.AddKernel(k);
    MemcpyRecord m{};
    m.start_ns = 500;
    m.end_ns = 900;
    m.bytes = 1ull << 33;  // > 4 GiB survives
    m.copy_kind = CopyKind::kHostToDevice;
    m.src_kind = MemoryKind::kPageable;
    m.dst_kind = MemoryKind::kDevice;
    tw.AddMemcpy(m);
    ApiRecord a{};
    a.start_ns = 400;
    a.end_ns = 450;
    a.tid = 1234;
    a.correlation = 42;
    a.name = tw.Intern("cudaLaunchKernel");
    a.domain = ApiDomain::kRuntime;
    a.return_code = 0;
    tw.AddApi(a);
    NvtxRecord n{};
    n.start_ns = 100;
    n.end_ns = 5000;
    n.tid = 1234;
    n.end_tid = 1234;
    n.name = tw.Intern("step 3");
    n.kind = NvtxKind::kPushPop;
    tw.AddNvtx(n);
    MemoryRecord mem{};
    mem.ts_ns = 50;
    mem.op = MemoryOp::kAlloc;
    mem.address = 0x7f0000000000ull;
    mem.bytes = 2ull << 30;
    mem.memory_kind = MemoryKind::kDevice;
    tw.AddMemory(mem);
    DeviceRecord d{};
    d.id = 1;
    d.name = tw.Intern("NVIDIA H200");
    std::snprintf(d.uuid, sizeof(d.uuid), "GPU-1234");
    d.sm_count = 132;
    d.global_memory_bytes = 150ull << 30;
    tw.AddDevice(d);
    tw.SetThreadName(1234, tw.Intern("python3"));
    OverheadRecord o{};
    o.start_ns = 10;
    o.end_ns = 35;
    o.tid = 1234;
    o.kind = tw.Intern("cupti_buffer_flush");
    tw.AddOverhead(o);
    tw.SetMeta("pid", "99");
    tw.SetStat("cupti_dropped_records", 3, "records CUPTI dropped");
    EXPECT_EQ(tw.Intern("step 3"), n.name);  // interned once
    ASSERT_TRUE(tw.Finalize().ok());
  }
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  TraceReader& tr = **r;
  EXPECT_TRUE(tr.finalized());
  EXPECT_EQ(tr.Meta("pid"), "99");
  EXPECT_EQ(tr.Stat("cupti_dropped_records"), 3);
  auto kernels = tr.Kernels();
  ASSERT_TRUE(kernels.ok());
  ASSERT_EQ(kernels->size(), 1u);
  const KernelRecord& k = (*kernels)[0];
  EXPECT_EQ(tr.String(k.name), "void gemm<128>(float*)");
  EXPECT_EQ(k.end_ns - k.start_ns, 2000);
  EXPECT_EQ(k.dynamic_smem_bytes, 98304);
  EXPECT_EQ(k.graph_node_id, 1ull << 40);
  auto memcpys = tr.Memcpys();
  ASSERT_EQ(memcpys->size(), 1u);
  EXPECT_EQ((*memcpys)[0].bytes, 1ull << 33);
  EXPECT_EQ((*memcpys)[0].src_kind, MemoryKind::kPageable);
  auto apis = tr.Apis();
  ASSERT_EQ(apis->size(), 1u);
  EXPECT_EQ(tr.String((*apis)[0].name), "cudaLaunchKernel");
  EXPECT_EQ((*apis)[0].correlation, k.correlation);
  auto nvtx = tr.Nvtx();
  ASSERT_EQ(nvtx->size(), 1u);
  EXPECT_EQ(tr.String((*nvtx)[0].name), "step 3");
  auto devices = tr.Devices();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_STREQ((*devices)[0].uuid, "GPU-1234");
  auto threads = tr.ThreadNames();
  EXPECT_EQ((*threads)[1234], "python3");
  auto overheads = tr.Overheads();
  ASSERT_EQ(overheads->size(), 1u);
  EXPECT_EQ(tr.String((*overheads)[0].kind), "cupti_buffer_flush");
  EXPECT_EQ((*overheads)[0].end_ns - (*overheads)[0].start_ns, 25);
  auto mem = tr.MemoryEvents();
  ASSERT_EQ(mem->size(), 1u);
  EXPECT_EQ((*mem)[0].address, 0x7f0000000000ull);
  ::unlink(path.c_str());
}

TEST(Store, CommittedRowsSurviveWithoutFinalize) {
  std::string path = TempPath("crash");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto w = TraceWriter::Create(path);
    if (!w.ok()) _exit(3);
    KernelRecord k{};
    k.name = (*w)->Intern("committed");
    (*w)->AddKernel(k);
    if (!(*w)->Commit().ok()) _exit(4);
    k.name = (*w)->Intern("uncommitted");
    (*w)->AddKernel(k);
    _exit(0);  // like a kill: no destructor, no finalize
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE((*r)->finalized());
  auto kernels = (*r)->Kernels();
  ASSERT_TRUE(kernels.ok());
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ((*r)->String((*kernels)[0].name), "committed");
  auto check = (*r)->Query("PRAGMA integrity_check");
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE(check->Step());
  EXPECT_EQ(check->Text(0), "ok");
  ::unlink(path.c_str());
  ::unlink((path + "-wal").c_str());
  ::unlink((path + "-shm").c_str());
}

TEST(Store, OpenRejectsNonTraces) {
  std::string empty = TempPath("empty");
  { std::ofstream(empty).flush(); }
  auto r = TraceReader::Open(empty);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("empty file"), std::string::npos);

  std::string json = TempPath("json");
  { std::ofstream(json) << "{\"traceEvents\": []}"; }
  r = TraceReader::Open(json);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an SQLite file"), std::string::npos);

  std::string other = TempPath("other");
  {
    sqlite3* db = nullptr;
    sqlite3_open(other.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE x(a)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  r = TraceReader::Open(other);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a stepscope trace"), std::string::npos);
  r = TraceReader::Open("/nonexistent/x.sqlite");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/x.sqlite"), std::string::npos);
  ::unlink(empty.c_str());
  ::unlink(json.c_str());
  ::unlink(other.c_str());
}

// An older minor version lacks tables and trailing columns added since: the
// reader shows them empty / NULL (0) and leaves the file as it was.
TEST(Store, OlderLayoutReadsAsTheCurrentOne) {
  std::string path = TempPath("older");
  {
    auto w = TraceWriter::Create(path);
    ASSERT_TRUE(w.ok());
    KernelRecord k{};
    k.start_ns = 10;
    k.end_ns = 20;
    k.graph_node_id = 99;
    k.name = (*w)->Intern("gemm");
    (*w)->AddKernel(k);
    ASSERT_TRUE((*w)->Finalize().ok());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "DROP TABLE oom; ALTER TABLE kernels DROP COLUMN graph_node_id; "
                           "UPDATE meta SET value = '0' WHERE key = 'schema_minor'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto kernels = (*r)->Kernels();
  ASSERT_TRUE(kernels.ok()) << kernels.status().message();
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ((*kernels)[0].graph_node_id, 0u);
  EXPECT_EQ((*r)->String((*kernels)[0].name), "gemm");
  auto oom = (*r)->Query("SELECT COUNT(*) FROM oom");
  ASSERT_TRUE(oom.ok());
  ASSERT_TRUE(oom->Step());
  EXPECT_EQ(oom->Int(0), 0);
  r->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  {
    auto still = Prepare(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'oom'");
    ASSERT_TRUE(still.ok());
    ASSERT_TRUE(still->Step());
    EXPECT_EQ(still->Int(0), 0);  // the file was not modified
  }
  sqlite3_close(db);
}

TEST(Store, NewerMajorVersionIsRefused) {
  std::string path = TempPath("major");
  {
    auto w = TraceWriter::Create(path);
    ASSERT_TRUE(w.ok());
    (*w)->SetMeta("schema_version", "2");
    ASSERT_TRUE((*w)->Finalize().ok());
  }
  auto r = TraceReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(
      r.status().message().find("schema version 2." + std::to_string(kSchemaMinor) + " is newer"),
      std::string::npos)
      << r.status().message();
}

TEST(Store, SchemaDocsMentionEveryTable) {
  std::string md = SchemaMarkdown();
  for (const TableDef& t : SchemaTables()) {
    EXPECT_NE(md.find(std::string("## `") + t.name + "`"), std::string::npos) << t.name;
  }
  EXPECT_NE(SchemaIndexSql().find(
                "CREATE INDEX IF NOT EXISTS kernels_correlation ON kernels(correlation)"),
            std::string::npos);
}

}  // namespace
}  // namespace stepscope
