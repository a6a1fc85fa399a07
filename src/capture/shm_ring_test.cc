// The shared ring between the tracer and the collector: order, wrap-around,
// drops when full, and several producers against one consumer (also run
// under ThreadSanitizer: `make test-tsan`).
#include "capture/shm_ring.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace stepscope::shm {
namespace {

struct Region {
  explicit Region(uint64_t ring_bytes, uint32_t slots = 0) {
    Header layout{};
    size = Layout(slots, 4096, ring_bytes, &layout);
    mem = static_cast<uint8_t*>(std::aligned_alloc(4096, size));
    std::memset(mem, 0, size);
    InitHeader(mem, layout, 42);
    h = reinterpret_cast<Header*>(mem);
  }
  ~Region() { std::free(mem); }
  uint8_t* mem;
  uint64_t size;
  Header* h;
};

struct Rec {
  uint32_t producer;
  uint32_t seq;
};

TEST(ShmRing, LayoutValidates) {
  Region r(8192, 3);
  EXPECT_TRUE(Validate(r.mem, r.size));
  EXPECT_EQ(r.h->ring_bytes, 8192u);
  EXPECT_EQ(r.h->slot_count, 3u);
  EXPECT_FALSE(Validate(r.mem, r.size - 1));
  r.h->magic = 1;
  EXPECT_FALSE(Validate(r.mem, r.size));
}

TEST(ShmRing, RecordsComeOutInOrderAcrossWrapAround) {
  Region r(4096);
  std::vector<uint32_t> got;
  uint32_t next = 0;
  // Records of varying size so that the end of the ring falls inside one
  // (a pad record fills the tail).
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 7; ++i) {
      std::vector<uint8_t> payload(4 + (next * 13) % 90, 0xab);
      std::memcpy(payload.data(), &next, 4);
      ASSERT_TRUE(Put(r.h, Kind::kApi, payload.data(), static_cast<uint32_t>(payload.size())));
      ++next;
    }
    bool corrupt = false;
    Consume(
        r.h,
        [&](Kind k, const uint8_t* p, uint32_t n) {
          EXPECT_EQ(k, Kind::kApi);
          uint32_t v;
          std::memcpy(&v, p, 4);
          EXPECT_GE(n, 4 + (v * 13) % 90);
          got.push_back(v);
        },
        UINT64_MAX, &corrupt);
    ASSERT_FALSE(corrupt);
  }
  ASSERT_EQ(got.size(), next);
  for (uint32_t i = 0; i < next; ++i) ASSERT_EQ(got[i], i);
  EXPECT_GT(r.h->write.load(), 4096u * 10);  // wrapped many times
  EXPECT_EQ(r.h->drops[static_cast<int>(Kind::kApi)].load(), 0u);
}

TEST(ShmRing, FullRingDropsAndCountsPerKind) {
  Region r(4096);
  uint8_t buf[120] = {};
  int ok = 0;
  for (int i = 0; i < 100; ++i) ok += Put(r.h, Kind::kNvtxOpen, buf, sizeof(buf)) ? 1 : 0;
  EXPECT_EQ(ok, 4096 / 128);
  EXPECT_EQ(r.h->drops[static_cast<int>(Kind::kNvtxOpen)].load(), 100u - ok);
  EXPECT_EQ(r.h->drops[static_cast<int>(Kind::kApi)].load(), 0u);
  // A record larger than half the ring is never accepted.
  std::vector<uint8_t> big(3000);
  EXPECT_FALSE(Put(r.h, Kind::kOom, big.data(), 3000));
  EXPECT_EQ(r.h->drops[static_cast<int>(Kind::kOom)].load(), 1u);
  size_t n = Consume(
      r.h, [](Kind, const uint8_t*, uint32_t) {}, UINT64_MAX, nullptr);
  EXPECT_EQ(n, static_cast<size_t>(ok));
  EXPECT_TRUE(Put(r.h, Kind::kNvtxOpen, buf, sizeof(buf)));  // room again
}

TEST(ShmRing, UnpublishedRecordHoldsTheConsumer) {
  Region r(4096);
  uint32_t v = 7;
  uint8_t* p = Reserve(r.h, Kind::kApi, 4);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(Put(r.h, Kind::kApi, &v, 4));
  size_t n = Consume(
      r.h, [](Kind, const uint8_t*, uint32_t) {}, UINT64_MAX, nullptr);
  EXPECT_EQ(n, 0u);
  std::memcpy(p, &v, 4);
  Publish(p, Kind::kApi, 4);
  n = Consume(
      r.h, [](Kind, const uint8_t*, uint32_t) {}, UINT64_MAX, nullptr);
  EXPECT_EQ(n, 2u);
}

TEST(ShmRing, CorruptHeaderIsReportedNotFollowed) {
  Region r(4096);
  uint32_t v = 1;
  ASSERT_TRUE(Put(r.h, Kind::kApi, &v, 4));
  *reinterpret_cast<uint64_t*>(RingBase(r.h)) = 12;  // size not a multiple of 8
  bool corrupt = false;
  EXPECT_EQ(Consume(
                r.h, [](Kind, const uint8_t*, uint32_t) {}, UINT64_MAX, &corrupt),
            0u);
  EXPECT_TRUE(corrupt);
}

TEST(ShmRing, ManyProducersOneConsumer) {
  Region r(1 << 16);
  constexpr uint32_t kProducers = 4, kPerProducer = 50000;
  std::atomic<uint32_t> finished{0};
  std::vector<std::thread> producers;
  for (uint32_t t = 0; t < kProducers; ++t) {
    producers.emplace_back([&, t] {
      for (uint32_t i = 0; i < kPerProducer; ++i) {
        Rec rec{t, i};
        Put(r.h, t % 2 ? Kind::kApi : Kind::kNvtxOpen, &rec, sizeof(rec));
      }
      finished.fetch_add(1);
    });
  }
  std::vector<int64_t> last(kProducers, -1);
  uint64_t got = 0;
  bool corrupt = false;
  auto fn = [&](Kind, const uint8_t* p, uint32_t n) {
    ASSERT_GE(n, sizeof(Rec));
    Rec rec;
    std::memcpy(&rec, p, sizeof(rec));
    ASSERT_LT(rec.producer, kProducers);
    // Per producer, records arrive in order (some may be dropped).
    ASSERT_GT(static_cast<int64_t>(rec.seq), last[rec.producer]);
    last[rec.producer] = rec.seq;
    ++got;
  };
  while (finished.load() < kProducers) Consume(r.h, fn, UINT64_MAX, &corrupt);
  for (auto& t : producers) t.join();
  Consume(r.h, fn, UINT64_MAX, &corrupt);
  EXPECT_FALSE(corrupt);
  uint64_t dropped = r.h->drops[static_cast<int>(Kind::kApi)].load() +
                     r.h->drops[static_cast<int>(Kind::kNvtxOpen)].load();
  EXPECT_EQ(got + dropped, uint64_t{kProducers} * kPerProducer);
  EXPECT_EQ(r.h->read.load(), r.h->write.load());
}

}  // namespace
}  // namespace stepscope::shm
