// The collector against an in-process producer: a thread writes NVTX opens
// and closes, API records and a thread name into a shared region while the
// collector polls it; then the collector finishes as after the process died.
// Also run under ThreadSanitizer (make test-tsan).
#include <cupti.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "capture/clock.h"
#include "capture/cupti_records.h"
#include "capture/handshake.h"
#include "capture/shm_ring.h"
#include "collector/collector_server.h"
#include "collector/host_sampler.h"
#include "collector/trace_collector.h"
#include "common/test_temp_dir.h"
#include "store/trace_reader.h"

namespace stepscope {
namespace {

// The collector samples a traced process only inside its recording windows
// (the tracer's shm::kFlagRecording).
TEST(HostSampler, SamplesOnlyWhileTheTracerRecords) {
  std::atomic<uint32_t> flags{0};
  auto sampler = HostSampler::Start(getpid(), 1000);
  ASSERT_TRUE(sampler);
  sampler->SetGate(&flags, shm::kFlagRecording);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a tick begun before the gate
  HostBatch b;
  sampler->Drain(&b);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sampler->Drain(&b);
  EXPECT_TRUE(b.samples.empty()) << b.samples.size() << " samples outside the window";
  flags = shm::kFlagRecording | shm::kFlagRecordingKnown;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sampler->Drain(&b);
  EXPECT_FALSE(b.samples.empty());
  sampler->Stop();
}

// Removes a test's directory when it goes out of scope (after the collector
// declared below it): these were left in /tmp (issue 36).
class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    shm::Header layout{};
    size_ = shm::Layout(0, 4096, ring_bytes_, &layout);
    memfd_ = shm::CreateRegionFd("test", size_);
    ASSERT_GE(memfd_, 0);
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    ASSERT_NE(p, MAP_FAILED);
    shm::InitHeader(p, layout, getpid());
    h_ = static_cast<shm::Header*>(p);
  }
  void TearDown() override { munmap(h_, size_); }
  HelloFields Hello() {
    return {{"pid", std::to_string(getpid())},
            {"cwd", dir_},
            {"pattern", "t_%q{RANK}"},
            {"env.RANK", "5"},
            {"host", "h"},
            {"start_ns", "1000"},
            {"commit_ms", "10"},
            {"meta.rank", "5"}};
  }
  uint64_t Open(uint64_t id, int64_t t, const std::string& name, uint8_t depth = 0) {
    uint32_t bytes = static_cast<uint32_t>(sizeof(shm::NvtxOpen) + name.size());
    uint8_t* p = nullptr;
    while (!(p = shm::Reserve(h_, shm::Kind::kNvtxOpen, bytes))) std::this_thread::yield();
    shm::NvtxOpen o{};
    o.id = id;
    o.start_ns = t;
    o.tid = 77;
    o.kind = static_cast<uint8_t>(NvtxKind::kPushPop);
    o.depth = depth;
    o.name_len = static_cast<uint32_t>(name.size());
    std::memcpy(p, &o, sizeof(o));
    std::memcpy(p + sizeof(o), name.data(), name.size());
    shm::Publish(p, shm::Kind::kNvtxOpen, bytes);
    return id;
  }
  void Close(uint64_t id, int64_t t) {
    shm::NvtxClose c{id, t, 77, 0};
    while (!shm::Put(h_, shm::Kind::kNvtxClose, &c, sizeof(c))) std::this_thread::yield();
  }

  ScopedTempDir tmp_{"stepscope-collector"};
  std::string dir_;
  uint64_t ring_bytes_ = 1 << 16;
  uint64_t size_ = 0;
  int memfd_ = -1;
  shm::Header* h_ = nullptr;
};

TEST_F(CollectorTest, DrainsWhileTheProducerRunsAndFlagsOpenRanges) {
  auto c = TraceCollector::Start(HelloMessage::FromFields(Hello()), memfd_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)->path(), dir_ + "/t_5.sqlite");
  constexpr int kRanges = 20000;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    for (int i = 0; i < kRanges; ++i) {
      uint64_t id = Open(static_cast<uint64_t>(i + 1), 2000 + i * 10, "op");
      Close(id, 2005 + i * 10);
    }
    Open(kRanges + 1, 500000, "layer_3_fwd");  // never closed
    ApiRecord a{};
    a.start_ns = 3000;
    a.end_ns = 3100;
    while (!shm::Put(h_, shm::Kind::kApi, &a, sizeof(a))) std::this_thread::yield();
    shm::ThreadName t{77, 4};
    uint8_t buf[sizeof(t) + 4];
    std::memcpy(buf, &t, sizeof(t));
    std::memcpy(buf + sizeof(t), "main", 4);
    while (!shm::Put(h_, shm::Kind::kThreadName, buf, sizeof(buf))) std::this_thread::yield();
    done = true;
  });
  while (!done) (*c)->Poll();
  producer.join();
  (*c)->Finish();
  const CollectedTrace& r = (*c)->result();
  EXPECT_TRUE(r.kept);
  EXPECT_FALSE(r.exited);
  EXPECT_TRUE(r.error.empty()) << r.error;

  auto t = TraceReader::Open(r.path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE((*t)->finalized());
  EXPECT_EQ((*t)->Meta("rank", ""), "5");
  EXPECT_EQ((*t)->Meta("process_exit", ""), "died");
  // The producer retries when the ring is full, so every range arrives (the
  // failed attempts are counted as drops).
  EXPECT_GT((*t)->Stat("dropped_nvtx") + (*t)->Stat("dropped_nvtx_end"), -1);
  auto q = (*t)->Query("SELECT COUNT(*), SUM(unclosed) FROM nvtx");
  ASSERT_TRUE(q.ok() && q->Step());
  EXPECT_EQ(q->Int(0), kRanges + 1);
  EXPECT_EQ(q->Int(1), 1);
  auto open = (*t)->Query(
      "SELECT s.value, n.end_ns >= n.start_ns FROM nvtx n JOIN strings s ON s.id = n.name_id "
      "WHERE unclosed = 1");
  ASSERT_TRUE(open.ok() && open->Step());
  EXPECT_EQ(open->Text(0), "layer_3_fwd");
  EXPECT_EQ(open->Int(1), 1);
  auto th = (*t)->Query(
      "SELECT s.value FROM threads t JOIN strings s ON s.id = t.name_id WHERE t.tid = 77");
  ASSERT_TRUE(th.ok() && th->Step());
  EXPECT_EQ(th->Text(0), "main");
  EXPECT_EQ((*t)->Stat("events_api"), 1);
}

// CUPTI buffer slots: the records' name pointers belong to the traced
// process, so the names come from the strings the tracer sent through the ring.
TEST(CollectorSlots, DecodesReadySlotsWithTheNamesSentThroughTheRing) {
  const ScopedTempDir tmp("stepscope-slots");
  const std::string dir = tmp.path();
  shm::Header layout{};
  const uint64_t size = shm::Layout(2, 1 << 16, 1 << 16, &layout);
  int memfd = shm::CreateRegionFd("slots", size);
  ASSERT_GE(memfd, 0);
  auto* h =
      static_cast<shm::Header*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0));
  shm::InitHeader(h, layout, getpid());
  auto c = TraceCollector::Start(
      HelloMessage::FromFields(
          {{"pid", std::to_string(getpid())}, {"cwd", dir}, {"pattern", "slots"}}),
      memfd);
  ASSERT_TRUE(c.ok()) << c.status().message();

  static const char kLocalName[] = "not what the tracer sent";
  uint8_t* slot = shm::SlotBase(h, 1);
  size_t used = 0;
  for (uint32_t i = 0; i < 5; ++i) {
    cupti::Kernel k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000 + i * 100;
    k.end = k.start + 50;
    k.correlationId = i;
    k.name = kLocalName;
    std::memcpy(slot + used, &k, sizeof(k));
    used += (sizeof(k) + 7) & ~size_t{7};
  }
  const std::string sent = "_Z6kernelv";
  std::vector<uint8_t> rec(sizeof(shm::ForeignString) + sent.size());
  shm::ForeignString f{reinterpret_cast<uintptr_t>(kLocalName), static_cast<uint32_t>(sent.size()),
                       0};
  std::memcpy(rec.data(), &f, sizeof(f));
  std::memcpy(rec.data() + sizeof(f), sent.data(), sent.size());
  ASSERT_TRUE(shm::Put(h, shm::Kind::kString, rec.data(), static_cast<uint32_t>(rec.size())));
  h->slots[1].valid.store(used);
  h->slots[1].state.store(shm::kSlotReady);
  (*c)->Poll();
  EXPECT_EQ(h->slots[1].state.load(), shm::kSlotFree);
  EXPECT_EQ(slot[0], 0);  // handed back zeroed
  (*c)->Finish();
  auto t = TraceReader::Open((*c)->result().path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto q = (*t)->Query(
      "SELECT s.value, COUNT(*) FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY 1");
  ASSERT_TRUE(q.ok() && q->Step());
  EXPECT_EQ(q->Text(0), "kernel()");
  EXPECT_EQ(q->Int(1), 5);
  munmap(h, size);
}

// Behind a flood, the collector skips by position, not by age (issue 36):
// the NVTX records of all but the newest 256 KB of what is pending are
// dropped and counted, those 256 KB written. Skipping every record over 25 ms
// old, a collector that took longer than that to get through a ring the
// program kept full found each record stale and wrote nothing for seconds.
class CollectorFloodTest : public CollectorTest {
 protected:
  CollectorFloodTest() { ring_bytes_ = 4 << 20; }
};

TEST_F(CollectorFloodTest, BehindAFloodWritesTheNewestRecords) {
  auto c = TraceCollector::Start(HelloMessage::FromFields(Hello()), memfd_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // 3 MB of ranges (88 bytes each in the ring) that ended 2 s to 0.5 s ago,
  // pending at the collector's first look.
  constexpr int kRanges = 36000;
  const int64_t now = RealtimeNs();
  auto end_of = [now](int i) {
    return now - 2'000'000'000 + int64_t{i} * 1'500'000'000 / kRanges + 5000;
  };
  for (int i = 0; i < kRanges; ++i)
    Close(Open(static_cast<uint64_t>(i + 1), end_of(i) - 5000, "op"), end_of(i));
  ASSERT_GT(h_->write.load(), uint64_t{3} << 20);
  (*c)->Poll();
  (*c)->Finish();
  auto t = TraceReader::Open((*c)->result().path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto q = (*t)->Query("SELECT COUNT(*), MAX(end_ns) FROM nvtx");
  ASSERT_TRUE(q.ok() && q->Step());
  // The first slice (16 KB, ~190 ranges: nothing judged yet), then the newest
  // 256 KB (~3,000 ranges); every other range dropped and counted.
  EXPECT_GT(q->Int(0), 2900);
  EXPECT_LT(q->Int(0), 3400);
  EXPECT_EQ(q->Int(1), end_of(kRanges - 1));
  EXPECT_EQ((*t)->Stat("dropped_nvtx"), kRanges - q->Int(0));
}

TEST_F(CollectorTest, NothingRecordedLeavesNoFile) {
  auto c = TraceCollector::Start(HelloMessage::FromFields(Hello()), memfd_);
  ASSERT_TRUE(c.ok());
  std::string path = (*c)->path();
  (*c)->Finish();
  EXPECT_FALSE((*c)->result().kept);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST_F(CollectorTest, RefusesARegionOfAnotherLayout) {
  h_->version = 99;
  auto c = TraceCollector::Start(HelloMessage::FromFields(Hello()), memfd_);
  EXPECT_FALSE(c.ok());
}

CollectorPolicy TestPolicy(const std::string& pattern = "") {
  CollectorPolicy p;
  p.token = "0123456789abcdef0123456789abcdef";
  p.pattern = pattern;
  return p;
}

TEST_F(CollectorTest, ServerAcceptsATracerAndFinishesItsTraceOnStop) {
  auto server = CollectorServer::Listen(TestPolicy());
  ASSERT_TRUE(server.ok()) << server.status().message();
  (*server)->StartThread();
  Open(1, 100, "before handshake");
  Close(1, 200);
  auto sock = ConnectCollector((*server)->name());
  ASSERT_TRUE(sock.ok()) << sock.status().message();
  std::string answer;
  HelloFields hello = Hello();
  hello["token"] = TestPolicy().token;
  Status st = SendHello(*sock, memfd_, EncodeHello(hello), 5000, &answer);
  close(*sock);
  close(memfd_);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(answer, "ok " + dir_ + "/t_5.sqlite");
  std::thread producer([&] {
    for (uint64_t i = 2; i < 2000; ++i) {
      Open(i, 300 + static_cast<int64_t>(i) * 10, "after");
      Close(i, 305 + static_cast<int64_t>(i) * 10);
    }
  });
  producer.join();
  // This process stays alive: the server finishes the trace when the grace ends.
  std::vector<CollectedTrace> got = (*server)->Finish(300);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].kept);
  auto t = TraceReader::Open(got[0].path);
  ASSERT_TRUE(t.ok());
  auto q = (*t)->Query("SELECT COUNT(*) FROM nvtx");
  ASSERT_TRUE(q.ok() && q->Step());
  EXPECT_EQ(q->Int(0), 1999);
}

TEST(Handshake, HelloRoundTrips) {
  HelloFields f{{"a", "1"}, {"command_line", "python x.py\nwith newline"}};
  HelloFields g = DecodeHello(EncodeHello(f));
  EXPECT_EQ(g["a"], "1");
  EXPECT_EQ(g["command_line"], "python x.py with newline");
}

// The typed hello is the same `key=value` lines: each field is read back, a
// missing key keeps its default, an unknown one is ignored.
TEST(Handshake, TypedHelloRoundTrips) {
  HelloMessage h;
  h.pid = 42;
  h.ppid = 7;
  h.host = "node1";
  h.pattern = "run_%q{RANK}";
  h.overwrite_before_ns = 123;
  h.command_line = "python train.py";
  h.clock = "CUPTI";
  h.wall_clock_offset_ns = -5;
  h.start_ns = 1000;
  h.trace_categories = "cuda,nvtx";
  h.sample_hz = 200;
  h.python_stacks = "launches=4";
  h.commit_ms = 20;
  h.sync_from_api = false;
  h.host_mem_threshold_bytes = 4096;
  h.token = "t";
  h.meta["rank"] = "3";
  h.env["RANK"] = "3";
  const HelloFields f = DecodeHello(h.Encode());
  EXPECT_EQ(f.at("pid"), "42");
  EXPECT_EQ(f.at("meta.rank"), "3");
  EXPECT_EQ(f.at("env.RANK"), "3");
  EXPECT_EQ(f.at("sync_from_api"), "0");
  const HelloMessage g = HelloMessage::FromFields(f);
  EXPECT_EQ(g.ToFields(), h.ToFields());
  EXPECT_EQ(g.host_mem_threshold_bytes, std::optional<uint64_t>(4096));
  const HelloMessage old = HelloMessage::Decode("pid=9\ncwd=/d\nbogus=1\nmeta.world_size=2\n");
  EXPECT_EQ(old.pid, 9);
  EXPECT_EQ(old.cwd, "/d");
  EXPECT_EQ(old.pattern, "stepscope_%p");
  EXPECT_EQ(old.commit_ms, 250);
  EXPECT_TRUE(old.zeroed_buffers && old.sync_from_api);
  EXPECT_FALSE(old.host_mem_threshold_bytes.has_value());
  EXPECT_EQ(old.meta.at("world_size"), "2");
}

// Security (capture/handshake.h, Trust): a hello without this run's session
// token is refused before anything is created.
TEST_F(CollectorTest, ServerRefusesAHelloWithoutTheSessionToken) {
  auto server = CollectorServer::Listen(TestPolicy());
  ASSERT_TRUE(server.ok()) << server.status().message();
  (*server)->StartThread();
  for (const std::string token : {"", "0123456789abcdef0123456789abcdee", "short"}) {
    auto sock = ConnectCollector((*server)->name());
    ASSERT_TRUE(sock.ok()) << sock.status().message();
    HelloFields hello = Hello();
    if (!token.empty()) hello["token"] = token;
    std::string answer;
    Status st = SendHello(*sock, memfd_, EncodeHello(hello), 5000, &answer);
    close(*sock);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(answer.rfind("error refused by the collector: no valid session token", 0), 0u)
        << answer;
  }
  EXPECT_TRUE((*server)->Finish(100).empty());
  EXPECT_NE(access((dir_ + "/t_5.sqlite").c_str(), F_OK), 0);
}

// The pid traced is the peer's (SO_PEERCRED), the file the launcher's pattern
// and CUPTI the launcher's library: the hello cannot point the collector at
// another process, another path or another library.
TEST_F(CollectorTest, ServerTracesThePeerWithItsOwnPatternWhateverTheHelloSays) {
  auto server = CollectorServer::Listen(TestPolicy(dir_ + "/mine_%p"));
  ASSERT_TRUE(server.ok()) << server.status().message();
  (*server)->StartThread();
  auto sock = ConnectCollector((*server)->name());
  ASSERT_TRUE(sock.ok()) << sock.status().message();
  HelloFields hello = Hello();
  hello["token"] = TestPolicy().token;
  hello["pid"] = "1";
  hello["pattern"] = dir_ + "/elsewhere";
  hello["inject_lib"] = dir_ + "/not_a_library.so";
  std::string answer;
  Status st = SendHello(*sock, memfd_, EncodeHello(hello), 5000, &answer);
  close(*sock);
  close(memfd_);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(answer, "ok " + dir_ + "/mine_" + std::to_string(getpid()) + ".sqlite");
  Open(1, 100, "r");
  Close(1, 200);
  std::vector<CollectedTrace> got = (*server)->Finish(100);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].pid, getpid());
  EXPECT_NE(access((dir_ + "/elsewhere.sqlite").c_str(), F_OK), 0);
}

// A region that could still be shrunk (not a sealed memfd) would let its
// owner crash the collector with SIGBUS: refused.
TEST_F(CollectorTest, RefusesAnUnsealedRegion) {
  const int plain = static_cast<int>(syscall(SYS_memfd_create, "plain", 1u));
  ASSERT_GE(plain, 0);
  ASSERT_EQ(ftruncate(plain, static_cast<off_t>(size_)), 0);
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, plain, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memcpy(p, h_, sizeof(shm::Header));
  munmap(p, size_);
  auto c = TraceCollector::Start(HelloMessage::FromFields(Hello()), plain);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("sealed"), std::string::npos) << c.status().message();
}

// The traced program can write anywhere in its own mapping: a header whose
// layout changes after the handshake must not make the collector read or
// write outside the region (it keeps the layout it checked at the start).
TEST(CollectorHeader, SurvivesAHeaderRewrittenAfterTheHandshake) {
  const ScopedTempDir tmp("stepscope-header");
  const std::string dir = tmp.path();
  shm::Header layout{};
  const uint64_t size = shm::Layout(2, 1 << 16, 1 << 16, &layout);
  const int memfd = shm::CreateRegionFd("header", size);
  ASSERT_GE(memfd, 0);
  auto* h =
      static_cast<shm::Header*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0));
  ASSERT_NE(static_cast<void*>(h), MAP_FAILED);
  shm::InitHeader(h, layout, getpid());
  auto c = TraceCollector::Start(
      HelloMessage::FromFields(
          {{"pid", std::to_string(getpid())}, {"cwd", dir}, {"pattern", "hdr"}}),
      memfd);
  ASSERT_TRUE(c.ok()) << c.status().message();
  for (int round = 0; round < 4; ++round) {
    h->slot_count = shm::kMaxSlots * (round + 1);
    h->slot_bytes = uint64_t{1} << (40 + round);
    h->slots_offset = uint64_t{1} << 50;
    h->ring_offset = ~uint64_t{0} - 4096 * round;
    h->ring_bytes = round == 0 ? 2 : uint64_t{1} << 62;
    h->total_bytes = 1;
    h->write.store(~uint64_t{0} >> round);
    h->read.store(round * 12345);
    for (uint32_t i = 0; i < shm::kMaxSlots; ++i) {
      h->slots[i].valid.store(~uint64_t{0});
      h->slots[i].state.store(shm::kSlotReady);
    }
    (*c)->Poll();
  }
  (*c)->Finish();
  EXPECT_EQ((*c)->result().error, "the shared ring is corrupt; later records are lost");
  munmap(h, size);
}

}  // namespace
}  // namespace stepscope
