// HostSampler: samples every thread of one traced process from outside, at a
// fixed rate, on its own thread (py-spy style: the program pays nothing but
// the share of a core this thread takes).
//
// Each tick, for each thread in /proc/PID/task:
//  * stat (state R/S/D/T), schedstat (CPU time in ns; stat's utime+stime
//    when absent), comm (its name; re-read every second);
//  * for a thread that is not running, syscall: the system call it sits in
//    and its arguments. futex on the GIL's address -> blocked on the GIL;
//    other futexes -> a lock; poll/select/epoll/read/recv -> I/O, the fd
//    named from /proc/PID/fd (pipe, socket, a file); nanosleep -> sleep;
//  * its Python stack (capture/pystack), one walk of every thread state per
//    tick.
// The direct child processes of PID (DataLoader workers, a tokenizer pool)
// are sampled the same way, their threads under their own tids, unless a
// sampler of their own exists (a traced rank under torchrun); at most 64.
// Blocking CUDA calls are recognized afterwards, from the API rows of the
// same thread (TraceCollector). Files of a thread are kept open and re-read
// with pread, so a tick costs a few system calls per thread.
//
// Without ptrace permission on the process (process_vm_readv and
// /proc/PID/task/N/syscall answer EPERM) the sampler warns once and records
// states from stat only, with no stacks.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "format/records.h"

namespace stepscope {

struct HostSample {
  int64_t realtime_ns = 0;
  uint32_t tid = 0;
  ThreadState state = ThreadState::kUnknown;
  std::string wait_name;    // "futex", "poll", "read", "nanosleep", "GIL"; empty when running
  std::string wait_detail;  // "pipe", "socket", a file path; empty when none
  uint32_t stack = 0;       // the sampler's stack id (HostBatch::stacks); 0: no Python stack
  int64_t cpu_ns = -1;      // CPU time since the thread's previous sample; -1 unknown
};

struct HostFrameText {
  std::string function;
  std::string file;
  int line = 0;
};

// A native stack sample (NativeSampler) of a thread of the traced process.
struct HostNativeSample {
  int64_t realtime_ns = 0;
  uint32_t tid = 0;
  uint32_t stack = 0;  // HostBatch::native_stacks id; 0: none
};

// What a Drain hands over.
struct HostBatch {
  std::vector<HostSample> samples;
  // Stacks first seen since the last drain: id -> frames, root first.
  std::vector<std::pair<uint32_t, std::vector<HostFrameText>>> stacks;
  std::map<uint32_t, std::string> thread_names;  // new or changed names
  uint64_t dropped = 0;                          // samples lost (the collector was behind)
  std::vector<HostNativeSample> native_samples;
  // Native stacks first seen since the last drain: id -> frames, root first
  // (file: the library's base name; line 0).
  std::vector<std::pair<uint32_t, std::vector<HostFrameText>>> native_stacks;
};

class HostSampler {
 public:
  // Starts sampling `pid` and its child processes at `hz` (> 0). With
  // `native_hz` > 0 the threads of `pid` (not its children) also get native
  // stack samples every 1/native_hz s of their CPU time (native_stack.h),
  // where perf events are allowed. Default: STEPSCOPE_NATIVE_HZ, else off.
  static std::unique_ptr<HostSampler> Start(pid_t pid, int hz, int native_hz = -1);
  ~HostSampler();
  HostSampler(const HostSampler&) = delete;
  HostSampler& operator=(const HostSampler&) = delete;

  // Samples only while `(*flags & bit) != 0` (the tracer's recording windows);
  // call before the first sample is wanted. `flags` must outlive Stop().
  void SetGate(const std::atomic<uint32_t>* flags, uint32_t bit) {
    gate_bit_ = bit;
    gate_.store(flags, std::memory_order_release);
  }

  // Moves out what was sampled since the last call.
  void Drain(HostBatch* out);
  // Stops the thread (idempotent); Drain still returns what remains.
  void Stop();

  pid_t pid() const { return pid_; }
  int hz() const { return hz_; }
  uint64_t samples_taken() const { return taken_.load(); }
  uint64_t ticks_missed() const { return missed_.load(); }
  // "on" (stacks read, Python x.y.z), "unavailable: why", or "" (not yet known).
  std::string python_status() const;
  // The process ran Python: its runtime was found at some point (even if
  // its stacks were turned off later).
  bool python_seen() const { return python_seen_.load(); }
  // Native stacks: "on (N threads)", "off", "unavailable: why", "" (not started yet).
  std::string native_status() const;
  int native_hz() const { return native_hz_; }
  // CPU time between two native samples of a thread; 0 when off.
  int64_t native_period_ns() const { return native_hz_ > 0 ? 1'000'000'000 / native_hz_ : 0; }
  uint64_t native_samples_lost() const { return native_lost_.load(); }
  // Measured cost: the sampler thread's own CPU time so far.
  int64_t own_cpu_ns() const { return own_cpu_ns_.load(); }

 private:
  struct Thread;
  struct Proc;
  HostSampler(pid_t pid, int hz);
  void Run();
  void NativeTick(bool keep, int64_t now_mono);
  void Tick(int64_t now_realtime, int64_t now_mono);
  // TickProc's steps.
  void AttachPython(Proc& ps, int64_t now_mono);
  bool ReadThreads(Proc& ps, int64_t now_realtime, int64_t now_mono, std::vector<HostSample>* out,
                   std::vector<Thread*>* sampled, std::map<uint32_t, std::string>* names);
  bool SampleThread(Proc& ps, Thread& t, uint32_t tid, int64_t now_realtime, int64_t now_mono,
                    uint64_t gil_begin, uint64_t gil_end, HostSample* sample,
                    std::map<uint32_t, std::string>* names);
  void WalkPythonStacks(Proc& ps);
  void TickProc(Proc& ps, int64_t now_realtime, int64_t now_mono, std::vector<HostSample>* out,
                std::map<uint32_t, std::string>* names);
  uint32_t InternStack(const std::vector<uint64_t>& key, const std::vector<HostFrameText>& frames);

  const pid_t pid_;
  const int hz_;
  int native_hz_ = 0;
  std::atomic<uint64_t> native_lost_{0};
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> taken_{0}, missed_{0};
  std::atomic<const std::atomic<uint32_t>*> gate_{nullptr};
  uint32_t gate_bit_ = 0;  // written before gate_ (release)
  std::atomic<int64_t> own_cpu_ns_{0};
  std::atomic<bool> python_seen_{false};

  // Sampler thread only.
  struct Impl;
  std::unique_ptr<Impl> impl_;

  mutable std::mutex mu_;  // guards pending_, python_status_, native_status_
  HostBatch pending_;
  std::string python_status_;
  std::string native_status_;
};

// The state of a thread from its /proc state letter and the contents of its
// /proc/.../syscall file ("running", "-1 sp pc", or "NR a0 a1 a2 a3 a4 a5 sp
// pc"). `gil` is the [begin, end) address range of the GIL (0, 0 unknown);
// `fd_kind(fd)` names what an fd is ("pipe", "socket", a path).
struct ThreadWait {
  ThreadState state = ThreadState::kUnknown;
  std::string name;
  std::string detail;
  int fd = -1;            // the fd it waits on (read, recv, epoll_wait, ...); -1 none
  uint64_t poll_fds = 0;  // poll/ppoll: the address of the pollfd array (to name its first fd)
};
ThreadWait ClassifyThread(char proc_state, const std::string& syscall_text, uint64_t gil_begin,
                          uint64_t gil_end);
// "pipe:[123]" -> "pipe", "socket:[9]" -> "socket", "anon_inode:[eventfd]" -> "eventfd",
// a path stays a path.
std::string FdKind(const std::string& link);

}  // namespace stepscope
