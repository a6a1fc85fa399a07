#include "collector/collector_server.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "capture/clock.h"
#include "common/log.h"
#include "common/proc_stat.h"
#include "common/strings.h"

namespace stepscope {

StatusOr<std::unique_ptr<CollectorServer>> CollectorServer::Listen(CollectorPolicy policy) {
  if (policy.token.empty()) return InvalidInput("a listening collector needs a session token");
  std::unique_ptr<CollectorServer> s(new CollectorServer());
  s->policy_ = std::move(policy);
  ASSIGN_OR_RETURN(s->listen_fd_, ListenCollector(&s->name_));
  return s;
}

std::unique_ptr<CollectorServer> CollectorServer::ForConnection(int fd, CollectorPolicy policy) {
  std::unique_ptr<CollectorServer> s(new CollectorServer());
  s->policy_ = std::move(policy);
  s->pending_conn_ = fd;
  return s;
}

void CollectorServer::Refuse(int conn, const PeerCred& peer, const std::string& why) {
  // Logged, but a flood of refused connections does not flood the terminal.
  constexpr uint64_t kLogged = 5;
  if (++refused_ <= kLogged) {
    LogWarn("refused a tracer connection from pid %d (uid %u): %s%s", peer.pid, peer.uid,
            why.c_str(), refused_ == kLogged ? " (further refusals are not shown)" : "");
  }
  (void)SendAnswer(conn, "error refused by the collector: " + why);
  ::close(conn);
}

bool CollectorServer::Admit(int conn, HelloMessage* hello, int* memfd) {
  auto peer = PeerCredentials(conn);
  if (!peer.ok()) {
    Refuse(conn, PeerCred{}, peer.status().message());
    return false;
  }
  // Checked before reading anything: a stranger cannot even hold the accept
  // loop for the hello's timeout.
  if (!TrustedUid(peer->uid)) {
    Refuse(conn, *peer,
           "it runs as another user (only uid " + std::to_string(::geteuid()) +
               " or root may be traced by this collector)");
    return false;
  }
  std::string text;
  Status st = ReceiveHello(conn, 5000, &text, memfd);
  if (!st.ok()) {
    if (*memfd >= 0) ::close(*memfd);
    Refuse(conn, *peer, st.message());
    return false;
  }
  *hello = HelloMessage::Decode(text);
  if (!policy_.token.empty() &&
      (hello->token.empty() || !TokensEqual(hello->token, policy_.token))) {
    if (*memfd >= 0) ::close(*memfd);
    Refuse(conn, *peer, "no valid session token (it was not started by this stepscope profile)");
    return false;
  }
  hello->token.clear();
  // The fields the collector decides: the traced pid is the peer's (from the
  // kernel), CUPTI comes through the launcher's own library, the file from
  // the launcher's pattern.
  hello->pid = peer->pid;
  ProcStat stat;
  hello->start_time_ticks =
      ReadProcStat(peer->pid, &stat) && stat.state != 'Z' ? stat.start_time_ticks : "";
  hello->inject_lib = policy_.inject_lib;
  if (!policy_.pattern.empty()) hello->pattern = policy_.pattern;
  if (policy_.file_mode > 0) hello->file_mode = policy_.file_mode;
  return true;
}

CollectorServer::~CollectorServer() {
  exit_ = true;
  force_ = true;
  if (thread_.joinable()) thread_.join();
  Reap(true);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void CollectorServer::Accept(int conn) {
  HelloMessage hello;
  int memfd = -1;
  if (!Admit(conn, &hello, &memfd)) return;
  auto trace = TraceCollector::Start(hello, memfd);
  if (!trace.ok()) {
    (void)SendAnswer(conn, "error " + trace.status().message());
    ::close(conn);
    return;
  }
  // Its threads are sampled: by the launcher's sampler of this pid if there
  // is one, else by a new one at the rate the tracer asks for.
  const int pid = (*trace)->pid();
  std::unique_ptr<HostSampler> sampler;
  {
    std::lock_guard<std::mutex> lk(parked_mu_);
    auto it = parked_.find(pid);
    if (it != parked_.end()) {
      sampler = std::move(it->second.sampler);
      parked_.erase(it);
    }
    connected_.insert(pid);
  }
  if (!sampler && hello.sample_hz > 0 && hello.sample_hz <= 100000) {
    sampler = HostSampler::Start(pid, static_cast<int>(hello.sample_hz));
  }
  (*trace)->AttachSampler(std::move(sampler));
  accepted_any_ = true;
  auto l = std::make_unique<Live>();
  l->trace = std::move(*trace);
  l->pidfd = static_cast<int>(::syscall(SYS_pidfd_open, l->trace->pid(), 0));
  l->seq = next_seq_++;
  if (l->trace->sampled()) (void)SendAnswer(conn, "pid " + std::to_string(::getpid()));
  (void)SendAnswer(conn, "ok " + l->trace->path());
  ::close(conn);
  Live* raw = l.get();
  l->thread = std::thread([this, raw] { TraceLoop(raw); });
  live_.push_back(std::move(l));
}

bool CollectorServer::WaitDead(const Live& l, int timeout_ms) const {
  if (l.pidfd >= 0) {
    pollfd p{l.pidfd, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) > 0;
  }
  ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
  const int pid = l.trace->pid();
  if (pid <= 0) return true;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  ProcStat stat;
  if (!ReadProcStat(pid, &stat)) return ::kill(pid, 0) != 0 && errno != EPERM;
  if (stat.state == 'Z' || stat.state == 'X') return true;
  return !l.trace->start_ticks().empty() && stat.start_time_ticks != l.trace->start_ticks();
}

void CollectorServer::TraceLoop(Live* l) {
  // Named for kill9_loop_test.py, which reads how long it waited for a CPU.
  pthread_setname_np(pthread_self(), "stepscope-col");
  try {
    // Death is checked before each drain, so that the drain in Finish sees
    // everything the process wrote.
    while (!force_.load() && !WaitDead(*l, 20)) l->trace->Poll();
    l->trace->Finish();
  } catch (...) {
    LogWarn("%s: internal error in the collector; the trace holds what was committed",
            l->trace->path().c_str());
  }
  if (l->pidfd >= 0) ::close(l->pidfd);
  l->pidfd = -1;
  {
    std::lock_guard<std::mutex> lk(mu_);
    done_.emplace_back(l->seq, l->trace->result());
  }
  l->done = true;
}

void CollectorServer::Reap(bool all) {
  for (size_t i = 0; i < live_.size();) {
    if (all || live_[i]->done.load()) {
      if (live_[i]->thread.joinable()) live_[i]->thread.join();
      live_.erase(live_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
}

void CollectorServer::Step(int timeout_ms) {
  std::vector<pollfd> fds;
  if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
  ::poll(fds.data(), fds.size(), timeout_ms);
  if (pending_conn_ >= 0) {
    int c = pending_conn_;
    pending_conn_ = -1;
    Accept(c);
  }
  if (listen_fd_ >= 0) {
    while (true) {
      int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) break;
      Accept(c);
    }
  }
  Reap(false);
}

void CollectorServer::SampleChild(int pid, int hz, const HelloMessage& hello) {
  if (hz <= 0) return;
  std::lock_guard<std::mutex> lk(parked_mu_);
  if (connected_.count(pid)) return;  // its tracer was faster: it is sampled already
  auto sampler = HostSampler::Start(pid, hz);
  if (!sampler) return;
  parked_[pid] = Parked{std::move(sampler), hello};
}

void CollectorServer::FinishParked() {
  std::map<int, Parked> parked;
  {
    std::lock_guard<std::mutex> lk(parked_mu_);
    parked.swap(parked_);
  }
  for (auto& [pid, p] : parked) {
    p.sampler->Stop();
    // A tracer connected (ranks under torchrun): the child that did not is
    // a launcher, not worth a file.
    if (accepted_any_) continue;
    // Only a Python program gets a trace of its own: a shell or a launcher
    // that ran the traced program as its child is not worth a file.
    // (Python seen, not stacks on now: a program whose stacks were turned
    // off on the way is still a Python program.)
    if (!p.sampler->python_seen()) continue;
    shm::Header layout{};
    const uint64_t total = shm::Layout(0, 4096, 4096, &layout);
    const int memfd = shm::CreateRegionFd("stepscope-host", total);
    if (memfd < 0) continue;
    void* region = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (region == MAP_FAILED) {
      ::close(memfd);
      continue;
    }
    shm::InitHeader(region, layout, pid);
    static_cast<shm::Header*>(region)->flags.fetch_or(shm::kFlagExited);
    ::munmap(region, total);
    auto trace = TraceCollector::Start(p.hello, memfd);
    if (!trace.ok()) {
      LogWarn("pid %d: cannot write its host trace: %s", pid, trace.status().message().c_str());
      continue;
    }
    (*trace)->AttachSampler(std::move(p.sampler));
    (*trace)->Finish();
    std::lock_guard<std::mutex> lk(mu_);
    done_.emplace_back(next_seq_++, (*trace)->result());
  }
}

void CollectorServer::Loop() {
  while (!exit_) {
    Step(20);
    if (stopping_) {
      if (live_.empty() && pending_conn_ < 0) {
        FinishParked();
        break;
      }
      if (MonotonicNs() >= deadline_mono_ns_.load()) {
        force_ = true;
        Reap(true);
        FinishParked();
        break;
      }
    }
  }
}

void CollectorServer::StartThread() {
  // The server and trace threads block signals: they belong to the
  // launcher's main thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] {
    try {
      Loop();
    } catch (...) {
      LogWarn("internal error in the collector; traces hold what was committed");
    }
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

std::vector<CollectedTrace> CollectorServer::Finish(int grace_ms) {
  deadline_mono_ns_ = MonotonicNs() + int64_t{grace_ms} * 1'000'000;
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lk(mu_);
  std::sort(done_.begin(), done_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CollectedTrace> out;
  for (const auto& [seq, r] : done_) out.push_back(r);
  return out;
}

std::vector<CollectedTrace> CollectorServer::RunUntilDone() {
  deadline_mono_ns_ = INT64_MAX;
  stopping_ = true;
  Loop();
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<CollectedTrace> out;
  for (const auto& [seq, r] : done_) out.push_back(r);
  return out;
}

}  // namespace stepscope
