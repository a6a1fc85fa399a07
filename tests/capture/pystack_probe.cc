// The tracer's in-process Python stack reader (capture/python_callstack.h),
// callable from Python through ctypes: Python calls probe_stack(), which
// reads the calling thread's stack exactly as the CUDA API callback does,
// passes it through a shared ring like the real one, and returns what a
// collector would decode ("function|file|line" lines, root first). Used by
// python_callstack_test.py; no GPU needed.
#include <sys/syscall.h>
#include <unistd.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "capture/pystack/py_stack.h"
#include "capture/python_callstack.h"
#include "capture/shm_ring.h"

namespace {

stepscope::shm::Header* Ring() {
  static stepscope::shm::Header* h = [] {
    stepscope::shm::Header layout{};
    const uint64_t size = stepscope::shm::Layout(0, 4096, 1 << 20, &layout);
    void* mem = std::aligned_alloc(4096, size);
    std::memset(mem, 0, size);
    stepscope::shm::InitHeader(mem, layout, getpid());
    return reinterpret_cast<stepscope::shm::Header*>(mem);
  }();
  return h;
}

std::unordered_map<uint64_t, std::string> g_names;
std::string g_out;

// What a collector does with the ring: code names, then stacks as text.
void Decode(stepscope::shm::Kind k, const uint8_t* p, uint32_t) {
  using namespace stepscope;
  if (k == shm::Kind::kPyCode) {
    shm::PyCodeName c;
    std::memcpy(&c, p, sizeof(c));
    const char* text = reinterpret_cast<const char*>(p + sizeof(c));
    g_names[c.code] =
        std::string(text, c.function_len) + "|" + std::string(text + c.function_len, c.file_len);
  } else if (k == shm::Kind::kPyStack) {
    shm::PyStackHead h;
    std::memcpy(&h, p, sizeof(h));
    g_out.clear();
    for (uint32_t i = 0; i < h.depth; ++i) {
      shm::PyStackFrame f;
      std::memcpy(&f, p + sizeof(h) + i * sizeof(f), sizeof(f));
      g_out += g_names[f.code] + "|" + std::to_string(f.line) + "\n";
    }
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* probe_stack() {
  using namespace stepscope;
  g_out.clear();
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  if (!EmitPythonStack(Ring(), 42, tid)) return "";
  shm::Consume(Ring(), Decode, ~uint64_t{0}, nullptr);
  return g_out.c_str();
}

// Mean cost of one stack read + emit, in ns, over `n` calls (drained as it goes).
__attribute__((visibility("default"))) double probe_cost_ns(int n) {
  using namespace stepscope;
  const auto tid = static_cast<uint32_t>(syscall(SYS_gettid));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    EmitPythonStack(Ring(), static_cast<uint32_t>(i), tid);
    if (i % 64 == 63) shm::Consume(Ring(), Decode, ~uint64_t{0}, nullptr);
  }
  const auto t1 = std::chrono::steady_clock::now();
  shm::Consume(Ring(), Decode, ~uint64_t{0}, nullptr);
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

// The calling thread's stack read twice by OwnStack: windowed (its own C
// stack copied directly) and one process_vm_readv per frame, the reference.
// The number of frames when both agree frame by frame (code, stamp, line),
// -1 when they differ, 0 when no stack could be read. `*reads`: the
// process_vm_readv calls of the windowed walk (its code objects already
// cached by a first walk, as in a loop).
__attribute__((visibility("default"))) int probe_own_walks_agree(int* reads) {
  using namespace stepscope::pystack;
  auto rt = PyRuntime::AttachSelf();
  if (!rt.ok()) return 0;
  std::vector<PyFrame> windowed, per_frame;
  if (!(*rt)->OwnStack(&windowed)) return 0;  // caches the code objects
  const uint64_t before = (*rt)->memory().reads();
  if (!(*rt)->OwnStack(&windowed)) return 0;
  *reads = static_cast<int>((*rt)->memory().reads() - before);
  (*rt)->set_walk_options({.per_frame = true});
  if (!(*rt)->OwnStack(&per_frame)) return 0;
  return windowed == per_frame ? static_cast<int>(windowed.size()) : -1;
}
}
