// The Kineto importer against the real torch.profiler trace in ../shared
// (skipped with a message when it is absent), checked against the counts in
// shared/README.md, which were computed independently with Python's json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "importers/import.h"
#include "importers/input_stream.h"
#include "importers/json_tokenizer.h"
#include "store/sqlite_util.h"

namespace stepscope {
namespace {

std::string SampleTrace() {
  const char* src = std::getenv("STEPSCOPE_SOURCE_DIR");
  std::string base = src ? src : ".";
  for (const std::string& dir : {base + "/../shared", base + "/../../shared"}) {
    std::string p = dir + "/data/kineto_gpt_small_3steps.json.gz";
    if (FileExists(p)) return p;
  }
  return "";
}

int64_t Query(sqlite3* db, const std::string& sql) {
  auto st = Prepare(db, sql);
  EXPECT_TRUE(st.ok()) << sql;
  if (!st.ok() || !st->Step()) return -1;
  return st->Int(0);
}

class KinetoSample : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = SampleTrace();
    if (path_.empty())
      GTEST_SKIP() << "../shared/data/kineto_gpt_small_3steps.json.gz not found; skipping";
    out_ = "/tmp/stepscope_kineto_sample_" + std::to_string(getpid()) + ".sqlite";
    Status st = ImportTrace(path_, out_, ImportFormat::kAuto, &result_);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(sqlite3_open_v2(out_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  void TearDown() override {
    if (db_) sqlite3_close(db_);
    if (!out_.empty()) unlink(out_.c_str());
  }
  std::string path_, out_;
  ImportResult result_;
  sqlite3* db_ = nullptr;
};

TEST_F(KinetoSample, ReproducesTheReadmeCountsExactly) {
  const ImportStats& s = result_.stats;
  EXPECT_EQ(result_.format, ImportFormat::kKinetoJson);
  EXPECT_TRUE(result_.gzip);
  EXPECT_EQ(s.Get("kineto_trace_events"), 28857);
  EXPECT_EQ(s.Get("kineto_kernel_events"), 2142);
  EXPECT_EQ(s.Get("kineto_gpu_memcpy_events"), 3);
  EXPECT_EQ(s.Get("kineto_gpu_memset_events"), 324);
  EXPECT_EQ(s.Get("kineto_cuda_runtime_events"), 2288);
  EXPECT_EQ(s.Get("kineto_cuda_driver_events"), 585);
  EXPECT_EQ(s.Get("kineto_cpu_op_events"), 15204);
  EXPECT_EQ(s.Get("kineto_ac2g_events"), 5342);
  EXPECT_EQ(s.Get("import_malformed_events"), 0);
  EXPECT_EQ(s.Get("import_unknown_events"), 0);
  EXPECT_EQ(s.Get("import_kernel_time_ns"), 35930316);  // 35,930.316 us
  // ... and the rows in the trace say the same.
  EXPECT_EQ(Query(db_, "SELECT count(*) FROM kernels"), 2142);
  EXPECT_EQ(Query(db_, "SELECT sum(end_ns - start_ns) FROM kernels"), 35930316);
  EXPECT_EQ(Query(db_, "SELECT count(*) FROM memcpy"), 3);
  EXPECT_EQ(Query(db_, "SELECT count(*) FROM memset"), 324);
  EXPECT_EQ(Query(db_, "SELECT count(*) FROM api WHERE domain = 0"), 2288);
  EXPECT_EQ(Query(db_, "SELECT count(*) FROM api WHERE domain = 1"), 585);
  EXPECT_EQ(Query(db_, "SELECT count(*) FROM nvtx_v WHERE domain = 'cpu_op'"), 15204);
  EXPECT_EQ(
      Query(db_, "SELECT count(*) FROM stats WHERE name = 'kineto_ac2g_events' AND value = 5342"),
      1);
  // Every GPU activity's launch is in the trace (the ac2g links, via correlation).
  EXPECT_EQ(Query(db_,
                  "SELECT count(*) FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM api a WHERE "
                  "a.correlation = k.correlation)"),
            0);
  EXPECT_EQ(Query(db_, "SELECT value FROM meta WHERE key = 'finalized'"), 1);
  EXPECT_EQ(Query(db_, "SELECT value FROM meta WHERE key = 'pid'"), 681);
  EXPECT_EQ(Query(db_, "SELECT sm_count FROM devices WHERE id = 0"), 132);
}

// Depth from the streaming stack (plus the fix-up pass) equals a brute-force
// count of enclosing ranges on the same thread.
TEST_F(KinetoSample, DepthMatchesBruteForceNesting) {
  auto st = Prepare(
      db_,
      "SELECT n.id, n.tid, n.start_ns, n.end_ns, n.depth FROM nvtx_v n WHERE domain IN "
      "('cpu_op','user_annotation','python_function') ORDER BY tid, start_ns, end_ns DESC, id");
  ASSERT_TRUE(st.ok());
  struct R {
    int64_t id, tid, start, end, depth;
  };
  std::map<int64_t, std::vector<R>> by_tid;
  while (st->Step())
    by_tid[st->Int(1)].push_back({st->Int(0), st->Int(1), st->Int(2), st->Int(3), st->Int(4)});
  size_t checked = 0;
  for (auto& [tid, rows] : by_tid) {
    for (size_t i = 0; i < rows.size(); ++i) {
      int64_t d = 0;
      // rows are sorted: every enclosing range comes before row i.
      for (size_t j = 0; j < i; ++j) {
        if (rows[j].start <= rows[i].start && rows[i].start < rows[j].end &&
            rows[i].end <= rows[j].end)
          ++d;
      }
      ASSERT_EQ(rows[i].depth, std::min<int64_t>(d, 255)) << "nvtx id " << rows[i].id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 15204u + 9u);
  EXPECT_GT(Query(db_, "SELECT max(depth) FROM nvtx"), 3);
}

// The tokenizer hands out the same events whatever the chunk boundaries.
TEST_F(KinetoSample, TokenizerIsChunkBoundaryInvariant) {
  struct Digest : ChromeTraceTokenizer::Sink {
    uint64_t h = 1469598103934665603ull, n = 0;
    void Mix(uint64_t v) { h = (h ^ v) * 1099511628211ull; }
    Status OnEvent(const JsonValueParser& e, uint64_t offset) override {
      ++n;
      Mix(offset);
      Mix(e.size());
      Mix(e.root().text.size());
      return OkStatus();
    }
    Status OnTopLevel(std::string_view key, const JsonValueParser& v, uint64_t offset) override {
      Mix(offset);
      Mix(key.size());
      return OkStatus();
    }
  };
  auto in = InputStream::Open(path_);
  ASSERT_TRUE(in.ok());
  std::string data;
  std::vector<char> buf(1 << 20);
  while (true) {
    auto n = (*in)->Read(buf.data(), buf.size());
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    data.append(buf.data(), *n);
  }
  std::vector<uint64_t> digests;
  for (size_t chunk : {data.size(), size_t{1} << 20, size_t{65521}, size_t{13}, size_t{1}}) {
    Digest d;
    ChromeTraceTokenizer t(&d);
    for (size_t i = 0; i < data.size(); i += chunk) {
      ASSERT_TRUE(t.Feed(data.data() + i, std::min(chunk, data.size() - i)).ok());
    }
    ASSERT_TRUE(t.Finish().ok());
    EXPECT_EQ(d.n, 28857u) << chunk;
    digests.push_back(d.h);
  }
  for (uint64_t h : digests) EXPECT_EQ(h, digests[0]);
}

// Kineto before PyTorch 1.10: Kernel/Runtime/Memcpy/Memset/Operator and
// "async" flows; negative (int32-wrapped) thread ids; is_async from the
// issuing call: async, synchronous, and no call (unknown).
TEST(KinetoImport, OldCategoryNamesAsyncFromTheIssuingCall) {
  const std::string in = "/tmp/stepscope_kineto_old_" + std::to_string(getpid()) + ".json";
  const std::string out = in + ".sqlite";
  {
    FILE* f = std::fopen(in.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(R"J({"traceEvents": [
 {"ph": "X", "cat": "Operator", "name": "ProfilerStep#1", "pid": 5, "tid": "5", "ts": 100, "dur": 50},
 {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": -549452224, "ts": 101, "dur": 2, "args": {"correlation": 1, "cbid": 211}},
 {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 110, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1}},
 {"ph": "s", "id": 1, "pid": 5, "tid": 5, "ts": 101, "cat": "async", "name": "launch"},
 {"ph": "f", "id": 1, "pid": 0, "tid": "stream 7", "ts": 110, "cat": "async", "name": "launch", "bp": "e"},
 {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 5, "tid": "5", "ts": 103, "dur": 2, "args": {"correlation": 2}},
 {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": "stream 7", "ts": 116, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": 2, "bytes": 64}},
 {"ph": "X", "cat": "Runtime", "name": "cudaMemset", "pid": 5, "tid": "5", "ts": 105, "dur": 20, "args": {"correlation": 3}},
 {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 120, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 3}},
 {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": "stream 7", "ts": 122, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 4}},
 {"ph": "X", "cat": "Mystery", "name": "m", "pid": 0, "tid": 1, "ts": 1, "dur": 1}
]})J",
               f);
    std::fclose(f);
  }
  ImportResult r;
  Status st = ImportTrace(in, out, ImportFormat::kAuto, &r);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(r.stats.Get("kineto_kernel_events"), 1);
  EXPECT_EQ(r.stats.Get("kineto_cuda_runtime_events"), 3);
  EXPECT_EQ(r.stats.Get("kineto_cpu_op_events"), 1);
  EXPECT_EQ(r.stats.Get("kineto_ac2g_linked_gpu"), 1);
  EXPECT_EQ(r.stats.Get("import_malformed_events"), 0);
  EXPECT_EQ(r.stats.Get("import_copies_async"), 1);
  EXPECT_EQ(r.stats.Get("import_copies_sync"), 1);
  EXPECT_EQ(r.stats.Get("import_copies_async_unknown"), 1);
  // Warnings: the unknown category and the copy without its call.
  ASSERT_EQ(r.stats.warnings().size(), 2u);
  EXPECT_NE(r.stats.warnings()[0].find("'Mystery'"), std::string::npos) << r.stats.warnings()[0];
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(out.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(Query(db, "SELECT is_async FROM memcpy WHERE correlation = 2"), 1);
  EXPECT_EQ(Query(db, "SELECT is_async IS NULL FROM memcpy WHERE correlation = 4"), 1);
  EXPECT_EQ(Query(db, "SELECT is_async FROM memset"), 0);
  EXPECT_EQ(Query(db, "SELECT tid FROM api WHERE correlation = 1"), 3745515072);
  sqlite3_close(db);
  unlink(in.c_str());
  unlink(out.c_str());
}

// A file with events but no GPU activity imports, with a loud warning.
TEST(KinetoImport, NoGpuActivityIsAWarning) {
  const std::string in = "/tmp/stepscope_kineto_nogpu_" + std::to_string(getpid()) + ".json";
  const std::string out = in + ".sqlite";
  FILE* f = std::fopen(in.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      R"({"traceEvents": [{"ph": "X", "cat": "GpuKernel", "name": "k", "pid": 0, "tid": 1, "ts": 1, "dur": 1}]})",
      f);
  std::fclose(f);
  ImportResult r;
  ASSERT_TRUE(ImportTrace(in, out, ImportFormat::kAuto, &r).ok());
  ASSERT_EQ(r.stats.warnings().size(), 2u);
  EXPECT_NE(r.stats.warnings()[1].find("no GPU activity imported"), std::string::npos);
  unlink(in.c_str());
  unlink(out.c_str());
}

}  // namespace
}  // namespace stepscope
