// CollectorServer: the collector process side of `stepscope profile` (and of
// `stepscope _collect`, the collector a tracer starts for itself when the
// program was started without the launcher).
//
// Tracers connect to a Unix socket (STEPSCOPE_COLLECTOR) and hand over their
// shared region (capture/handshake.h); each becomes a TraceCollector. One
// thread polls: accepts tracers, drains every live trace every ~20 ms, and
// finishes a trace as soon as its process is gone (pidfd_open; fallback:
// kill(pid, 0) and the /proc start time, so a reused pid is not mistaken for
// the traced one).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collector/trace_collector.h"
#include "common/status.h"

namespace stepscope {

class CollectorServer {
 public:
  // A listening server; name() is the value for STEPSCOPE_COLLECTOR.
  static StatusOr<std::unique_ptr<CollectorServer>> Listen();
  // A server for one tracer already connected on `fd` (stepscope _collect).
  static std::unique_ptr<CollectorServer> ForConnection(int fd);
  ~CollectorServer();

  const std::string& name() const { return name_; }

  // Runs the loop on a background thread.
  void StartThread();
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
  };
  CollectorServer() = default;
  void Loop();
  void Accept(int conn);
  bool Dead(const Live& l) const;
  void Step(int timeout_ms);
  void FinishLive(size_t i);

  std::string name_;
  int listen_fd_ = -1;
  int pending_conn_ = -1;  // ForConnection
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> deadline_mono_ns_{0};
  std::mutex mu_;           // guards done_
  std::vector<Live> live_;  // loop thread only
  std::vector<CollectedTrace> done_;
  std::atomic<bool> exit_{false};
};

}  // namespace stepscope
