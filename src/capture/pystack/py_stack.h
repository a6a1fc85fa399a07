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
// pointers) in the same walk, so a code object freed and another allocated
// at the same address is a different key, never the old names and lines.
//
// A walk costs a few process_vm_readv, not one per frame (WalkOptions):
// whole pages around the leaf frame in one call (a thread's frames live in
// its data-stack chunks, callers below callees), another window around a
// frame outside it, then the stamps of all distinct code objects in one.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

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
  // One process_vm_readv: the bytes read (whole iovecs in order, then
  // perhaps part of the first one that failed), -1 when none (errno set).
  ssize_t ReadV(const iovec* local, const iovec* remote, unsigned long n) const;
  pid_t pid() const { return pid_; }
  // errno of the last failed read (EPERM: no ptrace permission).
  int last_errno() const { return last_errno_; }
  // process_vm_readv calls made so far (what a walk costs in system calls).
  uint64_t reads() const { return reads_; }
  // Tests: the remote bytes [begin, end) read as an unmapped page does: Read
  // fails, ReadV stops at the first iovec that reaches them (after the bytes
  // of that iovec before them). begin == end: none.
  void FailReadsIn(uint64_t begin, uint64_t end) {
    fail_begin_ = begin;
    fail_end_ = end;
  }

 private:
  bool Fails(uint64_t addr, size_t n) const { return addr < fail_end_ && addr + n > fail_begin_; }
  pid_t pid_;
  mutable int last_errno_ = 0;
  mutable uint64_t reads_ = 0;
  uint64_t fail_begin_ = 0, fail_end_ = 0;
};

// How a walk reads a thread's frames. The default reads whole pages around
// the leaf frame in one process_vm_readv and serves the frames found there
// from that copy (a thread's frames sit in its data-stack chunks, a caller
// below its callee), another window around a frame outside it (a generator's
// frame in its heap object, an older chunk, 3.12's shim frames on the C
// stack), then all distinct code objects' stamp spans in one more.
// `per_frame`: one process_vm_readv per frame (with the previous frame's
// code object stamp), the reference the tests compare the windowed walk
// against; both give the same frames for the same memory.
struct WalkOptions {
  bool per_frame = false;
  uint32_t window_bytes = 16384;  // rounded down to whole pages, at least one, at most 64
};

struct CodeInfo {
  std::string function;  // co_qualname
  std::string file;      // co_filename
  int firstlineno = 0;
  std::vector<LineSpan> lines;  // co_linetable, decoded once (LineInSpans)
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
  // The frames from the _PyInterpreterFrame at address `frame` outward, as a
  // thread's walk reads them from its current frame. Any address is safe: a
  // bad one is a failed (false) or short walk. For tests and benchmarks.
  bool WalkFrom(uint64_t frame, std::vector<PyFrame>* out, size_t max_depth = 128) {
    out->clear();
    return WalkFrames(frame, out, max_depth);
  }
  void set_walk_options(const WalkOptions& o) { walk_options_ = o; }
  const WalkOptions& walk_options() const { return walk_options_; }
  // [begin, end) of the GIL's mutex/condition state; {0, 0} when unknown.
  std::pair<uint64_t, uint64_t> GilRange();

  const PyLayout& layout() const { return *layout_; }
  const Memory& memory() const { return mem_; }
  Memory* mutable_memory() { return &mem_; }  // tests (Memory::FailReadsIn)
  std::string version() const;                // "3.12.3"
  // Walks in a row (kMismatchedWalks) found the head thread state, stable
  // while read, not pointing back at its interpreter: the struct layout is
  // not the expected one; stop using it. A thread state that vanishes
  // mid-walk (thread churn) is not a mismatch: the walk starts again.
  bool layout_mismatch() const { return layout_mismatch_; }
  static constexpr int kMismatchedWalks = 3;

 private:
  PyRuntime(pid_t pid, const PyLayout* layout) : mem_(pid), layout_(layout) {}
  bool WalkFrames(uint64_t frame, std::vector<PyFrame>* out, size_t max_depth);
  // A frame's code object, previous frame and instruction from its bytes (at
  // least frame_owner + 1 of them); false for a shim frame (3.12's C-stack
  // entry frames), which names no code object of its own.
  bool DecodeFrame(const uint8_t* buf, uint64_t* code, uint64_t* previous, uint64_t* instr) const;
  bool WalkFramesPerFrame(uint64_t frame, size_t max_depth);
  bool WalkFramesWindowed(uint64_t frame, size_t max_depth);
  // One frame's first `n` bytes: from a window, else a new window around it,
  // else a read of its own.
  bool ReadFrame(uint64_t frame, uint8_t* out, size_t n);
  // walk_stamps_ of walk_codes_: each distinct code object's stamp span, in
  // as few process_vm_readv as the readable ones allow.
  void ReadStampsBatched();
  // The stamps of `members` (walk_unique_ indices by address) read in runs,
  // one iovec each; `merge`: spans under a page apart share a run. The
  // members of a run of several not read whole go to `retry`.
  void ReadStampRuns(const std::vector<uint32_t>& members, bool merge,
                     std::vector<uint32_t>* retry);
  // walk_codes_/instrs_/stamps_ to frames with lines.
  void AppendFrames(std::vector<PyFrame>* out);
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
  std::vector<uint64_t> walk_unique_;  // distinct code objects, their stamps below
  std::vector<uint64_t> walk_unique_stamps_;
  std::vector<uint32_t> walk_slot_;   // walk_codes_[i] is walk_unique_[walk_slot_[i]]
  std::vector<uint8_t> table_bytes_;  // a code object's co_linetable while Code() decodes it
  std::vector<iovec> walk_local_, walk_remote_;
  struct StampRun {
    uint64_t begin, end;   // the addresses read: the first span's start, the last one's end
    uint32_t first, last;  // its members: ReadStampRuns's members[first..last]
  };
  std::vector<uint32_t> walk_order_;  // walk_unique_ indices by address
  std::vector<StampRun> walk_runs_;
  std::vector<uint8_t> walk_run_bytes_;
  std::vector<uint32_t> walk_rest_;  // members of runs not read whole, read again one by one
  // A copy of the readable whole pages [lo, hi) of the process's memory;
  // bytes[a - start] is the byte at address a.
  struct PageWindow {
    uint64_t start = 0, lo = 0, hi = 0;
    std::vector<uint8_t> bytes;
    // Up to `pages` pages from the one holding `addr`, downward or upward, in
    // one process_vm_readv (which stops at the first unreadable page). Pages
    // past the frames of interest may belong to another mapping: they are
    // copied, never used unless a frame pointer leads there.
    void Fill(const Memory& mem, uint64_t addr, size_t pages, bool up);
    bool Copy(uint64_t addr, void* out, size_t n) const;
  };
  PageWindow windows_[2];   // the leaf's, the last one read around another frame
  uint64_t last_miss_ = 0;  // the last frame found outside the leaf's window
  // While OwnStack walks: the calling thread's own C stack from the walk's
  // frame to the stack's top, [own_lo_, own_hi_). It is mapped, and does not
  // change while the thread is in here: frames there (3.12's shim frames)
  // are copied directly, not read through process_vm_readv. {0, 0} otherwise.
  uint64_t own_lo_ = 0, own_hi_ = 0;
  WalkOptions walk_options_;
};

}  // namespace stepscope::pystack
