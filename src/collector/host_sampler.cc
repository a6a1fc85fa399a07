#include "collector/host_sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "capture/clock.h"
#include "capture/pystack/py_stack.h"
#include "collector/native_stack.h"
#include "common/env_contract.h"
#include "common/log.h"

namespace stepscope {
namespace {

constexpr size_t kMaxPending = 1'000'000;       // samples held for the collector (~100 MB at most)
constexpr size_t kMaxNativeThreads = 16;        // threads with native samples at once
constexpr int64_t kNativeBusyNs = 100'000'000;  // used CPU this recently: worth watching
constexpr int64_t kNativeIdleNs = 1'000'000'000;  // idle this long: its place may go
constexpr int64_t kCommRefreshNs = 1'000'000'000;
constexpr int64_t kAttachRetryNs = 500'000'000;
constexpr int64_t kChildScanNs = 500'000'000;
constexpr size_t kMaxChildren = 64;

struct SyscallName {
  long nr;
  const char* name;
  ThreadState state;
  int fd_arg;  // which argument is an fd to name; -1 none
};

// The system calls a blocked thread is worth naming in. Numbers are the
// build's own (x86-64 or aarch64): the collector runs on the traced machine.
const SyscallName kSyscalls[] = {
    {SYS_futex, "futex", ThreadState::kBlockedLock, -1},
#ifdef SYS_poll
    {SYS_poll, "poll", ThreadState::kBlockedIo, -1},
#endif
    {SYS_ppoll, "poll", ThreadState::kBlockedIo, -1},
#ifdef SYS_select
    {SYS_select, "select", ThreadState::kBlockedIo, -1},
#endif
    {SYS_pselect6, "select", ThreadState::kBlockedIo, -1},
#ifdef SYS_epoll_wait
    {SYS_epoll_wait, "epoll_wait", ThreadState::kBlockedIo, 0},
#endif
    {SYS_epoll_pwait, "epoll_wait", ThreadState::kBlockedIo, 0},
    {SYS_read, "read", ThreadState::kBlockedIo, 0},
    {SYS_readv, "read", ThreadState::kBlockedIo, 0},
    {SYS_pread64, "read", ThreadState::kBlockedIo, 0},
    {SYS_recvfrom, "recv", ThreadState::kBlockedIo, 0},
    {SYS_recvmsg, "recv", ThreadState::kBlockedIo, 0},
    {SYS_write, "write", ThreadState::kBlockedIo, 0},
    {SYS_writev, "write", ThreadState::kBlockedIo, 0},
    {SYS_sendto, "send", ThreadState::kBlockedIo, 0},
    {SYS_sendmsg, "send", ThreadState::kBlockedIo, 0},
    {SYS_accept, "accept", ThreadState::kBlockedIo, 0},
    {SYS_accept4, "accept", ThreadState::kBlockedIo, 0},
    {SYS_connect, "connect", ThreadState::kBlockedIo, 0},
    {SYS_nanosleep, "nanosleep", ThreadState::kSleep, -1},
    {SYS_clock_nanosleep, "nanosleep", ThreadState::kSleep, -1},
    {SYS_wait4, "wait", ThreadState::kBlockedOther, -1},
    {SYS_waitid, "wait", ThreadState::kBlockedOther, -1},
    {SYS_sched_yield, "sched_yield", ThreadState::kRunning, -1},
    {SYS_rt_sigtimedwait, "sigwait", ThreadState::kBlockedOther, -1},
};

// pread of a whole small /proc file from offset 0 (regenerated each time).
bool ReadAt0(int fd, char* buf, size_t cap, size_t* len) {
  const ssize_t n = ::pread(fd, buf, cap - 1, 0);
  if (n < 0) return false;
  buf[n] = 0;
  *len = static_cast<size_t>(n);
  return true;
}

int OpenProc(const std::string& path) { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::string FdKind(const std::string& link) {
  if (link.rfind("pipe:", 0) == 0) return "pipe";
  if (link.rfind("socket:", 0) == 0) return "socket";
  if (link.rfind("anon_inode:", 0) == 0) {
    std::string s = link.substr(11);
    if (!s.empty() && s.front() == '[') s = s.substr(1, s.size() >= 2 ? s.size() - 2 : 0);
    return s;
  }
  return link;
}

ThreadWait ClassifyThread(char proc_state, const std::string& syscall_text, uint64_t gil_begin,
                          uint64_t gil_end) {
  ThreadWait w;
  if (proc_state == 'R') {
    w.state = ThreadState::kRunning;
    return w;
  }
  if (proc_state == 'T' || proc_state == 't') {
    w.state = ThreadState::kBlockedOther;
    w.name = "stopped";
    return w;
  }
  if (syscall_text.rfind("running", 0) == 0) {
    w.state = ThreadState::kRunning;
    return w;
  }
  long nr = -1;
  unsigned long long a[6] = {0, 0, 0, 0, 0, 0};
  const int n = std::sscanf(syscall_text.c_str(), "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0],
                            &a[1], &a[2], &a[3], &a[4], &a[5]);
  if (n < 1 || nr < 0) {
    // Blocked outside a system call (a page fault), or unknown (no permission).
    w.state = ThreadState::kBlockedOther;
    w.name = proc_state == 'D' ? "uninterruptible" : "";
    return w;
  }
  for (const SyscallName& s : kSyscalls) {
    if (s.nr != nr) continue;
    w.state = s.state;
    w.name = s.name;
    if (nr == SYS_futex && gil_end > gil_begin && a[0] >= gil_begin && a[0] < gil_end) {
      w.state = ThreadState::kBlockedGil;
      w.name = "GIL";
    }
    const bool is_poll = nr == SYS_ppoll
#ifdef SYS_poll
                         || nr == SYS_poll
#endif
        ;
    const bool is_select = nr == SYS_pselect6
#ifdef SYS_select
                           || nr == SYS_select
#endif
        ;
    if ((is_poll && a[1] == 0) || (is_select && a[0] == 0)) {
      w.state = ThreadState::kSleep;  // no fds: a timeout only
    } else if (is_poll) {
      w.poll_fds = a[0];
    }
    if (s.fd_arg >= 0 && a[s.fd_arg] < (1u << 30)) w.fd = static_cast<int>(a[s.fd_arg]);
    return w;
  }
  w.state = ThreadState::kBlockedOther;
  w.name = "syscall " + std::to_string(nr);
  return w;
}

struct HostSampler::Thread {
  int stat_fd = -1, sched_fd = -1, syscall_fd = -1;
  std::string comm;
  int64_t comm_read_mono = 0;
  int64_t last_cpu_ns = -1;
  int64_t busy_mono = 0;  // when its CPU time last moved
  uint64_t generation = 0;
  // The last sample: a thread that used no CPU since is still there (same
  // state, same wait, same Python stack), so it is not read again.
  bool have_last = false;
  bool reuse = false;   // this tick
  bool walked = false;  // its stack was read since its CPU time last moved
  ThreadState state = ThreadState::kUnknown;
  std::string wait_name, wait_detail;
  uint32_t stack = 0;
  ~Thread() {
    for (int fd : {stat_fd, sched_fd, syscall_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

// One sampled process: the traced one, or one of its child processes.
struct HostSampler::Proc {
  pid_t pid = 0;
  bool child = false;
  std::unique_ptr<pystack::PyRuntime> rt;
  bool python_final = false;  // attach failed for good
  int64_t next_attach_mono = 0;
  int64_t first_attach_mono = 0;
  int failed_walks = 0;
  bool syscall_denied_warned = false;
  std::unordered_map<uint32_t, std::unique_ptr<Thread>> threads;
};

struct HostSampler::Impl {
  Proc main;
  // Native stacks (threads of the main process only).
  std::unique_ptr<NativeSampler> native;
  bool native_tried = false;
  size_t native_cap = 0;  // threads watched at most (lowered when the kernel refuses more)
  std::vector<NativeSample> native_buf;
  std::map<std::vector<uint32_t>, uint32_t> native_stack_ids;  // frame ids -> stack id
  std::map<pid_t, std::unique_ptr<Proc>> children;
  int64_t next_child_scan_mono = 0;
  bool children_capped_warned = false;
  uint64_t generation = 0;
  std::unordered_map<std::string, uint32_t> stack_ids;
  std::vector<pystack::ThreadStack> stacks;
};

namespace {
// Every pid a sampler of this collector process samples as its own (one
// entry per live sampler): a child process that has one (a rank under
// torchrun) is not sampled again by its parent's sampler.
std::mutex g_sampled_mu;
std::multiset<pid_t>& SampledPids() {
  static auto* s = new std::multiset<pid_t>();
  return *s;
}
bool HasOwnSampler(pid_t pid) {
  std::lock_guard<std::mutex> lk(g_sampled_mu);
  return SampledPids().count(pid) != 0;
}

// The direct children of `pid`: /proc/PID/task/*/children (Linux 3.5+,
// CONFIG_PROC_CHILDREN; empty where absent).
std::vector<pid_t> ChildPids(pid_t pid) {
  std::vector<pid_t> out;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task.c_str());
  if (!dir) return out;
  char buf[4096];
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const int fd = ::open((task + "/" + e->d_name + "/children").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    size_t len = 0;
    if (ReadAt0(fd, buf, sizeof(buf), &len)) {
      const char* p = buf;
      char* end = nullptr;
      for (long v = std::strtol(p, &end, 10); end != p; v = std::strtol(p, &end, 10)) {
        if (v > 0) out.push_back(static_cast<pid_t>(v));
        p = end;
      }
    }
    ::close(fd);
  }
  ::closedir(dir);
  return out;
}
}  // namespace

std::unique_ptr<HostSampler> HostSampler::Start(pid_t pid, int hz, int native_hz) {
  std::unique_ptr<HostSampler> s(new HostSampler(pid, hz));
  if (native_hz < 0) {
    const char* e = std::getenv(kEnvNativeHz);
    native_hz = e != nullptr ? std::atoi(e) : 0;
  }
  s->native_hz_ = std::clamp(native_hz, 0, 10000);
  s->impl_ = std::make_unique<Impl>();
  s->impl_->main.pid = pid;
  // The sampler blocks every signal: they belong to the launcher's main thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  HostSampler* raw = s.get();
  try {
    s->thread_ = std::thread([raw] { raw->Run(); });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return s;
}

HostSampler::HostSampler(pid_t pid, int hz) : pid_(pid), hz_(hz) {
  std::lock_guard<std::mutex> lk(g_sampled_mu);
  SampledPids().insert(pid);
}

HostSampler::~HostSampler() {
  Stop();
  std::lock_guard<std::mutex> lk(g_sampled_mu);
  SampledPids().erase(SampledPids().find(pid_));
}

void HostSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string HostSampler::python_status() const {
  std::lock_guard<std::mutex> lk(mu_);
  return python_status_;
}

std::string HostSampler::native_status() const {
  if (native_hz_ == 0) return "off";
  std::lock_guard<std::mutex> lk(mu_);
  return native_status_;
}

// Native samples: started on the first tick. The threads of the main
// process that use CPU are watched, at most kMaxNativeThreads at a time (each
// costs a ring of locked memory, and a perf event on every context switch of
// its thread): one idle for a second makes room for a busy one, so that the
// autograd thread, started at the first backward, finds a place among the
// pool threads that spun at start-up. The rings are read every tick. `keep`
// false (the tracer is not recording): read and dropped, and the sampling
// paused until it records again.
void HostSampler::NativeTick(bool keep, int64_t now_mono) {
  Impl& im = *impl_;
  if (native_hz_ == 0) return;
  if (!im.native_tried) {
    im.native_tried = true;
    im.native_cap = kMaxNativeThreads;
    std::string why;
    im.native = NativeSampler::Create(
        pid_, std::max<int>(1, static_cast<int>(native_period_ns() / 1000)), &why);
    std::lock_guard<std::mutex> lk(mu_);
    if (!im.native) {
      native_status_ = "unavailable: " + why;
      LogWarn("pid %d: no native stacks: %s", static_cast<int>(pid_), why.c_str());
    } else {
      native_status_ = "on";
    }
  }
  if (!im.native) return;
  // Threads gone, and the watched threads by how long they have been idle.
  std::vector<std::pair<int64_t, pid_t>> idle;  // (busy_mono, tid)
  for (pid_t tid : im.native->watched_tids()) {
    auto it = im.main.threads.find(static_cast<uint32_t>(tid));
    if (it == im.main.threads.end()) {
      im.native->Unwatch(tid, keep ? &im.native_buf : nullptr);
    } else if (now_mono - it->second->busy_mono > kNativeIdleNs) {
      idle.push_back({it->second->busy_mono, tid});
    }
  }
  std::sort(idle.begin(), idle.end());
  size_t next_idle = 0;
  for (const auto& [tid, t] : im.main.threads) {
    if (now_mono - t->busy_mono > kNativeBusyNs || im.native->watching(static_cast<pid_t>(tid)))
      continue;
    if (im.native->watched() >= im.native_cap) {
      if (next_idle >= idle.size()) break;
      im.native->Unwatch(idle[next_idle++].second, keep ? &im.native_buf : nullptr);
    }
    if (!im.native->Watch(static_cast<pid_t>(tid)) && (errno == EPERM || errno == ENOMEM)) {
      // The locked-memory budget: no more rings than now.
      im.native_cap = std::max<size_t>(im.native->watched(), 1);
    }
  }
  im.native->Poll(keep ? &im.native_buf : nullptr);
  im.native->SetEnabled(keep);
  native_lost_ = im.native->lost();
  if (!keep || im.native_buf.empty()) {
    im.native_buf.clear();
    return;
  }
  std::vector<HostNativeSample> out;
  std::vector<std::pair<uint32_t, std::vector<HostFrameText>>> fresh;
  out.reserve(im.native_buf.size());
  for (NativeSample& ns : im.native_buf) {
    HostNativeSample h;
    h.realtime_ns = ns.realtime_ns;
    h.tid = ns.tid;
    if (!ns.frames.empty()) {
      auto [it, added] = im.native_stack_ids.try_emplace(
          ns.frames, static_cast<uint32_t>(im.native_stack_ids.size() + 1));
      if (added) {
        std::vector<HostFrameText> frames;
        frames.reserve(ns.frames.size());
        for (auto f = ns.frames.rbegin(); f != ns.frames.rend(); ++f) {  // root first
          const NativeFrameText& t = im.native->unwinder().frame(*f);
          frames.push_back({t.function, t.module, 0});
        }
        fresh.emplace_back(it->second, std::move(frames));
      }
      h.stack = it->second;
    }
    out.push_back(h);
  }
  im.native_buf.clear();
  std::lock_guard<std::mutex> lk(mu_);
  for (auto& f : fresh) pending_.native_stacks.push_back(std::move(f));
  if (pending_.native_samples.size() + out.size() > kMaxPending) {
    pending_.dropped += out.size();
    return;
  }
  for (const HostNativeSample& h : out) pending_.native_samples.push_back(h);
}

void HostSampler::Drain(HostBatch* out) {
  std::lock_guard<std::mutex> lk(mu_);
  *out = std::move(pending_);
  pending_ = HostBatch();
}

void HostSampler::Run() {
  const int64_t period = 1'000'000'000 / hz_;
  int64_t next = MonotonicNs();
  try {
    while (!stop_.load()) {
      const int64_t now = MonotonicNs();
      if (now < next) {
        timespec ts{static_cast<time_t>(next / 1'000'000'000),
                    static_cast<long>(next % 1'000'000'000)};
        ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
        continue;
      }
      if (now - next > period) {
        // Behind (a slow tick, a descheduled sampler): skip, do not burst.
        missed_ += static_cast<uint64_t>((now - next) / period);
        next = now;
      }
      next += period;
      if (::kill(pid_, 0) != 0 && errno == ESRCH) break;
      if (const auto* gate = gate_.load(std::memory_order_acquire);
          gate && (gate->load(std::memory_order_relaxed) & gate_bit_) == 0) {
        NativeTick(false, now);
        continue;  // not recording: no sample
      }
      Tick(RealtimeNs(), now);
      NativeTick(true, now);
      own_cpu_ns_ = ThreadCpuNs();
    }
  } catch (...) {
    LogWarn("pid %d: internal error in the host sampler; sampling stopped", static_cast<int>(pid_));
  }
}

uint32_t HostSampler::InternStack(const std::vector<uint64_t>& key,
                                  const std::vector<HostFrameText>& frames) {
  std::string k(reinterpret_cast<const char*>(key.data()), key.size() * sizeof(uint64_t));
  auto it = impl_->stack_ids.find(k);
  if (it != impl_->stack_ids.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(impl_->stack_ids.size() + 1);
  impl_->stack_ids.emplace(std::move(k), id);
  std::lock_guard<std::mutex> lk(mu_);
  pending_.stacks.emplace_back(id, frames);
  return id;
}

void HostSampler::Tick(int64_t now_realtime, int64_t now_mono) {
  Impl& im = *impl_;
  ++im.generation;
  std::vector<HostSample> out;
  std::map<uint32_t, std::string> names;
  TickProc(im.main, now_realtime, now_mono, &out, &names);
  // Child processes (DataLoader workers, a tokenizer pool): looked for every
  // half second; one that exits or gets a sampler of its own is dropped.
  if (now_mono >= im.next_child_scan_mono) {
    im.next_child_scan_mono = now_mono + kChildScanNs;
    std::set<pid_t> now_children;
    for (pid_t c : ChildPids(pid_)) {
      if (HasOwnSampler(c)) continue;
      now_children.insert(c);
      if (im.children.count(c)) continue;
      if (im.children.size() >= kMaxChildren) {
        if (!im.children_capped_warned) {
          im.children_capped_warned = true;
          LogWarn("pid %d: more than %zu child processes; the others are not sampled",
                  static_cast<int>(pid_), kMaxChildren);
        }
        continue;
      }
      auto p = std::make_unique<Proc>();
      p->pid = c;
      p->child = true;
      im.children.emplace(c, std::move(p));
    }
    for (auto it = im.children.begin(); it != im.children.end();) {
      it = now_children.count(it->first) ? std::next(it) : im.children.erase(it);
    }
  }
  for (auto& [cpid, p] : im.children) TickProc(*p, now_realtime, now_mono, &out, &names);
  taken_ += out.size();
  std::lock_guard<std::mutex> lk(mu_);
  for (auto& [tid, name] : names) pending_.thread_names[tid] = name;
  if (pending_.samples.size() + out.size() > kMaxPending) {
    pending_.dropped += out.size();
    return;
  }
  for (HostSample& s : out) pending_.samples.push_back(std::move(s));
}

// The Python runtime: attached once it is there (the program may not have
// exec'ed python yet), re-attached after an exec.
void HostSampler::AttachPython(Proc& ps, int64_t now_mono) {
  const pid_t pid = ps.pid;
  if (!ps.rt && !ps.python_final && now_mono >= ps.next_attach_mono) {
    auto rt = pystack::PyRuntime::Attach(pid);
    // Often at first (python may be exec'ed by a wrapper a moment later),
    // then every half second.
    if (ps.first_attach_mono == 0) ps.first_attach_mono = now_mono;
    ps.next_attach_mono =
        now_mono + (now_mono - ps.first_attach_mono < 3 * kAttachRetryNs ? kAttachRetryNs / 20
                                                                         : kAttachRetryNs);
    if (rt.ok()) {
      ps.rt = std::move(*rt);
      if (!ps.child) {
        python_seen_ = true;
        std::lock_guard<std::mutex> lk(mu_);
        python_status_ = "on (Python " + ps.rt->version() + ")";
      }
    } else if (rt.status().code() == StatusCode::kUnavailable &&
               now_mono - ps.first_attach_mono > 4 * kAttachRetryNs) {
      // (Not at once: a self-started collector gets its permission from
      // the tracer's PR_SET_PTRACER a moment after it starts sampling.)
      // A child that is not Python (a shell, a compiler) is sampled without.
      ps.python_final = true;
      if (!ps.child) {
        std::lock_guard<std::mutex> lk(mu_);
        python_status_ = "unavailable: " + rt.status().message();
        LogWarn("pid %d: no Python stacks: %s", static_cast<int>(pid),
                rt.status().message().c_str());
      }
    }
  }
}

// One thread of pass 1: its state, what it waits on, its CPU time and name;
// false when it is gone or a zombie (no sample).
bool HostSampler::SampleThread(Proc& ps, Thread& t, uint32_t tid, int64_t now_realtime,
                               int64_t now_mono, uint64_t gil_begin, uint64_t gil_end,
                               HostSample* sample, std::map<uint32_t, std::string>* names_out) {
  const pid_t pid = ps.pid;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::map<uint32_t, std::string>& names = *names_out;
  HostSample& s = *sample;
  char buf[1024];
  size_t len = 0;
  s.realtime_ns = now_realtime;
  s.tid = tid;
  int64_t cpu = -1;
  if (t.sched_fd >= 0 && ReadAt0(t.sched_fd, buf, sizeof(buf), &len)) {
    cpu = std::strtoll(buf, nullptr, 10);
  }
  t.reuse = cpu >= 0 && t.have_last && cpu == t.last_cpu_ns;
  if (t.reuse) {
    s.state = t.state;
    s.wait_name = t.wait_name;
    s.wait_detail = t.wait_detail;
    s.cpu_ns = 0;
  } else {
    if (t.stat_fd < 0 || !ReadAt0(t.stat_fd, buf, sizeof(buf), &len)) return false;
    const char* close = std::strrchr(buf, ')');
    if (!close || close[1] == 0) return false;
    const char state = close[2];
    if (state == 'Z' || state == 'X') return false;
    if (cpu < 0) {
      // No schedstat: utime + stime, in clock ticks.
      unsigned long long ut = 0, st = 0;
      if (std::sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                      &st) == 2) {
        static const long hz = ::sysconf(_SC_CLK_TCK);
        cpu = static_cast<int64_t>((ut + st) * (1'000'000'000ull / static_cast<uint64_t>(hz)));
      }
    }
    if (cpu >= 0 && t.last_cpu_ns >= 0) s.cpu_ns = std::max<int64_t>(cpu - t.last_cpu_ns, 0);
    std::string sc;
    if (state != 'R' && t.syscall_fd >= 0 && ReadAt0(t.syscall_fd, buf, sizeof(buf), &len)) {
      sc.assign(buf, len);
    }
    ThreadWait w = ClassifyThread(state, sc, gil_begin, gil_end);
    // Name the fd a read/poll waits on: pipe, socket, a file.
    int fd = w.fd;
    if (w.poll_fds) {
      struct pollfd first;
      if (pystack::Memory(pid).Read(w.poll_fds, &first, sizeof(first))) fd = first.fd;
    }
    // Read afresh each time (one readlink, only for a thread that ran since
    // its last sample): an fd number closed and reused names another file,
    // and a blocked thread's first sample is repeated as long as it waits.
    if (fd >= 0) {
      const std::string link = proc + "/fd/" + std::to_string(fd);
      const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
      w.detail = n > 0 ? FdKind(std::string(buf, static_cast<size_t>(n))) : "fd";
    }
    s.state = w.state;
    s.wait_name = std::move(w.name);
    s.wait_detail = std::move(w.detail);
    t.state = s.state;
    t.wait_name = s.wait_name;
    t.wait_detail = s.wait_detail;
    t.stack = 0;
    t.walked = false;
    t.have_last = cpu >= 0;
  }
  if (cpu >= 0 && cpu != t.last_cpu_ns) t.busy_mono = now_mono;
  if (cpu >= 0) t.last_cpu_ns = cpu;
  if (now_mono - t.comm_read_mono > kCommRefreshNs || t.comm_read_mono == 0) {
    const int fdc = OpenProc(proc + "/task/" + std::to_string(tid) + "/comm");
    if (fdc >= 0) {
      if (ReadAt0(fdc, buf, 64, &len)) {
        std::string comm(buf, len);
        while (!comm.empty() && comm.back() == '\n') comm.pop_back();
        if (comm != t.comm) {
          t.comm = comm;
          names[tid] = comm;
        }
      }
      ::close(fdc);
    }
    t.comm_read_mono = now_mono;
  }
  return true;
}

// Pass 1: every thread of the process from /proc (samples in `out`, their
// threads in `sampled`); false when the process is gone.
bool HostSampler::ReadThreads(Proc& ps, int64_t now_realtime, int64_t now_mono,
                              std::vector<HostSample>* out_samples,
                              std::vector<Thread*>* sampled_out,
                              std::map<uint32_t, std::string>* names_out) {
  Impl& im = *impl_;
  const pid_t pid = ps.pid;
  const std::string proc = "/proc/" + std::to_string(pid);
  uint64_t gil_begin = 0, gil_end = 0;
  if (ps.rt) std::tie(gil_begin, gil_end) = ps.rt->GilRange();
  std::vector<HostSample>& out = *out_samples;
  std::vector<Thread*>& sampled = *sampled_out;
  // Pass 1: /proc. A thread whose CPU time (schedstat, ns) has not moved
  // since its last sample cannot have changed state, wait or Python stack:
  // its last sample is repeated and nothing else of it is read.
  DIR* dir = ::opendir((proc + "/task").c_str());
  if (!dir) return false;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const auto tid = static_cast<uint32_t>(std::strtoul(e->d_name, nullptr, 10));
    auto& slot = ps.threads[tid];
    if (!slot) {
      slot = std::make_unique<Thread>();
      const std::string base = proc + "/task/" + e->d_name;
      slot->stat_fd = OpenProc(base + "/stat");
      slot->sched_fd = OpenProc(base + "/schedstat");
      slot->syscall_fd = OpenProc(base + "/syscall");
      if (slot->syscall_fd < 0 && errno == EACCES && !ps.syscall_denied_warned && !ps.child) {
        ps.syscall_denied_warned = true;
        LogWarn(
            "pid %d: no permission to read what its threads are blocked in "
            "(/proc/.../syscall); thread states are coarser",
            static_cast<int>(pid));
      }
    }
    Thread& t = *slot;
    t.generation = im.generation;
    if (t.syscall_fd < 0 && now_mono - t.comm_read_mono > kCommRefreshNs) {
      t.syscall_fd = OpenProc(proc + "/task/" + e->d_name + "/syscall");  // permission came
    }
    HostSample s;
    if (!SampleThread(ps, t, tid, now_realtime, now_mono, gil_begin, gil_end, &s, names_out))
      continue;
    out.push_back(std::move(s));
    sampled.push_back(&t);
  }
  ::closedir(dir);

  return true;
}

// Pass 2: Python stacks, one walk of the thread states; the frames of a
// thread that did not run are not read (its last stack stands).
void HostSampler::WalkPythonStacks(Proc& ps) {
  Impl& im = *impl_;
  const pid_t pid = ps.pid;
  if (ps.rt) {
    auto skip = [](void* ctx, uint32_t tid) {
      auto* threads = static_cast<std::unordered_map<uint32_t, std::unique_ptr<Thread>>*>(ctx);
      auto it = threads->find(tid);
      return it != threads->end() && it->second->reuse && it->second->walked;
    };
    if (ps.rt->AllStacks(&im.stacks, 128, skip, &ps.threads)) {
      ps.failed_walks = 0;
      for (const pystack::ThreadStack& ts : im.stacks) {
        auto it = ps.threads.find(ts.tid);
        if (it == ps.threads.end() || ts.skipped) continue;
        Thread& t = *it->second;
        t.stack = 0;
        t.walked = true;
        if (ts.frames.empty()) continue;
        // Keyed by process too: code addresses name different code in
        // another process (a child that exec'ed); and by each code object's
        // stamp: an address freed and reused by another code object is
        // another stack.
        std::vector<uint64_t> key;
        key.reserve(ts.frames.size() * 3 + 1);
        key.push_back(static_cast<uint64_t>(pid));
        for (auto f = ts.frames.rbegin(); f != ts.frames.rend(); ++f) {
          key.push_back(f->code);
          key.push_back(f->stamp);
          key.push_back(static_cast<uint64_t>(f->line));
        }
        std::string k(reinterpret_cast<const char*>(key.data()), key.size() * sizeof(uint64_t));
        auto known = im.stack_ids.find(k);
        if (known != im.stack_ids.end()) {
          t.stack = known->second;
        } else {
          std::vector<HostFrameText> text;
          for (auto f = ts.frames.rbegin(); f != ts.frames.rend(); ++f) {
            const pystack::CodeInfo* c = ps.rt->Code(*f);
            text.push_back({c ? c->function : "?", c ? c->file : "?", f->line});
          }
          t.stack = InternStack(key, text);
        }
      }
    } else if (ps.rt->layout_mismatch()) {
      if (!ps.child) {
        LogWarn("pid %d: Python %s's thread states are not laid out as expected; no Python stacks",
                static_cast<int>(pid), ps.rt->version().c_str());
        std::lock_guard<std::mutex> lk(mu_);
        python_status_ =
            "unavailable: Python " + ps.rt->version() + " struct layout not recognized";
      }
      ps.rt.reset();
      ps.python_final = true;
    } else if (++ps.failed_walks > 20) {
      ps.rt.reset();  // exec'ed into something else, or finalized: look again
      ps.failed_walks = 0;
    }
  }
}

void HostSampler::TickProc(Proc& ps, int64_t now_realtime, int64_t now_mono,
                           std::vector<HostSample>* samples_out,
                           std::map<uint32_t, std::string>* names_out) {
  Impl& im = *impl_;
  AttachPython(ps, now_mono);
  std::vector<HostSample> out;
  std::vector<Thread*> sampled;
  if (!ReadThreads(ps, now_realtime, now_mono, &out, &sampled, names_out)) return;
  WalkPythonStacks(ps);
  for (size_t i = 0; i < out.size(); ++i) out[i].stack = sampled[i]->stack;
  // Threads that are gone.
  for (auto it = ps.threads.begin(); it != ps.threads.end();) {
    if (it->second->generation != im.generation) {
      it = ps.threads.erase(it);
    } else {
      ++it;
    }
  }
  for (HostSample& s : out) samples_out->push_back(std::move(s));
}

}  // namespace stepscope
