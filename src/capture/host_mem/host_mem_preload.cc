// libstepscope_hostmem.so: the LD_PRELOAD interposer of `--trace host-mem`.
//
// It wraps the malloc family and mmap/munmap, calls the real functions (found
// with dlsym(RTLD_NEXT)), and records the calls at or above the threshold
// (host_mem.h) into the calling thread's ring:
//  * malloc, calloc, posix_memalign, aligned_alloc, memalign: alloc of the
//    requested size (kind malloc);
//  * free: a free when the block's usable size is at or above the threshold
//    (so every recorded allocation's free is recorded; a few frees of smaller
//    requests that were rounded up are recorded too, and the analysis counts
//    them as frees of unknown addresses);
//  * realloc: a free of the old block and an alloc of the new one, each by the
//    rules above;
//  * mmap with MAP_ANONYMOUS (file mappings are page cache, not the program's
//    heap) and munmap: kind mmap.
//
// Bootstrapping: dlsym itself may call calloc before the real one is known;
// those few early requests are served from a static arena and never freed.
#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "capture/host_mem/host_mem.h"

namespace {

using namespace stepscope::hostmem;

using MallocFn = void* (*)(size_t);
using FreeFn = void (*)(void*);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using MemalignFn = void* (*)(size_t, size_t);
using PosixMemalignFn = int (*)(void**, size_t, size_t);
using UsableFn = size_t (*)(void*);
using MmapFn = void* (*)(void*, size_t, int, int, int, off_t);
using MunmapFn = int (*)(void*, size_t);

struct Real {
  MallocFn malloc = nullptr;
  FreeFn free = nullptr;
  CallocFn calloc = nullptr;
  ReallocFn realloc = nullptr;
  MemalignFn memalign = nullptr;
  MemalignFn aligned_alloc = nullptr;
  PosixMemalignFn posix_memalign = nullptr;
  UsableFn usable = nullptr;
  MmapFn mmap = nullptr;
  MunmapFn munmap = nullptr;
};
Real g_real;
std::atomic<int> g_init{0};  // 0 not started, 1 in progress, 2 done

// The bootstrap arena for allocations made while dlsym runs.
alignas(64) char g_arena[64 * 1024];
std::atomic<size_t> g_arena_used{0};

bool InArena(const void* p) {
  return p >= static_cast<const void*>(g_arena) &&
         p < static_cast<const void*>(g_arena + sizeof(g_arena));
}

void* ArenaAlloc(size_t n, size_t align = 16) {
  size_t off = g_arena_used.fetch_add(n + align, std::memory_order_relaxed);
  if (off + n + align > sizeof(g_arena)) return nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(g_arena + off);
  p = (p + align - 1) & ~(uintptr_t)(align - 1);
  return reinterpret_cast<void*>(p);
}

// Recursion guard: our own bookkeeping never records itself.
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;

void Init() {
  int expected = 0;
  if (!g_init.compare_exchange_strong(expected, 1)) return;  // done, or running in this thread
  g_real.malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
  g_real.free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
  g_real.calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
  g_real.realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
  g_real.memalign = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "memalign"));
  g_real.aligned_alloc = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
  g_real.posix_memalign = reinterpret_cast<PosixMemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
  g_real.usable = reinterpret_cast<UsableFn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
  g_real.mmap = reinterpret_cast<MmapFn>(dlsym(RTLD_NEXT, "mmap"));
  g_real.munmap = reinterpret_cast<MunmapFn>(dlsym(RTLD_NEXT, "munmap"));
  g_init.store(2, std::memory_order_release);
}

inline bool Ready() {
  if (g_init.load(std::memory_order_acquire) != 2) Init();
  return g_init.load(std::memory_order_acquire) == 2;
}

inline void Note(HostAllocOp op, HostAllocKind kind, const void* p, size_t n) {
  if (!p || n < Threshold() || t_depth) return;
  ++t_depth;
  Record(op, kind, reinterpret_cast<uint64_t>(p), n);
  --t_depth;
}

inline void NoteFree(void* p) {
  if (!p || t_depth || !g_real.usable) return;
  size_t n = g_real.usable(p);
  if (n >= Threshold()) Note(HostAllocOp::kFree, HostAllocKind::kMalloc, p, n);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t n) {
  if (!Ready()) return ArenaAlloc(n);
  void* p = g_real.malloc(n);
  Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, p, n);
  return p;
}

__attribute__((visibility("default"))) void free(void* p) {
  if (!p || InArena(p)) return;
  // Only while another thread is inside Init(): leak the block rather than wait.
  if (!Ready()) return;
  NoteFree(p);
  g_real.free(p);
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size) {
  if (!Ready()) {
    void* p = ArenaAlloc(count * size);
    if (p) std::memset(p, 0, count * size);
    return p;
  }
  void* p = g_real.calloc(count, size);
  Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, p, count * size);
  return p;
}

__attribute__((visibility("default"))) void* realloc(void* old, size_t n) {
  if (!Ready() || InArena(old)) {
    void* p = Ready() ? g_real.malloc(n) : ArenaAlloc(n);
    if (p && old) {  // an arena block: its size is unknown, copy what the arena can hold
      size_t room = static_cast<size_t>(g_arena + sizeof(g_arena) - static_cast<char*>(old));
      std::memcpy(p, old, n < room ? n : room);
    }
    Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, p, n);
    return p;
  }
  size_t old_usable = old && g_real.usable ? g_real.usable(old) : 0;
  void* p = g_real.realloc(old, n);
  if (p || n == 0) {  // on failure the old block is still there
    if (old && old_usable >= Threshold())
      Note(HostAllocOp::kFree, HostAllocKind::kMalloc, old, old_usable);
    Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, p, n);
  }
  return p;
}

__attribute__((visibility("default"))) int posix_memalign(void** out, size_t align, size_t n) {
  if (!Ready()) {
    *out = ArenaAlloc(n, align);
    return *out ? 0 : ENOMEM;
  }
  int rc = g_real.posix_memalign(out, align, n);
  if (rc == 0) Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, *out, n);
  return rc;
}

__attribute__((visibility("default"))) void* aligned_alloc(size_t align, size_t n) {
  if (!Ready()) return ArenaAlloc(n, align);
  void* p = g_real.aligned_alloc(align, n);
  Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, p, n);
  return p;
}

__attribute__((visibility("default"))) void* memalign(size_t align, size_t n) {
  if (!Ready()) return ArenaAlloc(n, align);
  void* p = g_real.memalign(align, n);
  Note(HostAllocOp::kAlloc, HostAllocKind::kMalloc, p, n);
  return p;
}

__attribute__((visibility("default"))) void* mmap(void* addr, size_t len, int prot, int flags,
                                                  int fd, off_t off) {
  if (!Ready()) {
    return reinterpret_cast<void*>(::syscall(SYS_mmap, addr, len, prot, flags, fd, off));
  }
  void* p = g_real.mmap(addr, len, prot, flags, fd, off);
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS)) {
    Note(HostAllocOp::kAlloc, HostAllocKind::kMmap, p, len);
  }
  return p;
}

__attribute__((visibility("default"))) void* mmap64(void* addr, size_t len, int prot, int flags,
                                                    int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) int munmap(void* addr, size_t len) {
  if (!Ready()) return static_cast<int>(::syscall(SYS_munmap, addr, len));
  int rc = g_real.munmap(addr, len);
  if (rc == 0) Note(HostAllocOp::kFree, HostAllocKind::kMmap, addr, len);
  return rc;
}

}  // extern "C"
