// HostRows and the sampler's classification, without a process: batches of
// samples and ring records in, trace rows out (read back with SQL).
#include "collector/host_rows.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "capture/shm_ring.h"
#include "collector/host_sampler.h"
#include "common/test_temp_dir.h"
#include "store/sqlite_util.h"
#include "store/trace_reader.h"

namespace stepscope {
namespace {

class HostRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    auto w = TraceWriter::Create(dir_ + "/t.sqlite", TraceWriter::Journal::kRollback);
    ASSERT_TRUE(w.ok());
    w_ = std::move(*w);
  }
  void TearDown() override { w_.reset(); }
  std::vector<std::vector<std::string>> Rows(const std::string& sql) {
    EXPECT_TRUE(w_->Commit().ok());
    auto r = TraceReader::Open(dir_ + "/t.sqlite");
    EXPECT_TRUE(r.ok());
    std::vector<std::vector<std::string>> out;
    auto q = (*r)->Query(sql);
    EXPECT_TRUE(q.ok());
    while (q->Step()) {
      std::vector<std::string> row;
      for (int i = 0; i < q->ColumnCount(); ++i) row.emplace_back(q->Text(i));
      out.push_back(row);
    }
    return out;
  }
  static HostSample S(int64_t ms, uint32_t tid, ThreadState st, const char* wait = "",
                      const char* detail = "", uint32_t stack = 0) {
    HostSample s;
    s.realtime_ns = ms * 1'000'000 + 7;  // the wall offset (7) is taken off
    s.tid = tid;
    s.state = st;
    s.wait_name = wait;
    s.wait_detail = detail;
    s.stack = stack;
    s.cpu_ns = 5;
    return s;
  }
  ScopedTempDir tmp_{"stepscope-hostrows"};
  std::string dir_;
  std::unique_ptr<TraceWriter> w_;
};

TEST_F(HostRowsTest, SamplesStacksAndSampledWaits) {
  HostRows rows(w_.get(), 7, 200);
  HostBatch b;
  b.stacks.push_back({1, {{"<module>", "train.py", 10}, {"main", "train.py", 5}}});
  b.stacks.push_back({2, {{"<module>", "train.py", 10}, {"worker", "train.py", 20}}});
  b.thread_names[11] = "main";
  // tid 11 runs; tid 12 waits on a pipe for 3 samples, runs, sleeps once
  // (one sample: no osrt row), then waits on a futex until the end.
  for (int i = 0; i < 8; ++i) b.samples.push_back(S(i * 5, 11, ThreadState::kRunning, "", "", 1));
  b.samples.push_back(S(0, 12, ThreadState::kBlockedIo, "read", "pipe", 2));
  b.samples.push_back(S(5, 12, ThreadState::kBlockedIo, "read", "pipe", 2));
  b.samples.push_back(S(10, 12, ThreadState::kBlockedIo, "read", "pipe", 2));
  b.samples.push_back(S(15, 12, ThreadState::kRunning, "", "", 2));
  b.samples.push_back(S(20, 12, ThreadState::kSleep, "nanosleep", "", 2));
  b.samples.push_back(S(25, 12, ThreadState::kBlockedLock, "futex", "", 2));
  b.samples.push_back(S(30, 12, ThreadState::kBlockedLock, "futex", "", 2));
  b.samples.push_back(S(35, 12, ThreadState::kBlockedGil, "GIL", "", 2));
  b.samples.push_back(S(40, 12, ThreadState::kBlockedGil, "GIL", "", 2));
  rows.AddBatch(&b);
  rows.Finish(1'000'000'000);
  EXPECT_EQ(rows.samples(), 17u);
  EXPECT_EQ(rows.thread_names().at(11), "main");
  auto r = Rows(
      "SELECT s.tid, s.state, COALESCE(w.value, ''), fn.value, f.line, c.depth FROM samples s "
      "LEFT JOIN strings w ON w.id = s.wait_id JOIN callsites c ON c.id = s.callsite_id "
      "JOIN frames f ON f.id = c.frame_id JOIN strings fn ON fn.id = f.function_id "
      "WHERE s.ts_ns = 0 ORDER BY s.tid");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (std::vector<std::string>{"11", "1", "", "main", "5", "1"}));
  EXPECT_EQ(r[1], (std::vector<std::string>{"12", "5", "read(pipe)", "worker", "20", "1"}));
  // Both stacks share their root frame and callsite.
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM callsites")[0][0], "3");
  auto o = Rows(
      "SELECT o.tid, n.value, d.value, o.start_ns, o.end_ns, o.source, fn.value FROM osrt o "
      "JOIN strings n ON n.id = o.name_id JOIN strings d ON d.id = o.detail_id "
      "JOIN callsites c ON c.id = o.callsite_id JOIN frames f ON f.id = c.frame_id "
      "JOIN strings fn ON fn.id = f.function_id ORDER BY o.start_ns");
  ASSERT_EQ(o.size(), 2u);
  // The pipe wait: first sample 0 ms to the first sample after it, 15 ms.
  EXPECT_EQ(o[0], (std::vector<std::string>{"12", "read", "pipe", "0", "15000000", "2", "worker"}));
  // The futex wait ends at the first sample after it (GIL: not an OS wait).
  EXPECT_EQ(o[1],
            (std::vector<std::string>{"12", "futex", "", "25000000", "35000000", "2", "worker"}));
}

TEST_F(HostRowsTest, WaitStillOpenAtTheEndLastsOnePeriodPastItsLastSample) {
  HostRows rows(w_.get(), 7, 100);
  HostBatch b;
  b.samples.push_back(S(0, 3, ThreadState::kSleep, "nanosleep"));
  b.samples.push_back(S(10, 3, ThreadState::kSleep, "nanosleep"));
  rows.AddBatch(&b);
  rows.Finish(1'000'000'000);
  auto o = Rows("SELECT start_ns, end_ns, callsite_id FROM osrt");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0], (std::vector<std::string>{"0", "20000000", "0"}));
}

TEST_F(HostRowsTest, CudaWaitsFromApiRows) {
  HostRows rows(w_.get(), 7, 200);
  ApiRecord a{};
  a.start_ns = 4'000'000;
  a.end_ns = 31'000'000;
  a.tid = 12;
  a.correlation = 9;
  a.name = w_->Intern("cudaStreamSynchronize");
  w_->AddApi(a);
  a.start_ns = 40'000'000;
  a.end_ns = 41'000'000;
  a.correlation = 10;
  a.name = w_->Intern("cudaLaunchKernel");  // not blocking
  w_->AddApi(a);
  HostBatch b;
  for (int i = 0; i < 10; ++i)
    b.samples.push_back(S(i * 5, 12, ThreadState::kBlockedLock, "futex"));
  rows.AddBatch(&b);
  rows.Finish(1'000'000'000);
  ASSERT_TRUE(rows.MarkCudaWaits().ok());
  auto r = Rows(
      "SELECT s.ts_ns / 1000000, s.state, w.value FROM samples s JOIN strings w ON w.id = "
      "s.wait_id ORDER BY s.ts_ns");
  ASSERT_EQ(r.size(), 10u);
  EXPECT_EQ(r[0], (std::vector<std::string>{"0", "4", "futex"}));
  for (int i = 1; i <= 6; ++i) {
    EXPECT_EQ(r[i],
              (std::vector<std::string>{std::to_string(i * 5), "2", "cudaStreamSynchronize"}));
  }
  EXPECT_EQ(r[7][1], "4");
  // The one futex run overlapping the sync is the sync, not an OS wait.
  EXPECT_EQ(Rows("SELECT COUNT(*) FROM osrt")[0][0], "0");
}

TEST_F(HostRowsTest, PythonStacksAtCudaCalls) {
  HostRows rows(w_.get(), 0, 200);
  auto code = [&](uint64_t addr, const std::string& fn, const std::string& file) {
    std::vector<uint8_t> buf(sizeof(shm::PyCodeName) + fn.size() + file.size());
    shm::PyCodeName c{addr, static_cast<uint32_t>(fn.size()), static_cast<uint32_t>(file.size())};
    std::memcpy(buf.data(), &c, sizeof(c));
    std::memcpy(buf.data() + sizeof(c), fn.data(), fn.size());
    std::memcpy(buf.data() + sizeof(c) + fn.size(), file.data(), file.size());
    rows.AddPyCode(buf.data(), static_cast<uint32_t>(buf.size()));
  };
  code(0x1000, "<module>", "train.py");
  code(0x2000, "train_step", "train.py");
  std::vector<uint8_t> buf(sizeof(shm::PyStackHead) + 2 * sizeof(shm::PyStackFrame));
  shm::PyStackHead h{77, 5, 2, 0};
  shm::PyStackFrame f[2] = {{0x1000, 90, 0}, {0x2000, 41, 0}};
  std::memcpy(buf.data(), &h, sizeof(h));
  std::memcpy(buf.data() + sizeof(h), f, sizeof(f));
  rows.AddPyStack(buf.data(), static_cast<uint32_t>(buf.size()));
  // Truncated or lying records are ignored.
  rows.AddPyStack(buf.data(), 20);
  shm::PyStackHead bad{78, 5, 1000, 0};
  std::memcpy(buf.data(), &bad, sizeof(bad));
  rows.AddPyStack(buf.data(), static_cast<uint32_t>(buf.size()));
  EXPECT_EQ(rows.api_stacks(), 1u);
  auto r = Rows(
      "SELECT a.correlation, fn.value, fl.value, f.line FROM api_callsite a JOIN callsites c ON "
      "c.id = a.callsite_id JOIN frames f ON f.id = c.frame_id JOIN strings fn ON fn.id = "
      "f.function_id JOIN strings fl ON fl.id = f.file_id");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], (std::vector<std::string>{"77", "train_step", "train.py", "41"}));
}

TEST(ClassifyThread, States) {
  auto c = [](char st, const std::string& sc, uint64_t gb = 0, uint64_t ge = 0) {
    return ClassifyThread(st, sc, gb, ge);
  };
  EXPECT_EQ(c('R', "").state, ThreadState::kRunning);
  EXPECT_EQ(c('S', "running").state, ThreadState::kRunning);
  const std::string futex =
      std::to_string(SYS_futex) + " 0x7f0000001000 0x80 0x0 0x0 0x0 0x0 0x1 0x2";
  EXPECT_EQ(c('S', futex).state, ThreadState::kBlockedLock);
  EXPECT_EQ(c('S', futex).name, "futex");
  ThreadWait gil = c('S', futex, 0x7f0000000ff0, 0x7f0000001100);
  EXPECT_EQ(gil.state, ThreadState::kBlockedGil);
  EXPECT_EQ(gil.name, "GIL");
  EXPECT_EQ(c('S', futex, 0x7f0000001001, 0x7f0000001100).state, ThreadState::kBlockedLock);
  ThreadWait rd = c('S', std::to_string(SYS_read) + " 0x5 0x7ffd 0x1 0x0 0x0 0x0 0x1 0x2");
  EXPECT_EQ(rd.state, ThreadState::kBlockedIo);
  EXPECT_EQ(rd.fd, 5);
  EXPECT_EQ(rd.detail, "");
  EXPECT_EQ(
      c('S', std::to_string(SYS_clock_nanosleep) + " 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x1 0x2").state,
      ThreadState::kSleep);
  ThreadWait poll = c('S', std::to_string(SYS_ppoll) + " 0x7ffd0000 0x2 0x0 0x0 0x8 0x0 0x1 0x2");
  EXPECT_EQ(poll.state, ThreadState::kBlockedIo);
  EXPECT_EQ(poll.poll_fds, 0x7ffd0000u);
  // poll with no fds is a sleep (a timeout only).
  EXPECT_EQ(c('S', std::to_string(SYS_ppoll) + " 0x0 0x0 0x7ffd 0x0 0x8 0x0 0x1 0x2").state,
            ThreadState::kSleep);
  EXPECT_EQ(c('D', "-1 0x7ffd 0x4000").state, ThreadState::kBlockedOther);
  EXPECT_EQ(c('D', "-1 0x7ffd 0x4000").name, "uninterruptible");
  EXPECT_EQ(c('T', "").name, "stopped");
  EXPECT_EQ(c('S', "").state, ThreadState::kBlockedOther);  // no permission: blocked, unknown
  EXPECT_EQ(c('S', "999 0x0 0x0 0x0 0x0 0x0 0x0 0x1 0x2").name, "syscall 999");
}

TEST(FdKind, Names) {
  EXPECT_EQ(FdKind("pipe:[1234]"), "pipe");
  EXPECT_EQ(FdKind("socket:[99]"), "socket");
  EXPECT_EQ(FdKind("anon_inode:[eventpoll]"), "eventpoll");
  EXPECT_EQ(FdKind("/dev/shm/torch_1"), "/dev/shm/torch_1");
}

}  // namespace
}  // namespace stepscope
