// TraceCollector: drains one traced process's shared region (capture/
// shm_ring.h) into its SQLite trace, outside the traced process.
//
//  * Poll(): decodes READY CUPTI buffer slots (ActivityDecoder), consumes the
//    ring (API calls, NVTX opens/closes, thread names, OOM rows, host
//    allocations), zeroes and frees what it read, and commits every
//    commit interval (250 ms) or at once after an OOM row.
//  * Finish(): after the process is gone (any cause): a last drain, the NVTX
//    ranges still open written with nvtx.unclosed = 1 and end_ns = the end of
//    the trace, statistics (drops per record kind), indices, meta.finalized,
//    journal_mode=DELETE: the main .sqlite file alone holds everything.
//
// The trace file is claimed here (O_CREAT|O_EXCL, output_path.h) and an
// exclusive flock is held on it until Finish(): `profile -f` never replaces a
// trace that a live collector is writing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "capture/handshake.h"
#include "capture/shm_ring.h"
#include "collector/cupti_decoder.h"
#include "collector/host_rows.h"
#include "collector/host_sampler.h"
#include "common/status.h"
#include "store/trace_writer.h"

namespace stepscope {

// What the launcher prints at the end.
struct CollectedTrace {
  std::string path;
  int pid = 0;
  bool kept = false;     // false: nothing recorded, file removed
  bool exited = false;   // the tracer's atexit ran (else: killed or crashed)
  uint64_t dropped = 0;  // records lost, all kinds
  std::string error;     // a write failure
};

class TraceCollector {
 public:
  // Claims the trace file for the hello's pattern and maps `memfd` (taken).
  static StatusOr<std::unique_ptr<TraceCollector>> Start(const HelloMessage& hello, int memfd);
  ~TraceCollector();

  const std::string& path() const { return path_; }
  int pid() const { return pid_; }
  const std::string& start_ticks() const { return start_ticks_; }

  // Drains what is there; commits when due. A write failure is kept in
  // result().error and the trace is left as committed.
  void Poll();
  // The process is gone: drain, finalize, unlock. Idempotent.
  void Finish();
  const CollectedTrace& result() const { return result_; }
  // Samples of this process's threads go into this trace (host_sampler.h).
  void AttachSampler(std::unique_ptr<HostSampler> sampler);
  uint64_t host_samples() const { return host_ ? host_->samples() : 0; }
  bool sampled() const { return sampler_ != nullptr; }

 private:
  TraceCollector() = default;
  void DrainSlots();
  void DrainRing();
  void OnRecord(shm::Kind kind, const uint8_t* p, uint32_t n);
  void NameThreads();
  void DrainSamples();
  void Commit();
  int64_t NowTraceNs() const;

  HelloMessage hello_;
  std::string path_;
  int pid_ = 0;
  std::string start_ticks_;
  int lock_fd_ = -1;
  shm::Header* shm_ = nullptr;
  uint64_t mapped_ = 0;
  shm::Geometry geometry_;  // read once at Start; the header is never trusted again
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<ActivityDecoder> decoder_;
  bool zeroed_buffers_ = true;
  bool cupti_warned_ = false;
  int64_t commit_interval_ns_ = 250'000'000;
  int64_t last_commit_mono_ = 0;
  int64_t wall_offset_ns_ = 0;
  bool finished_ = false;
  bool urgent_ = false;

  std::unordered_map<uint64_t, std::string> foreign_strings_;  // kernel names by address
  std::unordered_map<uint64_t, NvtxRecord> open_;              // NVTX ranges started, not yet ended
  std::unordered_set<uint32_t> tids_, named_;
  std::unordered_map<uint32_t, std::string> proc_names_;
  uint64_t host_dropped_ = 0;
  uint64_t nvtx_written_ = 0, nvtx_unmatched_ = 0, host_allocs_ = 0, lost_buffers_ = 0,
           um_totals_ = 0, gpu_metrics_ = 0;
  // Behind a flood, NVTX records before ring position skip_to_ are skipped
  // and counted as dropped, and the newest ones, up to judge_from_, written:
  // the collector writes what is recent, so a kill loses at most a commit
  // interval (DrainRing). skipping_: the slice being read is before skip_to_.
  uint64_t skip_to_ = 0, judge_from_ = 0;
  bool skipping_ = false;
  uint64_t nvtx_skipped_ = 0;
  int64_t slice_nvtx_ns_ = 0;  // the time of the slice's last NVTX record read (0: none)
  bool Behind() const;
  int64_t max_ns_ = 0;
  CollectedTrace result_;
  std::unique_ptr<HostSampler> sampler_;
  std::unique_ptr<HostRows> host_;
};

}  // namespace stepscope
