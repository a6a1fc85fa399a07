// Reads the Python stacks of a CPython 3.11-3.13 process from outside (the
// collector's sampler) or of the calling thread from inside (the tracer's
// CUDA API callback), without the GIL and without running any Python code.
//
// Every read goes through process_vm_readv (also on our own pid): a stale or
// bad pointer, a frame that changed under the reader, a process that exited,
// all end as a failed read (EFAULT/ESRCH), never as a crash. The runtime is
// found from the ELF symbols `_PyRuntime`, `Py_Version` and `PyCode_Type` of
// libpython or the python executable (see /proc/PID/maps), then:
//   _PyRuntime.interpreters.head -> interpreter -> threads.head -> thread
//   state (native_thread_id = the tid) -> current frame -> previous ...
// A frame names its code object; a code object (validated by its type
// pointer) gives qualname, filename, first line and the location table that
// maps the frame's instruction to its line. Code objects are read once and
// cached by address and identity stamp: a walk reads the immutable fields of
// each frame's code object (first line, version, names, file and line table
// pointers) with the next frame, in the same process_vm_readv, so a code
// object freed and another allocated at the same address is a different
// key, never the old names and lines.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capture/pystack/py_layout.h"
#include "common/status.h"

namespace stepscope::pystack {

// Another process's (or our own) memory.
class Memory {
 public:
  explicit Memory(pid_t pid) : pid_(pid) {}
  bool Read(uint64_t addr, void* out, size_t n) const;
  template <typename T>
  bool Get(uint64_t addr, T* out) const {
    return Read(addr, out, sizeof(T));
  }
  pid_t pid() const { return pid_; }
  // errno of the last failed read (EPERM: no ptrace permission).
  int last_errno() const { return last_errno_; }

 private:
  pid_t pid_;
  mutable int last_errno_ = 0;
};

struct CodeInfo {
  std::string function;  // co_qualname
  std::string file;      // co_filename
  int firstlineno = 0;
  std::vector<uint8_t> linetable;
};

// One Python frame: its code object and the line being executed. `code` and
// `stamp` together name the code object: an address is reused once its code
// object is freed, the stamp (a hash of the object's immutable fields read
// with the frame) then differs.
struct PyFrame {
  uint64_t code = 0;
  uint64_t stamp = 0;
  int line = 0;
  bool operator==(const PyFrame& o) const {
    return code == o.code && stamp == o.stamp && line == o.line;
  }
};

struct ThreadStack {
  uint32_t tid = 0;
  bool skipped = false;         // not walked (the caller's skip said so)
  std::vector<PyFrame> frames;  // leaf (innermost) first
};

class PyRuntime {
 public:
  // The runtime of process `pid` (its maps and ELF files). NotFound when the
  // process has no Python (yet); Unavailable for an unsupported version.
  static StatusOr<std::unique_ptr<PyRuntime>> Attach(pid_t pid);
  // The runtime of this process (dlsym); NotFound without Python.
  static StatusOr<std::unique_ptr<PyRuntime>> AttachSelf();

  // Stacks of every thread state of every interpreter. False when the walk
  // could not even start (e.g. no permission: memory().last_errno()).
  // `skip(tid)` true: the thread's frames are not read (a sampler that knows
  // the thread has not run since its last walk keeps its previous stack).
  bool AllStacks(std::vector<ThreadStack>* out, size_t max_depth = 128,
                 bool (*skip)(void* ctx, uint32_t tid) = nullptr, void* skip_ctx = nullptr);
  // The stack of the calling thread (in-process only).
  bool OwnStack(std::vector<PyFrame>* out, size_t max_depth = 128);
  // The code object of a frame (cached by address and stamp); nullptr when
  // unreadable or no longer the object the frame was read with.
  const CodeInfo* Code(const PyFrame& frame);
  // [begin, end) of the GIL's mutex/condition state; {0, 0} when unknown.
  std::pair<uint64_t, uint64_t> GilRange();

  const PyLayout& layout() const { return *layout_; }
  const Memory& memory() const { return mem_; }
  std::string version() const;  // "3.12.3"
  // Walks in a row (kMismatchedWalks) found the head thread state, stable
  // while read, not pointing back at its interpreter: the struct layout is
  // not the expected one; stop using it. A thread state that vanishes
  // mid-walk (thread churn) is not a mismatch: the walk starts again.
  bool layout_mismatch() const { return layout_mismatch_; }
  static constexpr int kMismatchedWalks = 3;

 private:
  PyRuntime(pid_t pid, const PyLayout* layout) : mem_(pid), layout_(layout) {}
  bool WalkFrames(uint64_t frame, std::vector<PyFrame>* out, size_t max_depth);
  enum class ListWalk { kOk, kUnreadable, kHeadMismatch };
  ListWalk WalkThreads(uint64_t interp, std::vector<ThreadStack>* out, size_t max_depth,
                       bool (*skip)(void* ctx, uint32_t tid), void* skip_ctx);
  // A code object's identity: a hash of its StampSpan() bytes from
  // co_firstlineno (never 0).
  uint64_t StampOf(const uint8_t* span) const;
  uint32_t StampSpan() const;
  // One read of a thread state: next, native id, current frame.
  bool ReadThreadState(uint64_t ts, uint64_t* next, uint64_t* native, uint64_t* frame,
                       uint64_t* interp);
  bool ReadString(uint64_t obj, std::string* out);

  Memory mem_;
  const PyLayout* layout_;
  uint64_t runtime_ = 0;
  uint64_t code_type_ = 0;
  uint32_t hexversion_ = 0;
  uint64_t gil_ = 0;
  bool layout_mismatch_ = false;
  int mismatched_walks_ = 0;                   // in a row
  uint64_t (*this_thread_state_)() = nullptr;  // in-process: PyGILState_GetThisThreadState
  struct Cached {
    CodeInfo info;
    bool ok = false;
  };
  struct CodeKey {
    uint64_t addr, stamp;
    bool operator==(const CodeKey& o) const { return addr == o.addr && stamp == o.stamp; }
  };
  struct CodeKeyHash {
    size_t operator()(const CodeKey& k) const { return k.addr * 0x9e3779b97f4a7c15ull ^ k.stamp; }
  };
  std::unordered_map<CodeKey, Cached, CodeKeyHash> codes_;
  // Scratch for WalkFrames (a sampler walks many threads per tick).
  std::vector<uint64_t> walk_codes_, walk_instrs_, walk_stamps_;
};

}  // namespace stepscope::pystack
