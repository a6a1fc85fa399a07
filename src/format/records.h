// The stepscope record format: plain, fixed-layout records shared by every
// producer (the injected CUPTI/NVTX tracer, the torch.profiler and nsys
// importers, the synthetic fixtures of the tests) and the trace store.
//
// Contract:
//  * All times are int64 nanoseconds on the trace clock (see docs/schema.md:
//    CLOCK_REALTIME for captured traces, so traces of processes on one host
//    align; meta.wall_clock_offset_ns converts to Unix epoch ns otherwise).
//  * Strings are interned: a StringId indexes the trace's `strings` table.
//    Id 0 is the empty string / "unknown".
//  * Enumerations are stepscope's own (not CUPTI's numbering), so that imported
//    traces use the same values; src/collector/cupti_decoder.cc maps CUPTI's.
//  * The layout is versioned by kRecordFormatVersion and pinned by the
//    static_asserts at the bottom: changing a record is a format change.
#pragma once

#include <cstdint>

namespace stepscope {

inline constexpr uint32_t kRecordFormatVersion = 2;

using StringId = uint32_t;
inline constexpr StringId kNoString = 0;

// Source/destination memory of a copy, memory of a memset or an allocation.
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,  // pageable host memory
  kPinned = 2,    // page-locked host memory (cudaMallocHost / cudaHostAlloc)
  kDevice = 3,    // device memory
  kArray = 4,     // CUDA array
  kManaged = 5,   // unified (managed) memory
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kHostToArray = 3,
  kArrayToHost = 4,
  kArrayToArray = 5,
  kArrayToDevice = 6,
  kDeviceToArray = 7,
  kDeviceToDevice = 8,
  kHostToHost = 9,
  kPeerToPeer = 10,
};

enum class ApiDomain : uint8_t { kRuntime = 0, kDriver = 1 };

enum class SyncType : uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,    // cudaEventSynchronize
  kStreamWaitEvent = 2,     // cudaStreamWaitEvent (a GPU-side wait: host does not block)
  kStreamSynchronize = 3,   // cudaStreamSynchronize
  kContextSynchronize = 4,  // cudaDeviceSynchronize / cuCtxSynchronize
};

enum class MemoryOp : uint8_t { kUnknown = 0, kAlloc = 1, kFree = 2 };

enum class MemoryPoolOp : uint8_t { kUnknown = 0, kCreated = 1, kDestroyed = 2, kTrimmed = 3 };

// What a unified-memory counter record (CUPTI UNIFIED_MEMORY_COUNTER) counts.
// Same numbering as CUPTI's CUpti_ActivityUnifiedMemoryCounterKind.
enum class UmCounterKind : uint8_t {
  kUnknown = 0,
  kBytesHtoD = 1,     // migration host -> device: value = bytes
  kBytesDtoH = 2,     // migration device -> host: value = bytes
  kCpuPageFault = 3,  // one CPU page fault: value = faulting instruction's PC
  kGpuPageFault = 4,  // one GPU fault group, [start, end]: value = faults in the group
  kThrashing = 5,     // value = bytes of the thrashing region
  kThrottling = 6,    // driver throttled a processor for [start, end]
  kRemoteMap = 7,     // driver mapped the region remotely instead of migrating: value = bytes
  kBytesDtoD = 8,     // migration device -> device: value = bytes
  // The nvidia-uvm driver's own totals (capture/uvm_counters.h), sampled by
  // the tracer: what changed in [start, end]. Complete where CUPTI's
  // per-migration records are not (they are dropped under fault storms);
  // no address, no cause. Rows only for intervals where the total moved.
  kDriverHtoD = 9,        // bytes migrated host -> device (every cause)
  kDriverDtoH = 10,       // bytes migrated device -> host
  kDriverCpuFaults = 11,  // CPU page faults on managed memory: value = count
  kDriverGpuFaults = 12,  // GPU page faults serviced: value = count
};
inline constexpr int kUmCounterKindMax = 12;
inline bool IsUmDriverTotal(UmCounterKind k) {
  return k >= UmCounterKind::kDriverHtoD && k <= UmCounterKind::kDriverGpuFaults;
}
inline bool IsUmDriverBytes(UmCounterKind k) {
  return k == UmCounterKind::kDriverHtoD || k == UmCounterKind::kDriverDtoH;
}

enum class NvtxKind : uint8_t {
  kPushPop = 1,   // nvtxRangePush/Pop: nested per thread
  kStartEnd = 2,  // nvtxRangeStart/End: may end on another thread
  kMark = 3,      // nvtxMark: instant (start == end)
};

struct KernelRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t correlation;
  StringId name;          // demangled
  StringId mangled_name;  // as the driver knows it (kNoString if not mangled)
  int32_t grid_x, grid_y, grid_z;
  int32_t block_x, block_y, block_z;
  int32_t static_smem_bytes;
  int32_t dynamic_smem_bytes;
  uint32_t registers_per_thread;
  uint32_t graph_id;       // 0: not launched from a CUDA graph
  uint64_t graph_node_id;  // 0: not launched from a CUDA graph
};

// MemcpyRecord/MemsetRecord.is_async: 1 issued by an async call, 0 by a
// synchronous one, kAsyncUnknown when the trace does not say (an imported
// copy without its issuing call; stored as NULL).
constexpr uint8_t kAsyncUnknown = 2;

struct MemcpyRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint64_t bytes;
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t correlation;
  uint32_t graph_id;
  CopyKind copy_kind;
  MemoryKind src_kind;
  MemoryKind dst_kind;
  uint8_t is_async;
  uint32_t dst_device;  // peer copies; otherwise == device
  uint32_t reserved;
};

struct MemsetRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint64_t bytes;
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t correlation;
  uint32_t graph_id;
  uint32_t value;
  MemoryKind memory_kind;
  uint8_t is_async;
  uint16_t reserved;
};

// A CUDA runtime or driver API call.
struct ApiRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;          // OS thread id (gettid)
  uint32_t correlation;  // links the call to the GPU work it created
  uint32_t cbid;         // CUPTI callback id within `domain`
  StringId name;         // e.g. "cudaLaunchKernel", "cuLaunchKernelEx"
  int32_t return_code;   // cudaError_t / CUresult
  ApiDomain domain;
  uint8_t reserved[3];
  // The tracer's own handler time on this thread since its previous API
  // record (capture/self_time.h), ns; 0: not measured.
  uint32_t tracer_ns;
};

// A host-side synchronization (the host thread waited in [start, end]).
struct SyncRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  uint32_t correlation;
  uint32_t context;
  uint32_t stream;  // 0xffffffff when not stream-specific
  uint32_t event;   // CUDA event id, 0 when none
  SyncType type;
  uint8_t reserved[3];
};

// A device/pinned/managed memory allocation or free (CUPTI MEMORY2).
struct MemoryRecord {
  int64_t ts_ns;
  uint64_t address;
  uint64_t bytes;
  uint64_t pool_address;  // stream-ordered allocations: owning pool; else 0
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t correlation;
  MemoryOp op;
  MemoryKind memory_kind;
  uint8_t is_async;  // cudaMallocAsync / cudaFreeAsync (pool-backed)
  uint8_t reserved;
  uint32_t reserved2;
};

// A memory-pool event (CUPTI MEMORY_POOL).
struct MemoryPoolRecord {
  int64_t ts_ns;
  uint64_t address;
  uint64_t size;
  uint64_t utilized_bytes;
  uint64_t release_threshold;
  uint32_t device;
  MemoryPoolOp op;
  uint8_t is_managed;
  uint16_t reserved;
};

// One unified-memory event (CUPTI UNIFIED_MEMORY_COUNTER; nsys
// CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER). Point events (CPU faults,
// thrashing, remote maps) have end_ns == start_ns.
struct UmRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint64_t address;  // virtual address of the migrated / faulting page(s)
  uint64_t value;    // meaning depends on kind (see UmCounterKind)
  uint32_t src_id;   // source processor: device id, or CPU
  uint32_t dst_id;   // destination processor (migrations, remote maps)
  uint32_t flags;    // CUPTI's: access type (GPU faults), migration cause, remote-map cause
  UmCounterKind kind;
  uint8_t reserved[3];
};

// UmRecord.flags for migrations: why the driver moved the pages (CUPTI's
// CUpti_ActivityUnifiedMemoryMigrationCause).
inline constexpr uint32_t kUmCauseUser = 1;       // cudaMemPrefetchAsync
inline constexpr uint32_t kUmCauseCoherence = 2;  // a page fault
inline constexpr uint32_t kUmCausePrefetch = 3;   // driver's speculative prefetch
inline constexpr uint32_t kUmCauseEviction = 4;   // evicted to make room on the GPU

// An NVTX range or mark (or an imported CPU-side range: cpu_op, annotation).
struct NvtxRecord {
  int64_t start_ns;
  int64_t end_ns;    // == start_ns for marks; -1 while a range is still open
  uint32_t tid;      // thread that started the range
  uint32_t end_tid;  // thread that ended it (== tid for push/pop)
  StringId domain;   // kNoString: the default domain
  StringId name;
  uint32_t category;
  uint32_t color;  // ARGB, 0 when none
  NvtxKind kind;
  uint8_t depth;  // push/pop nesting depth at start (0 = outermost)
  uint16_t reserved;
  uint32_t reserved2;
};

// Time CUPTI (or the tracer itself) spent on profiling work.
struct OverheadRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  StringId kind;  // e.g. "cupti_buffer_flush", "driver_compiler", "stepscope_writer"
};

// A failed allocation (out of memory), recorded the moment the call returned.
struct OomRecord {
  int64_t ts_ns;
  uint64_t requested_bytes;
  int64_t free_bytes;   // -1: unknown
  int64_t total_bytes;  // -1: unknown
  uint32_t tid;
  uint32_t device;
  uint32_t correlation;
  uint32_t cbid;
  int32_t return_code;
  ApiDomain domain;
  MemoryKind memory_kind;
  uint16_t reserved;
};

struct DeviceRecord {
  uint32_t id;  // CUDA device ordinal in the traced process
  StringId name;
  char uuid[48];  // "GPU-xxxxxxxx-xxxx-..." NUL-terminated, "" when unknown
  uint32_t cc_major;
  uint32_t cc_minor;
  uint32_t sm_count;
  uint64_t global_memory_bytes;
  uint64_t memory_bandwidth_bytes_per_s;  // as reported by CUPTI (0: unknown)
  uint32_t l2_cache_bytes;
  uint32_t core_clock_khz;
  uint32_t max_threads_per_block;
  uint32_t max_shared_memory_per_block;
  uint32_t max_warps_per_sm;
  uint32_t reserved;
};

// A host memory allocation or free at or above the threshold (`--trace
// host-mem`; table host_alloc). Produced by the LD_PRELOAD interposer
// (capture/host_mem), which includes this header only: keep it POD.
enum class HostAllocOp : uint8_t { kAlloc = 1, kFree = 2 };     // = enum_memory_op
enum class HostAllocKind : uint8_t { kMalloc = 1, kMmap = 2 };  // = enum_host_alloc_kind

struct HostAllocRecord {
  int64_t ts_ns;  // CLOCK_REALTIME, like every trace time
  uint64_t address;
  uint64_t bytes;
  uint32_t tid;
  HostAllocOp op;
  HostAllocKind kind;
  uint16_t reserved;
};

// ---- Host model (schema 1.5): what the CPU threads did (docs/host.md) ----

// State of a host thread over an interval or at a sample.
enum class ThreadState : uint8_t {
  kUnknown = 0,
  kRunning = 1,       // on a CPU or runnable (/proc state R; nsys sched: running)
  kBlockedCuda = 2,   // inside a blocking CUDA call (sync, synchronous/pageable copy, event sync)
  kBlockedGil = 3,    // waiting for the Python GIL
  kBlockedLock = 4,   // futex / condition variable / mutex / semaphore (not the GIL)
  kBlockedIo = 5,     // read/write/poll/select/epoll/recv on an fd (pipe, socket, file)
  kSleep = 6,         // nanosleep / clock_nanosleep / select with only a timeout
  kBlockedOther = 7,  // blocked in another syscall / uninterruptible (D) / stopped
};
inline constexpr int kThreadStateMax = 7;

enum class FrameKind : uint8_t { kUnknown = 0, kPython = 1, kNative = 2, kCudaApi = 3 };

// One stack frame (table frames; id = row id, 1-based; 0 = none).
struct FrameRecord {
  uint32_t id;
  uint8_t kind;  // FrameKind: 1 python, 2 native, 3 cuda api (a synthetic leaf naming the call)
  uint8_t reserved[3];
  StringId function;  // qualified function name: "Trainer.training_step", "__getitem__"
  StringId file;      // "train.py" as the code object says (full path); 0 for native w/o file
  int32_t line;       // line being executed (python); 0 unknown
};

// A node of the stack trie (table callsites): a leaf id names a whole stack.
struct CallsiteRecord {
  uint32_t id;      // 1-based; 0 = no stack
  uint32_t parent;  // 0 for a root frame (outermost: <module>)
  uint32_t frame;   // frames.id
  uint16_t depth;   // 0 = root
  uint16_t reserved;
};

// One thread observed at one instant (table samples).
struct SampleRecord {
  int64_t ts_ns;
  uint32_t tid;
  ThreadState state;
  uint8_t reserved[3];
  StringId wait;      // what it was blocked in: "futex", "poll(pipe)", "cudaStreamSynchronize",
                      // "GIL"; 0 when running
  uint32_t callsite;  // leaf callsite of its Python stack (0: none / not a Python thread)
  int64_t cpu_ns;     // thread CPU time consumed since its previous sample; -1 unknown
};

// One native stack sample of a thread, taken on its CPU time (table
// native_samples, schema 1.6; docs/host.md, "Native samples").
struct NativeSampleRecord {
  int64_t ts_ns;
  uint32_t tid;
  uint32_t callsite;  // leaf callsite of its native stack (frames of kind native); 0: none
};

// An interval a thread spent in one scheduling state (table thread_sched).
struct SchedRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  int32_t cpu;        // CPU it ran on; -1 unknown
  ThreadState state;  // kRunning, or the blocked kind when known
  uint8_t reserved[7];
};

// OsrtRecord.source
inline constexpr uint8_t kOsrtTraced = 1;    // interposed: exact
inline constexpr uint8_t kOsrtSampled = 2;   // >= 2 consecutive samples in one wait
inline constexpr uint8_t kOsrtImported = 3;  // nsys OSRT_API

// An OS-runtime wait (table osrt).
struct OsrtRecord {
  int64_t start_ns;
  int64_t end_ns;
  uint32_t tid;
  StringId name;      // "pthread_cond_wait", "futex", "poll", "read", "sem_wait", "nanosleep"
  StringId detail;    // "pipe", "socket", "/dev/shm/...", "" (what it waited on)
  uint32_t callsite;  // Python stack at the wait (0: none)
  uint8_t source;     // kOsrtTraced, kOsrtSampled, kOsrtImported
  uint8_t reserved[7];
};

// The Python stack of the thread when it made a CUDA call (table api_callsite).
struct ApiCallsiteRecord {
  uint32_t correlation;  // api.correlation
  uint32_t callsite;
};

// One GPU performance-monitor sample of one metric (CUPTI PM sampling,
// `profile --gpu-metrics`; table gpu_metrics): the metric's value over the
// sampling interval [start_ns, end_ns] of one device. The metrics and their
// units: format/gpu_metric_names.h.
struct GpuMetricRecord {
  int64_t start_ns;
  int64_t end_ns;
  double value;
  uint32_t device;
  StringId metric;  // the metric's CUPTI name (strings.id)
};

static_assert(sizeof(KernelRecord) == 88, "KernelRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(MemcpyRecord) == 56, "MemcpyRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(MemsetRecord) == 56, "MemsetRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(ApiRecord) == 48, "ApiRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(SyncRecord) == 40, "SyncRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(MemoryRecord) == 56, "MemoryRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(MemoryPoolRecord) == 48, "MemoryPoolRecord layout changed");
static_assert(sizeof(NvtxRecord) == 48, "NvtxRecord layout changed: bump kRecordFormatVersion");
static_assert(sizeof(OverheadRecord) == 24, "OverheadRecord layout changed");
static_assert(sizeof(OomRecord) == 56, "OomRecord layout changed");
static_assert(sizeof(UmRecord) == 48, "UmRecord layout changed");
static_assert(sizeof(HostAllocRecord) == 32, "HostAllocRecord layout changed");
static_assert(sizeof(FrameRecord) == 20, "FrameRecord layout changed");
static_assert(sizeof(CallsiteRecord) == 16, "CallsiteRecord layout changed");
static_assert(sizeof(SampleRecord) == 32, "SampleRecord layout changed");
static_assert(sizeof(SchedRecord) == 32, "SchedRecord layout changed");
static_assert(sizeof(OsrtRecord) == 40, "OsrtRecord layout changed");
static_assert(sizeof(ApiCallsiteRecord) == 8, "ApiCallsiteRecord layout changed");
static_assert(sizeof(GpuMetricRecord) == 32, "GpuMetricRecord layout changed");

// Names for the enums above (used by the schema's enum tables and by text output).
const char* MemoryKindName(MemoryKind k);
const char* CopyKindName(CopyKind k);
const char* SyncTypeName(SyncType t);
const char* MemoryOpName(MemoryOp op);
const char* MemoryPoolOpName(MemoryPoolOp op);
const char* NvtxKindName(NvtxKind k);
const char* ApiDomainName(ApiDomain d);
const char* UmCounterKindName(UmCounterKind k);
const char* ThreadStateName(ThreadState s);  // "running", "blocked_cuda", ...
const char* FrameKindName(FrameKind k);

}  // namespace stepscope
