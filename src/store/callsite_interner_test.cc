#include "store/callsite_interner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "store/trace_reader.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

struct VectorSink : CallsiteSink {
  std::vector<FrameRecord> frames;
  std::vector<CallsiteRecord> callsites;
  void AddFrame(const FrameRecord& r) override { frames.push_back(r); }
  void AddCallsite(const CallsiteRecord& r) override { callsites.push_back(r); }
};

FrameKey Py(StringId fn, StringId file, int line) { return {FrameKind::kPython, fn, file, line}; }

std::vector<uint32_t> ExpandCallsite(const std::vector<CallsiteRecord>& rows, uint32_t id) {
  return CallsiteChains(&rows).Expand(id);
}

TEST(CallsiteInterner, SharesPrefixesAndEmitsEachRowOnce) {
  VectorSink sink;
  CallsiteInterner in(&sink);
  const uint32_t a = in.Intern({Py(1, 9, 10), Py(2, 9, 20), Py(3, 9, 152)});
  const uint32_t b = in.Intern({Py(1, 9, 10), Py(2, 9, 20), Py(4, 9, 160)});
  EXPECT_EQ(a, 3u);
  EXPECT_EQ(b, 4u);  // shares <module> and train_step
  EXPECT_EQ(in.Intern({Py(1, 9, 10), Py(2, 9, 20), Py(3, 9, 152)}), a);
  EXPECT_EQ(in.Intern({}), 0u);
  ASSERT_EQ(sink.frames.size(), 4u);
  ASSERT_EQ(sink.callsites.size(), 4u);
  EXPECT_EQ(sink.callsites[3].parent, 2u);
  EXPECT_EQ(sink.callsites[3].depth, 2);
  EXPECT_EQ(sink.callsites[0].parent, 0u);
  // Same frame at another line is another frame.
  in.Intern({Py(1, 9, 11)});
  EXPECT_EQ(sink.frames.size(), 5u);
  EXPECT_EQ(ExpandCallsite(sink.callsites, b), (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_TRUE(ExpandCallsite(sink.callsites, 0).empty());
  EXPECT_TRUE(ExpandCallsite(sink.callsites, 99).empty());
}

TEST(CallsiteInterner, StartsAfterExistingRows) {
  VectorSink sink;
  CallsiteInterner in(&sink);
  in.StartAfter(10, 20);
  EXPECT_EQ(in.Intern({Py(1, 9, 10), Py(2, 9, 20)}), 22u);
  EXPECT_EQ(sink.frames.front().id, 11u);
  EXPECT_EQ(sink.callsites[1].parent, 21u);
  EXPECT_EQ(sink.callsites[1].depth, 1);
  EXPECT_EQ(in.callsites(), 22u);
}

TEST(CallsiteInterner, OverDeepStackKeepsOutermostAndLeaf) {
  VectorSink sink;
  CallsiteInterner in(&sink);
  std::vector<FrameKey> deep;
  for (int i = 0; i < 300; ++i) deep.push_back(Py(1, 2, i + 1));
  const uint32_t leaf = in.Intern(deep);
  std::vector<uint32_t> frames = ExpandCallsite(sink.callsites, leaf);
  ASSERT_EQ(frames.size(), CallsiteInterner::kMaxDepth);
  EXPECT_EQ(sink.frames[frames.back() - 1].line, 300);
  EXPECT_EQ(sink.frames[frames.front() - 1].line, 1);
}

TEST(CallsiteInterner, DamagedChainEnds) {
  std::vector<CallsiteRecord> cycle = {{1, 2, 1, 0, 0}, {2, 1, 2, 1, 0}};
  // Cut where the climb from the first row meets its own path: 2 becomes a root.
  EXPECT_EQ(ExpandCallsite(cycle, 1), (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(ExpandCallsite(cycle, 2), (std::vector<uint32_t>{2}));
  std::vector<CallsiteRecord> self = {{1, 1, 7, 0, 0}};
  EXPECT_EQ(ExpandCallsite(self, 1), (std::vector<uint32_t>{7}));
  std::vector<CallsiteRecord> sparse = {{5, 0, 1, 0, 0}, {9, 5, 2, 1, 0}};
  EXPECT_EQ(ExpandCallsite(sparse, 9), (std::vector<uint32_t>{1, 2}));
}

// A chain of 200k rows (a hostile trace): read in linear time, without
// recursion; each stack is its outermost kMaxDepth - 1 frames and its leaf.
TEST(CallsiteChains, DeepChainsAreLinearAndCut) {
  std::vector<CallsiteRecord> rows;
  constexpr uint32_t kRows = 200000;
  for (uint32_t i = 1; i <= kRows; ++i) rows.push_back({i, i - 1, i, static_cast<uint16_t>(0), 0});
  // Stored in reverse: every parent row comes after its child.
  std::vector<CallsiteRecord> reversed(rows.rbegin(), rows.rend());
  for (auto& r : reversed) r.id = kRows + 1 - r.id, r.parent = r.parent ? kRows + 1 - r.parent : 0;
  for (const auto* v : {&rows, &reversed}) {
    CallsiteChains chains(v);
    EXPECT_EQ(chains.cut(), kRows - CallsiteInterner::kMaxDepth);
    for (uint32_t id = 1; id <= kRows; ++id) {
      const std::vector<uint32_t> f = chains.Expand(id);
      ASSERT_EQ(f.size(),
                std::min<size_t>(v == &rows ? id : kRows + 1 - id, CallsiteInterner::kMaxDepth));
    }
  }
  CallsiteChains chains(&rows);
  const std::vector<uint32_t> f = chains.Expand(kRows);
  EXPECT_EQ(f.front(), 1u);
  EXPECT_EQ(f[CallsiteInterner::kMaxDepth - 2], CallsiteInterner::kMaxDepth - 1);
  EXPECT_EQ(f.back(), kRows);
}

TEST(CallsiteInterner, RoundTripsThroughTheTrace) {
  std::string path = ::testing::TempDir() + "/callsites-" + std::to_string(::getpid()) + ".sqlite";
  ::unlink(path.c_str());
  {
    auto w = TraceWriter::Create(path);
    ASSERT_TRUE(w.ok()) << w.status().message();
    TraceWriter& tw = **w;
    CallsiteInterner in(&tw);
    const StringId file = tw.Intern("train.py");
    const uint32_t leaf =
        in.Intern({Py(tw.Intern("<module>"), file, 200),
                   Py(tw.Intern("train_step"), file, 152),
                   {FrameKind::kCudaApi, tw.Intern("cudaStreamSynchronize"), 0, 0}});
    tw.AddApiCallsite({77, leaf});
    SampleRecord s{};
    s.ts_ns = 1000;
    s.tid = 5;
    s.state = ThreadState::kBlockedCuda;
    s.wait = tw.Intern("cudaStreamSynchronize");
    s.callsite = leaf;
    s.cpu_ns = -1;
    tw.AddSample(s);
    SchedRecord sc{};
    sc.start_ns = 10;
    sc.end_ns = 20;
    sc.tid = 5;
    sc.cpu = 3;
    sc.state = ThreadState::kRunning;
    tw.AddSched(sc);
    OsrtRecord o{};
    o.start_ns = 30;
    o.end_ns = 90;
    o.tid = 6;
    o.name = tw.Intern("pthread_cond_wait");
    o.source = kOsrtImported;
    tw.AddOsrt(o);
    ASSERT_TRUE(tw.Finalize().ok());
  }
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto frames = (*r)->Frames();
  auto callsites = (*r)->Callsites();
  auto samples = (*r)->Samples();
  auto sched = (*r)->Sched();
  auto osrt = (*r)->Osrt();
  auto api = (*r)->ApiCallsites();
  ASSERT_TRUE(frames.ok() && callsites.ok() && samples.ok() && sched.ok() && osrt.ok() && api.ok());
  ASSERT_EQ(frames->size(), 3u);
  EXPECT_EQ((*r)->String((*frames)[1].function), "train_step");
  EXPECT_EQ((*frames)[1].line, 152);
  EXPECT_EQ((*frames)[2].kind, static_cast<uint8_t>(FrameKind::kCudaApi));
  ASSERT_EQ(api->size(), 1u);
  EXPECT_EQ(ExpandCallsite(*callsites, (*api)[0].callsite), (std::vector<uint32_t>{1, 2, 3}));
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].state, ThreadState::kBlockedCuda);
  EXPECT_EQ((*samples)[0].cpu_ns, -1);
  ASSERT_EQ(sched->size(), 1u);
  EXPECT_EQ((*sched)[0].cpu, 3);
  ASSERT_EQ(osrt->size(), 1u);
  EXPECT_EQ((*osrt)[0].source, kOsrtImported);
  EXPECT_EQ((*r)->String((*osrt)[0].name), "pthread_cond_wait");
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace stepscope
