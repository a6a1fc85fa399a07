// Native stacks of a traced process's threads, from outside (docs/host.md,
// "Native samples").
//
// The kernel samples each watched thread on its own CPU time
// (perf_event_open, PERF_COUNT_SW_TASK_CLOCK; user space only, so
// perf_event_paranoid <= 2 and ptrace access to the process are enough) and
// hands over, per sample, the user registers and a copy of the top of the
// user stack. The collector unwinds that copy with the call-frame
// information of the ELF files mapped (libunwind, remote mode), as perf
// does: it needs no frame pointers.
//
// Pieces, each tested on its own: ElfSymbols (the function symbols and
// loadable segments of one ELF file), ParsePerfSample (one ring record),
// ParseMaps (/proc/PID/maps), StackUnwinder (the frames of one sample), and
// NativeSampler (the perf events and their rings).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace stepscope {

// ---- ELF symbols ----

class ElfSymbols {
 public:
  struct Symbol {
    uint64_t addr;  // link-time virtual address
    uint64_t size;  // 0: up to the next symbol
    uint32_t name;  // offset into names_
  };
  struct Segment {
    uint64_t vaddr, offset, filesz, memsz;
    bool exec;
  };
  // Parses a whole ELF64 image (little-endian, x86-64 or AArch64): its
  // function symbols from .symtab and .dynsym, and its PT_LOAD segments.
  // `data` must outlive the object (ReadVaddr reads from it).
  static StatusOr<ElfSymbols> Parse(const uint8_t* data, size_t size);

  // The function whose [addr, addr + size) holds `vaddr`; -1 none.
  int Find(uint64_t vaddr) const;
  const Symbol& symbol(int i) const { return symbols_[static_cast<size_t>(i)]; }
  const char* name(int i) const { return names_.data() + symbols_[static_cast<size_t>(i)].name; }
  size_t size() const { return symbols_.size(); }
  // The link-time address of file offset `off`, in an executable segment; false if none.
  bool VaddrOfOffset(uint64_t off, uint64_t* vaddr) const;
  // Reads `n` bytes at link-time address `vaddr` from the file image; false
  // when no loadable segment holds them in the file.
  bool ReadVaddr(uint64_t vaddr, void* out, size_t n) const;
  // The link-time address of the PT_GNU_EH_FRAME segment (.eh_frame_hdr); 0 none.
  uint64_t eh_frame_hdr() const { return eh_frame_hdr_; }
  const std::vector<Segment>& segments() const { return segments_; }
  uint16_t machine() const { return machine_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint16_t machine_ = 0;
  std::vector<Symbol> symbols_;  // sorted by addr, no duplicates
  std::string names_;
  std::vector<Segment> segments_;
  uint64_t eh_frame_hdr_ = 0;
};

// ---- perf ring records ----

// One PERF_RECORD_SAMPLE of the layout NativeSampler asks for (sample_type
// IP | TID | TIME | REGS_USER | STACK_USER; regs: the frame, stack and
// instruction pointers). `stack` points into the record.
struct PerfSample {
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t regs_abi = 0;
  uint64_t fp = 0, sp = 0, pc = 0;  // from the user registers
  const uint8_t* stack = nullptr;
  uint64_t stack_size = 0;  // valid bytes (dyn_size)
};
// Parses the body of a PERF_RECORD_SAMPLE (after the 8-byte header) of
// `len` bytes; false when it is malformed or truncated.
bool ParsePerfSample(const uint8_t* body, size_t len, PerfSample* out);

// ---- /proc/PID/maps ----

struct Mapping {
  uint64_t start, end, offset;
  std::string path;
};
// The executable file mappings of a maps text ("r-xp" with a path).
std::vector<Mapping> ParseMaps(const std::string& text);

// ---- Unwinding ----

struct NativeFrameText {
  std::string function;  // demangled; "[lib.so]" when no symbol covers the address
  std::string module;    // the file's base name
};

// Unwinds and symbolizes the samples of one process from its executable
// mappings and the ELF files behind them (read once, kept mapped): libunwind
// in its remote mode, reading the call-frame information (.eh_frame_hdr /
// .eh_frame) from those files and the stack from the sample's copy.
class StackUnwinder {
 public:
  explicit StackUnwinder(std::vector<Mapping> maps);
  ~StackUnwinder();
  StackUnwinder(const StackUnwinder&) = delete;
  StackUnwinder& operator=(const StackUnwinder&) = delete;

  // Frames of one sample, innermost first, as frame ids (see frame()); at
  // most `max_frames`. Stops where the unwinding information or the stack
  // copy ends.
  std::vector<uint32_t> Unwind(uint64_t pc, uint64_t sp, uint64_t fp, const uint8_t* stack,
                               uint64_t stack_size, size_t max_frames = 128);
  // Replaces the mappings (a library loaded since); files already read stay.
  void SetMaps(std::vector<Mapping> maps);
  // Whether `addr` falls in no known executable mapping (time to re-read the maps).
  bool Unmapped(uint64_t addr) const;
  const NativeFrameText& frame(uint32_t id) const { return frames_[id]; }
  size_t frames() const { return frames_.size(); }

  struct Module;
  struct Placed {     // one module at its load address
    uint64_t lo, hi;  // runtime range of its loadable segments
    uint64_t bias;    // runtime address - link-time address
    Module* mod;
  };
  // For the libunwind callbacks.
  const Placed* PlacedOf(uint64_t addr) const;
  bool ReadWord(uint64_t addr, uint64_t* out) const;  // from the stack copy or a file

 private:
  const Mapping* MappingOf(uint64_t addr) const;
  Module* ModuleOf(const std::string& path);
  uint32_t FrameOf(const Placed& p, uint64_t addr, bool return_address);

  std::vector<Mapping> maps_;   // executable ones, sorted by start
  std::vector<Placed> placed_;  // sorted by lo
  std::map<std::string, std::unique_ptr<Module>> modules_;
  std::vector<NativeFrameText> frames_;                          // id -> text
  std::map<std::pair<const Module*, int>, uint32_t> frame_ids_;  // (module, symbol) -> id
  void* as_ = nullptr;                                           // unw_addr_space_t
  // The sample being unwound.
  uint64_t sp_ = 0, pc_ = 0, fp_ = 0;
  const uint8_t* stack_ = nullptr;
  uint64_t stack_size_ = 0;
  friend struct UnwindAccess;
};

// ---- The sampler ----

struct NativeSample {
  int64_t realtime_ns = 0;
  uint32_t tid = 0;
  std::vector<uint32_t> frames;  // StackUnwinder frame ids, innermost first
};

class NativeSampler {
 public:
  // Samples the threads of `pid` given to Watch() every `period_us` of their
  // CPU time. nullptr (and `why`) when perf events are not allowed here.
  static std::unique_ptr<NativeSampler> Create(pid_t pid, int period_us, std::string* why);
  ~NativeSampler();
  NativeSampler(const NativeSampler&) = delete;
  NativeSampler& operator=(const NativeSampler&) = delete;

  // Starts sampling thread `tid` (once; false when its event cannot be
  // opened: the thread is gone, or the locked-memory budget is spent).
  bool Watch(pid_t tid);
  bool watching(pid_t tid) const { return rings_.count(tid) != 0; }
  std::vector<pid_t> watched_tids() const;
  // Stops sampling `tid`, reading its ring first (into `out`; nullptr: dropped).
  void Unwatch(pid_t tid, std::vector<NativeSample>* out);
  size_t watched() const { return rings_.size(); }
  // Pauses (false) or resumes (true) the sampling of every watched thread,
  // and of those watched later: outside the tracer's recording windows the
  // threads pay nothing.
  void SetEnabled(bool on);
  bool enabled() const { return enabled_; }
  // Reads every ring; appends the samples found (nullptr: drops them).
  void Poll(std::vector<NativeSample>* out);
  const StackUnwinder& unwinder() const { return *unwinder_; }
  uint64_t lost() const { return lost_; }

 private:
  struct Ring;
  NativeSampler(pid_t pid, int period_us);
  void PollRing(Ring& r, std::vector<NativeSample>* out, bool* remap);
  void ReadMaps();

  const pid_t pid_;
  const int period_us_;
  std::unique_ptr<StackUnwinder> unwinder_;
  std::unordered_map<pid_t, std::unique_ptr<Ring>> rings_;
  int64_t realtime_minus_mono_ = 0;
  uint64_t lost_ = 0;
  int64_t maps_read_mono_ = 0;
  bool enabled_ = true;
};

}  // namespace stepscope
