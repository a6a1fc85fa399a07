#include "capture/python_callstack.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/pystack/py_stack.h"

namespace stepscope {
namespace {

struct State {
  std::mutex mu;
  bool tried = false;
  std::unique_ptr<pystack::PyRuntime> rt;
  // Code objects whose names the collector has, by address and stamp, and
  // the id they are sent under: an address reused by another code object
  // gets a new id, so the collector's names never alias.
  struct Key {
    uint64_t code, stamp;
    bool operator==(const Key& o) const { return code == o.code && stamp == o.stamp; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.code * 0x9e3779b97f4a7c15ull ^ k.stamp; }
  };
  std::unordered_map<Key, uint64_t, KeyHash> sent;
  uint64_t next_id = 1;
  std::vector<pystack::PyFrame> frames;
  std::vector<uint64_t> ids;
};

State& Get() {
  static State* s = new State();  // never destroyed: callbacks may run during exit
  return *s;
}

bool StartsWith(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

bool Contains(const char* s, const char* part) { return std::strstr(s, part) != nullptr; }

}  // namespace

StackPolicy StackPolicyForName(const char* n) {
  if (!n) return StackPolicy::kNone;
  if (StartsWith(n, "cudaLaunch") || StartsWith(n, "cuLaunch") ||
      StartsWith(n, "cudaGraphLaunch") || StartsWith(n, "cuGraphLaunch")) {
    return StackPolicy::kLaunch;
  }
  if (Contains(n, "Synchronize")) return StackPolicy::kAlways;
  // Copies and memsets: the synchronous ones; async copies when their host
  // memory is pageable (synchronous too: the callback tests the pointer).
  const bool copy = StartsWith(n, "cudaMemcpy") || StartsWith(n, "cuMemcpy");
  if ((copy || StartsWith(n, "cudaMemset") || StartsWith(n, "cuMemset")) && !Contains(n, "Async")) {
    return StackPolicy::kAlways;
  }
  if (copy) return StackPolicy::kIfPageable;
  if (StartsWith(n, "cudaMalloc") || StartsWith(n, "cudaFree") || StartsWith(n, "cudaHostAlloc") ||
      StartsWith(n, "cuMemAlloc") || StartsWith(n, "cuMemFree") ||
      StartsWith(n, "cuMemHostAlloc") || StartsWith(n, "cuMemCreate") ||
      StartsWith(n, "cuMemRelease") || StartsWith(n, "cuMemMap") || StartsWith(n, "cuMemUnmap")) {
    return StackPolicy::kAlways;
  }
  return StackPolicy::kNone;
}

bool EmitPythonStack(shm::Header* ring, uint32_t correlation, uint32_t tid) {
  if (!ring) return false;
  State& s = Get();
  // try_lock: a thread never waits on another's stack (and a child forked
  // while the lock was held just records no stacks).
  std::unique_lock<std::mutex> lk(s.mu, std::try_to_lock);
  if (!lk.owns_lock()) return false;
  if (!s.tried) {
    s.tried = true;
    auto rt = pystack::PyRuntime::AttachSelf();
    // Walks of every thread state first: a layout this build does not
    // recognize is found here, once, and stacks stay off (a walk that
    // fails while threads come and go is tried again).
    std::vector<pystack::ThreadStack> all;
    if (rt.ok()) {
      for (int i = 0; i < pystack::PyRuntime::kMismatchedWalks; ++i) {
        if ((*rt)->AllStacks(&all, 1) || (*rt)->layout_mismatch()) break;
      }
      if (!(*rt)->layout_mismatch()) s.rt = std::move(*rt);
    }
  }
  if (!s.rt) return false;
  if (!s.rt->OwnStack(&s.frames, shm::kMaxPyDepth) || s.frames.empty()) return false;
  // Names of code objects not sent yet, before the stack that uses them.
  s.ids.clear();
  for (const pystack::PyFrame& f : s.frames) {
    auto known = s.sent.find({f.code, f.stamp});
    if (known != s.sent.end()) {
      s.ids.push_back(known->second);
      continue;
    }
    const pystack::CodeInfo* c = s.rt->Code(f);
    if (!c) {
      s.ids.push_back(0);  // unknown to the collector: "?"
      continue;
    }
    if (s.sent.size() > 200000) s.sent.clear();  // ids stay unique: names are sent again
    const uint64_t id = s.next_id++;
    const uint32_t fn = static_cast<uint32_t>(std::min<size_t>(c->function.size(), 1024));
    const uint32_t file = static_cast<uint32_t>(std::min<size_t>(c->file.size(), 2048));
    shm::PyCodeName head{id, fn, file};
    uint8_t* p = shm::Reserve(ring, shm::Kind::kPyCode, sizeof(head) + fn + file);
    if (!p) return false;
    std::memcpy(p, &head, sizeof(head));
    std::memcpy(p + sizeof(head), c->function.data(), fn);
    std::memcpy(p + sizeof(head) + fn, c->file.data(), file);
    shm::Publish(p, shm::Kind::kPyCode, sizeof(head) + fn + file);
    s.sent.emplace(State::Key{f.code, f.stamp}, id);
    s.ids.push_back(id);
  }
  const auto depth = static_cast<uint32_t>(s.frames.size());
  const uint32_t bytes = sizeof(shm::PyStackHead) + depth * sizeof(shm::PyStackFrame);
  uint8_t* p = shm::Reserve(ring, shm::Kind::kPyStack, bytes);
  if (!p) return false;
  shm::PyStackHead head{correlation, tid, depth, 0};
  std::memcpy(p, &head, sizeof(head));
  // Root first, as the collector's interner wants.
  for (uint32_t i = 0; i < depth; ++i) {
    const pystack::PyFrame& f = s.frames[depth - 1 - i];
    shm::PyStackFrame out{s.ids[depth - 1 - i], f.line, 0};
    std::memcpy(p + sizeof(head) + i * sizeof(out), &out, sizeof(out));
  }
  shm::Publish(p, shm::Kind::kPyStack, bytes);
  return true;
}

}  // namespace stepscope
