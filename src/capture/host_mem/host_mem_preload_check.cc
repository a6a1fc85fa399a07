// Runs under LD_PRELOAD=libstepscope_hostmem.so (threshold 1 MiB) and checks
// what the interposer recorded: exits 0 when every expectation holds, else
// prints the first difference and exits 1.
#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "capture/host_mem/host_mem.h"

using namespace stepscope::hostmem;

namespace {

std::vector<HostAllocRecord> g_got;

void Collect(const HostAllocRecord* r, size_t n, void*) { g_got.insert(g_got.end(), r, r + n); }

int Fail(const char* what, size_t i) {
  std::fprintf(stderr, "host_mem_preload_check: record %zu: %s (got %zu records)\n", i, what,
               g_got.size());
  for (const auto& r : g_got) {
    std::fprintf(stderr, "  op=%d kind=%d addr=%#llx bytes=%llu tid=%u\n", static_cast<int>(r.op),
                 static_cast<int>(r.kind), static_cast<unsigned long long>(r.address),
                 static_cast<unsigned long long>(r.bytes), r.tid);
  }
  return 1;
}

}  // namespace

int main() {
  auto drain =
      reinterpret_cast<size_t (*)(DrainFn, void*)>(dlsym(RTLD_DEFAULT, "stepscope_hostmem_drain"));
  if (!drain) {
    std::fprintf(stderr,
                 "host_mem_preload_check: not running under LD_PRELOAD=libstepscope_hostmem.so\n");
    return 1;
  }
  drain(Collect, nullptr);  // whatever the runtime did before main
  g_got.clear();

  const size_t MiB = 1 << 20;
  volatile char* small = static_cast<char*>(std::malloc(100));  // below the threshold
  char* a = static_cast<char*>(std::malloc(2 * MiB));           // 1: alloc 2 MiB
  char* c = static_cast<char*>(std::calloc(3, MiB));            // 2: alloc 3 MiB
  char* r = static_cast<char*>(std::realloc(a, 5 * MiB));       // 3: free a, 4: alloc 5 MiB
  void* m =
      mmap(nullptr, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  // 5
  munmap(m, 4 * MiB);                                                                      // 6
  std::free(c);                                                                            // 7
  std::thread t([] { std::free(std::malloc(MiB + MiB / 2)); });  // 8, 9 on another thread
  t.join();
  std::free(r);  // 10
  std::free(const_cast<char*>(small));
  drain(Collect, nullptr);

  struct Want {
    HostAllocOp op;
    HostAllocKind kind;
    size_t min_bytes;
  };
  const Want want[] = {
      {HostAllocOp::kAlloc, HostAllocKind::kMalloc, 2 * MiB},
      {HostAllocOp::kAlloc, HostAllocKind::kMalloc, 3 * MiB},
      {HostAllocOp::kFree, HostAllocKind::kMalloc, 2 * MiB},
      {HostAllocOp::kAlloc, HostAllocKind::kMalloc, 5 * MiB},
      {HostAllocOp::kAlloc, HostAllocKind::kMmap, 4 * MiB},
      {HostAllocOp::kFree, HostAllocKind::kMmap, 4 * MiB},
      {HostAllocOp::kFree, HostAllocKind::kMalloc, 3 * MiB},
      {HostAllocOp::kAlloc, HostAllocKind::kMalloc, MiB + MiB / 2},
      {HostAllocOp::kFree, HostAllocKind::kMalloc, MiB + MiB / 2},
      {HostAllocOp::kFree, HostAllocKind::kMalloc, 5 * MiB},
  };
  // Rings drain per thread: the other thread's two records may come first or last.
  std::vector<HostAllocRecord> main_thread, other;
  uint32_t main_tid = 0;  // the thread of the 2 MiB malloc
  for (const auto& x : g_got) {
    if (x.bytes == 2 * MiB && x.op == HostAllocOp::kAlloc) main_tid = x.tid;
  }
  for (const auto& x : g_got) (x.tid == main_tid ? main_thread : other).push_back(x);
  if (main_thread.size() < 7) return Fail("too few records on the main thread", main_thread.size());
  std::vector<HostAllocRecord> ordered = main_thread;
  ordered.insert(ordered.begin() + 7, other.begin(), other.end());
  if (ordered.size() != sizeof(want) / sizeof(want[0])) return Fail("wrong number of records", 0);
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (ordered[i].op != want[i].op) return Fail("wrong op", i);
    if (ordered[i].kind != want[i].kind) return Fail("wrong kind", i);
    if (ordered[i].bytes < want[i].min_bytes || ordered[i].bytes > want[i].min_bytes + 64 * 1024) {
      return Fail("wrong size", i);
    }
  }
  if (other.size() != 2 || other[0].tid == main_tid) return Fail("thread records", 7);
  if (ordered[0].address != ordered[2].address) return Fail("realloc freed another block", 2);
  std::printf("host_mem_preload_check: %zu records as expected\n", ordered.size());
  return 0;
}
