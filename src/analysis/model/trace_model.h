// TraceModel: one trace loaded into memory, the shared input of every recipe,
// the step detector, the expert rules and `diff`.
//
// It keeps the typed record vectors TraceReader loads (apis, syncs and nvtx
// ordered by start time; kernels, memcpys and memsets in stored order: their
// start order is gpu_ops()) and adds the few derived indices every analysis needs, computed once:
//   * gpu_ops(): kernels, memcpys and memsets merged into one start-ordered
//     list of 32-byte GpuOps (the GPU timeline), each with its category
//     (compute / communication / memory) and the index of its launching api row;
//   * api_range(): for each api call, the innermost push/pop NVTX range open on
//     the calling thread when the call started (what the host was doing);
//   * nvtx_parent(): the enclosing push/pop range of each range;
//   * per-name kernel classification (communication, GEMM precision).
// Open NVTX ranges (end_ns = -1, a trace cut off mid-run) end at end_ns() and
// report IsOpen(); every consumer uses RangeEnd() instead of the raw end.
//
// Memory: about 32 B per GPU op and 4 B per api call on top of the records
// (KernelRecord 88 B, ApiRecord 40 B): a 10M-event trace fits in ~1 GB.
// Load() reads the big tables on two threads (two SQLite connections).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/kernel_names.h"
#include "common/status.h"
#include "format/records.h"

namespace stepscope {

class TraceReader;
class FlatTimeline;
class CallsiteChains;

inline constexpr uint32_t kNone = 0xffffffffu;

enum class GpuOpKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// One activity on the GPU timeline.
struct GpuOp {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t index;  // into kernels(), memcpys() or memsets(), by kind
  uint32_t api;    // index into apis() of the launching call; kNone when unknown
  uint32_t stream;
  uint16_t device;
  GpuOpKind kind;
  OpCategory category;
};
static_assert(sizeof(GpuOp) == 32, "GpuOp should stay compact");

class TraceModel {
 public:
  // Opens and loads `path` (InvalidInput with a one-line message on a bad file).
  static StatusOr<std::unique_ptr<TraceModel>> Load(const std::string& path);
  // Builds a model from records already in memory (tests).
  struct Records {
    std::vector<std::string> strings;
    std::vector<KernelRecord> kernels;
    std::vector<MemcpyRecord> memcpys;
    std::vector<MemsetRecord> memsets;
    std::vector<ApiRecord> apis;
    std::vector<SyncRecord> syncs;
    std::vector<NvtxRecord> nvtx;
    std::vector<MemoryRecord> memory;
    std::vector<DeviceRecord> devices;
    std::vector<UmRecord> um;                  // unified-memory events, by start
    std::vector<GpuMetricRecord> gpu_metrics;  // PM samples, by (device, metric, start)
    // Host model (schema 1.5; trace_model_host.cc): frames and callsites by
    // id, samples by (tid, ts), sched and osrt by start, api_callsites by
    // correlation.
    std::vector<FrameRecord> frames;
    std::vector<CallsiteRecord> callsites;
    std::vector<SampleRecord> samples;
    std::vector<NativeSampleRecord> native_samples;  // by (tid, ts)
    std::vector<SchedRecord> sched;
    std::vector<OsrtRecord> osrt;
    std::vector<ApiCallsiteRecord> api_callsites;
    std::unordered_map<uint32_t, std::string> thread_names;
    int64_t sample_hz = 0;                // meta.sample_hz; 0: not sampled
    int64_t native_sample_period_ns = 0;  // meta.native_sample_period_ns; 0: none
    std::string path = "memory";
    int rank = -1;
    bool finalized = true;
    int64_t meta_start_ns = 0;  // 0: unknown
    uint32_t pid = 0;           // meta.pid (the process's main thread id); 0: unknown
  };
  static std::unique_ptr<TraceModel> FromRecords(Records r);
  ~TraceModel();

  const std::string& path() const { return r_.path; }
  // File name without directories, for table columns.
  std::string file_name() const;
  int rank() const { return r_.rank; }  // meta.rank, -1 when unset
  bool finalized() const { return r_.finalized; }

  const std::string& String(StringId id) const;
  const std::vector<std::string>& strings() const { return r_.strings; }

  const std::vector<KernelRecord>& kernels() const { return r_.kernels; }
  const std::vector<MemcpyRecord>& memcpys() const { return r_.memcpys; }
  const std::vector<MemsetRecord>& memsets() const { return r_.memsets; }
  const std::vector<ApiRecord>& apis() const { return r_.apis; }
  const std::vector<SyncRecord>& syncs() const { return r_.syncs; }
  const std::vector<NvtxRecord>& nvtx() const { return r_.nvtx; }
  const std::vector<MemoryRecord>& memory() const { return r_.memory; }
  const std::vector<DeviceRecord>& devices() const { return r_.devices; }
  const std::vector<UmRecord>& um() const { return r_.um; }
  // GPU metrics (`profile --gpu-metrics`), by (device, metric, start).
  const std::vector<GpuMetricRecord>& gpu_metrics() const { return r_.gpu_metrics; }
  const DeviceRecord* Device(uint32_t id) const;

  // Host model (docs/host.md).
  const std::vector<FrameRecord>& frames() const { return r_.frames; }
  const std::vector<CallsiteRecord>& callsites() const { return r_.callsites; }
  const std::vector<SampleRecord>& samples() const { return r_.samples; }
  const std::vector<NativeSampleRecord>& native_samples() const { return r_.native_samples; }
  // CPU time between two native samples of a thread (meta); 0 none.
  int64_t native_sample_period_ns() const { return r_.native_sample_period_ns; }
  const std::vector<SchedRecord>& sched() const { return r_.sched; }
  const std::vector<OsrtRecord>& osrt() const { return r_.osrt; }
  const std::vector<ApiCallsiteRecord>& api_callsites() const { return r_.api_callsites; }
  int64_t sample_hz() const { return r_.sample_hz; }
  // Thread name, or "" when the trace does not name it.
  const std::string& ThreadName(uint32_t tid) const;
  const std::unordered_map<uint32_t, std::string>& thread_names() const { return r_.thread_names; }
  // The frame with this id, or nullptr.
  const FrameRecord* Frame(uint32_t id) const;
  // Frames of a callsite, root first (empty for 0 / unknown); a stack deeper
  // than CallsiteInterner::kMaxDepth is its outermost frames and its leaf.
  std::vector<const FrameRecord*> Stack(uint32_t callsite) const;

  // What reading changed (Sanitize): records whose times were negative or
  // impossible (clamped or made zero-length), callsites whose chain was cut.
  int64_t clamped_records() const { return clamped_records_; }
  int64_t cut_stacks() const;
  // Innermost Python frame of a callsite's stack, or nullptr.
  const FrameRecord* PythonLeaf(uint32_t callsite) const;
  // "train.py:152 train_step": file base name, line, function.
  std::string FrameLabel(const FrameRecord& f) const;
  // Python stack of the thread at the call with this correlation id (0: unknown).
  uint32_t ApiCallsite(uint32_t correlation) const;
  // FrameLabel of the Python line that made the call; "" when unknown.
  std::string ApiPythonLine(uint32_t correlation) const;
  // Indices into apis() / osrt() of one thread's rows, by start (built on
  // first use, for every thread at once; not thread-safe, like Timeline()).
  const std::vector<uint32_t>& ApisOfThread(uint32_t tid) const;
  const std::vector<uint32_t>& OsrtOfThread(uint32_t tid) const;
  const std::vector<uint32_t>& SchedOfThread(uint32_t tid) const;

  const std::vector<GpuOp>& gpu_ops() const { return ops_; }
  // Device ids that ran at least one op, ascending.
  const std::vector<uint32_t>& active_devices() const { return active_devices_; }
  // Innermost push/pop range around each api call: on the calling thread, or,
  // when that thread has no open range (PyTorch's autograd thread launches
  // the backward kernels), on main_tid() at the time of the call.
  const std::vector<uint32_t>& api_range() const { return api_range_; }
  // Innermost push/pop range on `tid` containing time t, or kNone.
  uint32_t RangeAt(uint32_t tid, int64_t t) const;
  // The process's main thread (tid = meta.pid) when it made CUDA calls or
  // NVTX ranges; else the thread with the most push/pop ranges; 0 if none.
  uint32_t main_tid() const { return main_tid_; }
  // meta.pid: the process's id, which is its main thread's id; 0 when unknown.
  uint32_t pid() const { return r_.pid; }
  const std::vector<uint32_t>& nvtx_parent() const { return nvtx_parent_; }
  // api index of the call with this correlation id, or kNone.
  uint32_t ApiByCorrelation(uint32_t correlation) const;

  // Trace time span: origin_ns() is meta.start_ns when recorded, else the
  // earliest event; end_ns() is the latest event end. 0/0 for an empty trace.
  int64_t origin_ns() const { return origin_ns_; }
  int64_t end_ns() const { return end_ns_; }

  int64_t RangeEnd(uint32_t nvtx_index) const {
    const NvtxRecord& r = r_.nvtx[nvtx_index];
    return r.end_ns < 0 ? std::max(end_ns_, r.start_ns) : r.end_ns;
  }
  bool IsOpen(uint32_t nvtx_index) const { return r_.nvtx[nvtx_index].end_ns < 0; }

  const KernelNameInfo& NameInfo(StringId id) const {
    static const KernelNameInfo kDefault;
    return id < name_info_.size() ? name_info_[id] : kDefault;
  }
  // Display name of an op: the kernel name, or "[CUDA memcpy HtoD]" etc.
  std::string OpName(const GpuOp& op) const;
  // The flattened GPU timeline of a device (-1: all devices together), built
  // on first use and cached. Not thread-safe: one thread uses a model.
  const FlatTimeline& Timeline(int device) const;
  // True for api names that block the calling thread until the GPU catches up
  // (cudaStreamSynchronize, cudaMemcpy, ...).
  bool IsBlockingApiName(StringId name) const {
    return name < blocking_name_.size() && blocking_name_[name];
  }

  // Name of the api call (e.g. "cudaLaunchKernel").
  const std::string& ApiName(uint32_t api_index) const { return String(r_.apis[api_index].name); }

 private:
  TraceModel() = default;
  void Derive();
  void BuildOps();
  void BuildCorrelation();
  void BuildNvtxIndex();

  Records r_;
  std::unique_ptr<CallsiteChains> chains_;  // over r_.callsites
  int64_t clamped_records_ = 0;
  std::vector<GpuOp> ops_;
  std::vector<uint32_t> active_devices_;
  std::vector<uint32_t> api_range_;
  std::vector<uint32_t> nvtx_parent_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> ranges_by_tid_;  // sorted by start
  uint32_t main_tid_ = 0;
  std::vector<KernelNameInfo> name_info_;
  std::vector<char> blocking_name_;
  mutable std::map<int, std::unique_ptr<FlatTimeline>> timelines_;
  mutable std::unordered_map<uint32_t, std::vector<uint32_t>> apis_by_tid_, osrt_by_tid_,
      sched_by_tid_;
  mutable bool by_tid_built_ = false;
  // Correlation -> api index: dense when ids are compact, else sorted pairs.
  std::vector<uint32_t> corr_dense_;
  std::vector<std::pair<uint32_t, uint32_t>> corr_sorted_;
  int64_t origin_ns_ = 0;
  int64_t end_ns_ = 0;
};

// Human name of a memcpy kind as nsys prints it: "[CUDA memcpy Host-to-Device]".
std::string MemcpyOpName(const MemcpyRecord& m);

}  // namespace stepscope
