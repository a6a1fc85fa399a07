// CollectorServer: the collector process side of `stepscope profile` (and of
// `stepscope _collect`, the collector a tracer starts for itself when the
// program was started without the launcher).
//
// Tracers connect to a Unix socket (STEPSCOPE_COLLECTOR) and hand over their
// shared region (capture/handshake.h); each becomes a TraceCollector with its
// own thread (ranks of one node are written in parallel) that drains it every
// ~20 ms and finishes it as soon as its process is gone (pidfd_open; fallback:
// kill(pid, 0) and the /proc start time, so a reused pid is not mistaken for
// the traced one). One server thread accepts tracers.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collector/trace_collector.h"
#include "common/status.h"

namespace stepscope {

// What the collector decides itself, whatever a tracer's hello says
// (capture/handshake.h, Trust).
struct CollectorPolicy {
  // Every tracer must send it (STEPSCOPE_COLLECTOR_TOKEN); empty: none asked
  // (a socket pair only its creator holds, stepscope _collect).
  std::string token;
  // The tracer library through which CUPTI is loaded to decode buffers.
  std::string inject_lib;
  // The output pattern; empty: the tracer's (stepscope _collect).
  std::string pattern;
  // Permissions of new trace files (less the umask); 0: the default, 0600.
  int file_mode = 0;
};

class CollectorServer {
 public:
  // A listening server; name() is the value for STEPSCOPE_COLLECTOR.
  static StatusOr<std::unique_ptr<CollectorServer>> Listen(CollectorPolicy policy);
  // A server for one tracer already connected on `fd` (stepscope _collect).
  static std::unique_ptr<CollectorServer> ForConnection(int fd, CollectorPolicy policy);
  ~CollectorServer();

  const std::string& name() const { return name_; }

  // Runs the loop on a background thread.
  void StartThread();
  // Samples `pid` (the launcher's child) at `hz` from now on: the samples go
  // to the trace of the tracer that connects with this pid, or, when no
  // tracer connects at all (a program without CUDA or NVTX), to a trace of
  // their own written at Finish, if the process ran Python (`hello`: that
  // trace's fields).
  void SampleChild(int pid, int hz, const HelloMessage& hello);
  // The program is gone: finishes every trace whose process has ended,
  // waits up to `grace_ms` for the others (then finishes them as they are),
  // stops and returns what was collected, in connection order.
  std::vector<CollectedTrace> Finish(int grace_ms);
  // Runs the loop on this thread until every trace is finished (_collect).
  std::vector<CollectedTrace> RunUntilDone();

 private:
  struct Live {
    std::unique_ptr<TraceCollector> trace;
    int pidfd = -1;
    size_t seq = 0;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  CollectorServer() = default;
  void Loop();
  void Accept(int conn);
  // Checks a connection's peer and hello against policy_, receives the
  // hello and its region's fd and fills in the fields the collector decides
  // (pid, library, pattern); false: refused, logged, answered and closed.
  bool Admit(int conn, HelloMessage* hello, int* memfd);
  void Refuse(int conn, const PeerCred& peer, const std::string& why);
  bool WaitDead(const Live& l, int timeout_ms) const;
  void TraceLoop(Live* l);
  void Step(int timeout_ms);
  void Reap(bool all);
  void FinishParked();

  CollectorPolicy policy_;
  uint64_t refused_ = 0;  // connections refused (server thread only)
  std::string name_;
  int listen_fd_ = -1;
  int pending_conn_ = -1;  // ForConnection
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> force_{false};  // finish every trace now, processes alive or not
  std::atomic<int64_t> deadline_mono_ns_{0};
  size_t next_seq_ = 0;
  std::vector<std::unique_ptr<Live>> live_;  // server thread only
  std::mutex mu_;                            // guards done_
  std::vector<std::pair<size_t, CollectedTrace>> done_;
  std::atomic<bool> exit_{false};
  struct Parked {
    std::unique_ptr<HostSampler> sampler;
    HelloMessage hello;
  };
  std::mutex parked_mu_;          // guards parked_, connected_
  std::map<int, Parked> parked_;  // pid -> sampler waiting for its tracer
  std::set<int> connected_;       // pids whose tracer connected
  bool accepted_any_ = false;     // server thread only
};

}  // namespace stepscope
