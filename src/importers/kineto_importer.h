// Kineto / torch.profiler Chrome-trace JSON -> stepscope trace.
//
// KinetoImporter is the parser half of the JSON import: ChromeTraceTokenizer
// cuts the byte stream into events, and this class maps each event onto the
// store's records (docs/import.md has the full table):
//   kernel -> kernels, gpu_memcpy -> memcpy, gpu_memset -> memset,
//   cuda_runtime / cuda_driver -> api, cuda_sync -> sync, overhead -> overhead,
//   cpu_op / user_annotation / python_function -> nvtx push/pop ranges on the
//   CPU thread (domain = the category), gpu_user_annotation -> nvtx ranges on
//   the stream (domain "gpu_user_annotation"), ac2g flows -> counted and
//   matched by id, deviceProperties -> devices, distributedInfo -> meta.rank /
//   meta.world_size, baseTimeNanoseconds -> meta.wall_clock_offset_ns.
// Times: Kineto's "ts"/"dur" are microseconds with the nanoseconds as decimal
// digits; they are converted from the literal text, exactly (exact_decimal.h).
// Every event is counted by category; unknown and malformed events are counted
// (per reason) in the stats table and skipped, never fatal.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "importers/import_stats.h"
#include "importers/import_util.h"
#include "importers/json_tokenizer.h"

namespace stepscope {

class InputStream;
class TraceWriter;

class KinetoImporter : public ChromeTraceTokenizer::Sink {
 public:
  KinetoImporter(TraceWriter* w, ImportStats* stats);

  Status OnEvent(const JsonValueParser& doc, uint64_t offset) override;
  Status OnTopLevel(std::string_view key, const JsonValueParser& doc, uint64_t offset) override;
  // After the last event: flow matching, thread names, depth fix-ups, meta.
  Status Finish();
  // The tokenizer skipped `n` values longer than `bound` bytes.
  void NoteOversized(uint64_t n, size_t bound);

 private:
  enum Category : int {
    kKernel,
    kGpuMemcpy,
    kGpuMemset,
    kCudaRuntime,
    kCudaDriver,
    kCudaSync,
    kCpuOp,
    kUserAnnotation,
    kPythonFunction,
    kGpuUserAnnotation,
    kOverhead,
    kAc2g,
    kFwdbwd,
    kTraceSpan,
    kMetadata,
    kInstant,
    kUnknown,
    kNumCategories
  };
  enum Malformed : int {
    kNotObject,
    kMissingPh,
    kBadTs,
    kBadDur,
    kBadArgs,
    kBadTid,
    kBadFlowId,
    kBadTopLevel,
    kNumMalformed
  };
  struct Fields;

  void Bad(Malformed why);
  Category Classify(const Fields& f) const;
  bool Times(const Fields& f, int64_t* start, int64_t* end);
  void Track(int64_t start, int64_t end);
  bool CpuTid(const Fields& f, uint32_t* tid);
  Status MapGpu(Category c, const Fields& f);
  Status MapApi(Category c, const Fields& f);
  Status MapRange(Category c, const Fields& f);
  Status MapOther(Category c, const Fields& f);
  void MapMetadata(const Fields& f);
  void MapDevices(const JsonValueParser& doc);
  void WarnDropped();

  TraceWriter* w_;
  ImportStats* stats_;
  StringCache strings_;
  RangeDepthTracker depth_;
  const JsonValueParser* doc_ = nullptr;  // the event being mapped

  size_t total_idx_, unknown_idx_, malformed_idx_, rounded_idx_, kernel_time_idx_,
      tid_truncated_idx_, bad_optional_idx_;
  size_t cat_idx_[kNumCategories];
  size_t bad_idx_[kNumMalformed];

  std::vector<uint64_t> flow_starts_, flow_ends_;
  std::vector<uint32_t> gpu_correlations_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;  // (pid, tid) -> name
  std::map<int64_t, std::string> process_names_;                     // pid -> process_name metadata
  std::set<uint32_t> cpu_tids_;
  std::map<std::string, size_t> unknown_cats_;
  std::map<std::string, std::string> unknown_raw_;  // stat name -> the category as written
  int64_t cpu_pid_ = -1;
  int64_t base_time_ns_ = -1;
  int64_t min_ns_ = INT64_MAX, max_ns_ = INT64_MIN;
  uint64_t last_commit_rows_ = 0;
  StringId domain_ids_[4] = {0, 0, 0,
                             0};  // cpu_op, user_annotation, python_function, gpu_user_annotation
};

// Streams a Kineto JSON (plain or gzip) from `in` through the tokenizer and
// the importer into `w`. Errors carry "byte N: ..." positions.
Status ImportKinetoJson(InputStream* in, TraceWriter* w, ImportStats* stats);

}  // namespace stepscope
