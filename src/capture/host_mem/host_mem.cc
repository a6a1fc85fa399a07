#include "capture/host_mem/host_mem.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "common/env_contract.h"

namespace stepscope::hostmem {
namespace {

struct Ring {
  std::atomic<uint64_t> head{0};   // next slot the producer writes
  std::atomic<uint64_t> tail{0};   // next slot the consumer reads
  std::atomic<bool> owned{false};  // a live thread writes here
  uint32_t tid = 0;
  Ring* next = nullptr;  // registry: an append-only list
  HostAllocRecord records[kRingCapacity];
};

std::atomic<Ring*> g_rings{nullptr};
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_threshold{0};  // 0: not read yet
std::mutex g_drain_mu;
pthread_key_t g_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
// initial-exec: an LD_PRELOAD library is loaded at startup, and this model
// never calls into the dynamic loader (which may call malloc) on first use.
__attribute__((tls_model("initial-exec"))) thread_local Ring* t_ring = nullptr;

// Thread exit: the ring may be taken by a new thread once drained.
void ReleaseRing(void* p) { static_cast<Ring*>(p)->owned.store(false, std::memory_order_release); }
void MakeKey() { pthread_key_create(&g_key, ReleaseRing); }

Ring* AcquireRing() {
  uint32_t tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  Ring* ring = nullptr;
  for (Ring* r = g_rings.load(std::memory_order_acquire); r; r = r->next) {
    bool expected = false;
    if (r->head.load(std::memory_order_acquire) == r->tail.load(std::memory_order_acquire) &&
        r->owned.compare_exchange_strong(expected, true)) {
      ring = r;
      break;
    }
  }
  if (!ring) {
    // mmap, not malloc: we may be inside malloc.
    void* mem =
        ::mmap(nullptr, sizeof(Ring), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    ring = new (mem) Ring();
    ring->owned.store(true);
    Ring* head = g_rings.load(std::memory_order_relaxed);
    do {
      ring->next = head;
    } while (!g_rings.compare_exchange_weak(head, ring, std::memory_order_release,
                                            std::memory_order_relaxed));
  }
  ring->tid = tid;
  pthread_once(&g_key_once, MakeKey);
  pthread_setspecific(g_key, ring);
  return ring;
}

}  // namespace

uint64_t Threshold() {
  uint64_t t = g_threshold.load(std::memory_order_relaxed);
  if (t) return t;
  t = kDefaultThreshold;
  if (const char* env = ::getenv(kEnvHostMemThreshold)) {  // getenv does not allocate
    char* end = nullptr;
    unsigned long long v = ::strtoull(env, &end, 10);
    if (end != env && v > 0) t = v;
  }
  g_threshold.store(t, std::memory_order_relaxed);
  return t;
}

void SetThresholdForTest(uint64_t bytes) { g_threshold.store(bytes); }

void Record(HostAllocOp op, HostAllocKind kind, uint64_t address, uint64_t bytes) {
  Ring* r = t_ring;
  if (!r) {
    r = t_ring = AcquireRing();
    if (!r) {
      g_dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  uint64_t h = r->head.load(std::memory_order_relaxed);
  if (h - r->tail.load(std::memory_order_acquire) >= kRingCapacity) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  HostAllocRecord& rec = r->records[h % kRingCapacity];
  rec.ts_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  rec.address = address;
  rec.bytes = bytes;
  rec.tid = r->tid;
  rec.op = op;
  rec.kind = kind;
  rec.reserved = 0;
  r->head.store(h + 1, std::memory_order_release);
}

size_t Drain(DrainFn sink, void* context) {
  std::lock_guard<std::mutex> lock(g_drain_mu);
  size_t total = 0;
  for (Ring* r = g_rings.load(std::memory_order_acquire); r; r = r->next) {
    uint64_t t = r->tail.load(std::memory_order_relaxed);
    uint64_t h = r->head.load(std::memory_order_acquire);
    while (t < h) {
      // A contiguous chunk up to the end of the ring's storage.
      uint64_t begin = t % kRingCapacity;
      uint64_t n = std::min<uint64_t>(h - t, kRingCapacity - begin);
      sink(&r->records[begin], static_cast<size_t>(n), context);
      t += n;
      total += static_cast<size_t>(n);
    }
    r->tail.store(t, std::memory_order_release);
  }
  return total;
}

uint64_t Dropped() { return g_dropped.load(std::memory_order_relaxed); }

}  // namespace stepscope::hostmem

// Exported even when built with -fvisibility=hidden (the preload library).
#define STEPSCOPE_EXPORT __attribute__((visibility("default")))
extern "C" {
STEPSCOPE_EXPORT size_t stepscope_hostmem_drain(stepscope::hostmem::DrainFn sink, void* context) {
  return stepscope::hostmem::Drain(sink, context);
}
STEPSCOPE_EXPORT uint64_t stepscope_hostmem_dropped(void) { return stepscope::hostmem::Dropped(); }
STEPSCOPE_EXPORT uint64_t stepscope_hostmem_threshold(void) {
  return stepscope::hostmem::Threshold();
}
}
