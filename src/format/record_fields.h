// Each record's columns, declared once: for every record of records.h that
// has a table, the column of each field in order, its documentation
// (docs/schema.md), and how its value goes to SQL and comes back.
//
// From these lists store/record_sql.h generates the table's columns in the
// schema (store/schema.cc keeps the table's doc and indices), TraceWriter's
// INSERT and its binds, and TraceReader's SELECT and row decoding. To add a
// field: add the member to the record (records.h; a layout change), then one
// Col(...) here at the position its column takes in the table (new columns go
// last: a minor schema version, store/schema.h). record_sql_test checks that
// schema, insert and select agree for every record.
//
// A Col maps a record member to a column; an Extra is a column the record
// does not hold (its value is passed to the writer beside the record). An
// `id` column is the table's INTEGER PRIMARY KEY: written and read, but
// declared by the schema itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "format/records.h"

namespace stepscope {

// What a NULL in the column means.
enum class NullAs : uint8_t {
  kZero,      // read as 0 (SQLite's value for NULL); never written
  kValue,     // read as ColumnOpts::null_value; never written
  kSentinel,  // null_value is written as NULL and read back from it (is_async: unknown)
};

struct ColumnOpts {
  // Applied to the stored integer before it is cast to the member's type:
  // bad input becomes in-range data. nullptr: the value as stored.
  int64_t (*read)(int64_t) = nullptr;
  NullAs null = NullAs::kZero;
  int64_t null_value = 0;
  const char* sql_type = "INTEGER";  // a char array member is TEXT (its NUL-terminated string)
};

// Readers' sanitizers (the bounds TraceModel assumes).
// A time kept in [-2^61, 2^62] ns: the difference of any two fits in int64.
// Negative times are kept so that the readers' rule for times a trace cannot
// hold (common/intervals.h, ClampRecordTimes) sees them, fixes the record and
// counts it; clamping here alone would make an INT64_MIN start a silent 0.
constexpr int64_t ReadTime(int64_t v) {
  return std::clamp<int64_t>(v, -(int64_t{1} << 61), int64_t{1} << 62);
}
// An id: out of the uint32 range is 0 (none).
constexpr int64_t ReadU32(int64_t v) { return v < 0 || v > 0xffffffffLL ? 0 : v; }
template <int64_t kLo, int64_t kHi>
constexpr int64_t ReadClamp(int64_t v) {
  return std::clamp<int64_t>(v, kLo, kHi);
}
// An enumeration value: outside [kLo, kHi] is 0 (unknown).
template <int64_t kLo, int64_t kHi>
constexpr int64_t ReadInRange(int64_t v) {
  return v >= kLo && v <= kHi ? v : 0;
}
template <int64_t kMin>
constexpr int64_t ReadAtLeast(int64_t v) {
  return std::max<int64_t>(v, kMin);
}

inline constexpr ColumnOpts kTime{.read = ReadTime};
inline constexpr ColumnOpts kU32{.read = ReadU32};
inline constexpr ColumnOpts kThreadStateColumn{.read = ReadInRange<0, kThreadStateMax>};
inline constexpr ColumnOpts kAsyncNull{.null = NullAs::kSentinel, .null_value = kAsyncUnknown};

template <typename R, typename M>
struct Col {
  using Record = R;
  using Member = M;
  constexpr Col(const char* column, M R::*member, const char* doc, ColumnOpts opts = {})
      : column(column), doc(doc), member(member), opts(opts) {}
  const char* column;
  const char* doc;
  M R::*member;
  ColumnOpts opts;
};

struct Extra {
  constexpr Extra(const char* column, const char* doc, ColumnOpts opts = {})
      : column(column), doc(doc), opts(opts) {}
  const char* column;
  const char* doc;
  ColumnOpts opts;
};

// RecordFormat<R>::kTable and ::kFields (a tuple of Col and Extra), for each
// record stored in a table of its own.
template <typename R>
struct RecordFormat;

// clang-format off (one column a line)
template <>
struct RecordFormat<KernelRecord> {
  static constexpr const char* kTable = "kernels";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &KernelRecord::start_ns, "start on the trace clock, ns", kTime),
      Col("end_ns", &KernelRecord::end_ns, "end on the trace clock, ns", kTime),
      Col("device", &KernelRecord::device, "devices.id"),
      Col("context", &KernelRecord::context, "CUDA context id"),
      Col("stream", &KernelRecord::stream, "CUDA stream id"),
      Col("correlation", &KernelRecord::correlation,
          "links to the launching api row (api.correlation)"),
      Col("name_id", &KernelRecord::name, "demangled kernel name (strings.id)"),
      Col("mangled_id", &KernelRecord::mangled_name,
          "mangled name (strings.id); 0 when the name was not mangled"),
      Col("grid_x", &KernelRecord::grid_x, "grid size"), Col("grid_y", &KernelRecord::grid_y, ""),
      Col("grid_z", &KernelRecord::grid_z, ""),
      Col("block_x", &KernelRecord::block_x, "block size"),
      Col("block_y", &KernelRecord::block_y, ""), Col("block_z", &KernelRecord::block_z, ""),
      Col("registers_per_thread", &KernelRecord::registers_per_thread, "registers per thread"),
      Col("static_smem_bytes", &KernelRecord::static_smem_bytes,
          "static shared memory per block, bytes"),
      Col("dynamic_smem_bytes", &KernelRecord::dynamic_smem_bytes,
          "dynamic shared memory per block, bytes"),
      Col("graph_id", &KernelRecord::graph_id, "CUDA graph id, 0 when not launched from a graph"),
      Col("graph_node_id", &KernelRecord::graph_node_id,
          "CUDA graph node id, 0 when not from a graph"));
};

template <>
struct RecordFormat<MemcpyRecord> {
  static constexpr const char* kTable = "memcpy";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &MemcpyRecord::start_ns, "start, ns", kTime),
      Col("end_ns", &MemcpyRecord::end_ns, "end, ns", kTime),
      Col("device", &MemcpyRecord::device, "devices.id"),
      Col("context", &MemcpyRecord::context, "CUDA context id"),
      Col("stream", &MemcpyRecord::stream, "CUDA stream id"),
      Col("correlation", &MemcpyRecord::correlation, "api.correlation of the call that issued it"),
      Col("bytes", &MemcpyRecord::bytes, "bytes copied"),
      Col("copy_kind", &MemcpyRecord::copy_kind, "enum_copy_kind.id (HtoD, DtoH, DtoD, ...)"),
      Col("src_kind", &MemcpyRecord::src_kind,
          "enum_memory_kind.id of the source (pageable, pinned, device, ...)"),
      Col("dst_kind", &MemcpyRecord::dst_kind, "enum_memory_kind.id of the destination"),
      Col("is_async", &MemcpyRecord::is_async,
          "1 issued by an async API (cudaMemcpyAsync), 0 by a synchronous one; NULL unknown "
          "(imported, no issuing call in the trace)",
          kAsyncNull),
      Col("dst_device", &MemcpyRecord::dst_device,
          "destination device for peer copies; else = device"),
      Col("graph_id", &MemcpyRecord::graph_id, "CUDA graph id, 0 when not from a graph"));
};

template <>
struct RecordFormat<MemsetRecord> {
  static constexpr const char* kTable = "memset";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &MemsetRecord::start_ns, "start, ns", kTime),
      Col("end_ns", &MemsetRecord::end_ns, "end, ns", kTime),
      Col("device", &MemsetRecord::device, "devices.id"),
      Col("context", &MemsetRecord::context, "CUDA context id"),
      Col("stream", &MemsetRecord::stream, "CUDA stream id"),
      Col("correlation", &MemsetRecord::correlation, "api.correlation of the call that issued it"),
      Col("bytes", &MemsetRecord::bytes, "bytes set"),
      Col("value", &MemsetRecord::value, "value written"),
      Col("memory_kind", &MemsetRecord::memory_kind, "enum_memory_kind.id"),
      Col("is_async", &MemsetRecord::is_async,
          "1 async API, 0 synchronous; NULL unknown (as memcpy)", kAsyncNull),
      Col("graph_id", &MemsetRecord::graph_id, "CUDA graph id, 0 when not from a graph"));
};

template <>
struct RecordFormat<ApiRecord> {
  static constexpr const char* kTable = "api";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &ApiRecord::start_ns, "call entry, ns", kTime),
      Col("end_ns", &ApiRecord::end_ns, "call return, ns", kTime),
      Col("tid", &ApiRecord::tid, "OS thread id (threads.tid)"),
      Col("correlation", &ApiRecord::correlation,
          "links to kernels/memcpy/memset/sync/memory.correlation"),
      Col("domain", &ApiRecord::domain, "enum_api_domain.id: 0 runtime, 1 driver"),
      Col("cbid", &ApiRecord::cbid, "CUPTI callback id within the domain"),
      Col("name_id", &ApiRecord::name, "function name (strings.id), e.g. cudaLaunchKernel"),
      Col("return_code", &ApiRecord::return_code, "cudaError_t / CUresult returned"),
      Col("tracer_ns", &ApiRecord::tracer_ns,
          "the tracer's own handler time on this thread since its previous API call "
          "(API callbacks, Python stacks, NVTX), ns; the replay removes it from the host "
          "time (schema 1.7; NULL or 0: not measured)"));
};

template <>
struct RecordFormat<SyncRecord> {
  static constexpr const char* kTable = "sync";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &SyncRecord::start_ns, "wait start, ns", kTime),
      Col("end_ns", &SyncRecord::end_ns, "wait end, ns", kTime),
      Col("tid", &SyncRecord::tid, "waiting thread, from the matching api row (0 when unknown)"),
      Col("correlation", &SyncRecord::correlation, "api.correlation of the synchronizing call"),
      Col("type", &SyncRecord::type, "enum_sync_type.id"),
      Col("context", &SyncRecord::context, "CUDA context id"),
      Col("stream", &SyncRecord::stream, "CUDA stream id; 4294967295 when not stream-specific"),
      Col("event", &SyncRecord::event, "CUDA event id; 0 when none"));
};

template <>
struct RecordFormat<MemoryRecord> {
  static constexpr const char* kTable = "memory";
  static constexpr auto kFields = std::make_tuple(
      Col("ts_ns", &MemoryRecord::ts_ns, "time of the operation, ns", kTime),
      Col("op", &MemoryRecord::op, "enum_memory_op.id: 1 alloc, 2 free"),
      Col("address", &MemoryRecord::address, "address of the allocation"),
      Col("bytes", &MemoryRecord::bytes, "size, bytes"),
      Col("memory_kind", &MemoryRecord::memory_kind,
          "enum_memory_kind.id (device, pinned, managed, ...)"),
      Col("device", &MemoryRecord::device, "devices.id"),
      Col("context", &MemoryRecord::context, "CUDA context id"),
      Col("stream", &MemoryRecord::stream, "stream of a stream-ordered allocation, else 0"),
      Col("correlation", &MemoryRecord::correlation,
          "api.correlation of the allocating/freeing call"),
      Col("is_async", &MemoryRecord::is_async, "1 for stream-ordered (pool) allocations"),
      Col("pool_address", &MemoryRecord::pool_address,
          "owning memory pool for stream-ordered allocations, else 0"));
};

template <>
struct RecordFormat<MemoryPoolRecord> {
  static constexpr const char* kTable = "memory_pool";
  static constexpr auto kFields = std::make_tuple(
      Col("ts_ns", &MemoryPoolRecord::ts_ns, "time, ns", kTime),
      Col("op", &MemoryPoolRecord::op, "enum_memory_pool_op.id: created, destroyed, trimmed"),
      Col("address", &MemoryPoolRecord::address, "pool base address"),
      Col("size", &MemoryPoolRecord::size, "pool size, bytes"),
      Col("utilized_bytes", &MemoryPoolRecord::utilized_bytes, "bytes in use in the pool"),
      Col("release_threshold", &MemoryPoolRecord::release_threshold,
          "pool release threshold, bytes"),
      Col("device", &MemoryPoolRecord::device, "devices.id"),
      Col("is_managed", &MemoryPoolRecord::is_managed, "1 for a managed-memory pool"));
};

template <>
struct RecordFormat<UmRecord> {
  static constexpr const char* kTable = "um";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &UmRecord::start_ns,
          "start, ns (faults: when the driver started handling them)"),
      Col("end_ns", &UmRecord::end_ns,
          "end, ns (= start_ns for CPU faults, thrashing, remote maps)"),
      Col("kind", &UmRecord::kind,
          "enum_um_counter_kind.id: 1 bytes_htod, 2 bytes_dtoh, 3 cpu_page_fault, 4 "
          "gpu_page_fault, 5 thrashing, 6 throttling, 7 remote_map, "
          "8 bytes_dtod (CUPTI's records); 9 driver_htod, 10 driver_dtoh, 11 "
          "driver_cpu_faults, 12 driver_gpu_faults (the driver's totals over [start_ns, "
          "end_ns], complete where CUPTI's records are not)",
          {.read = ReadInRange<0, kUmCounterKindMax>}),
      Col("value", &UmRecord::value,
          "migrations, thrashing, remote maps: bytes; gpu_page_fault: faults in the group; "
          "cpu_page_fault: program counter of the faulting instruction; driver_*: bytes or "
          "faults in the interval"),
      Col("address", &UmRecord::address, "virtual address of the page(s)"),
      Col("src_id", &UmRecord::src_id,
          "source processor (device id; for migrations from the host, CPU)"),
      Col("dst_id", &UmRecord::dst_id, "destination processor (migrations, remote maps)"),
      Col("flags", &UmRecord::flags,
          "migrations: cause (1 user prefetch, 2 coherence = a fault, 3 driver prefetch, 4 "
          "eviction); gpu_page_fault: access type (1 read, 2 write, 3 atomic, 4 prefetch)"));
};

template <>
struct RecordFormat<OomRecord> {
  static constexpr const char* kTable = "oom";
  static constexpr auto kFields = std::make_tuple(
      Col("ts_ns", &OomRecord::ts_ns, "when the failing call returned, ns"),
      Col("tid", &OomRecord::tid, "calling thread (threads.tid)"),
      Col("device", &OomRecord::device,
          "devices.id the allocation was for (current device of the call)"),
      Col("correlation", &OomRecord::correlation,
          "api.correlation of the failing call; 0 when not traced"),
      Extra("name_id", "API name (strings.id), e.g. cudaMalloc"),
      Col("return_code", &OomRecord::return_code,
          "cudaError_t / CUresult returned (2 for out of memory)"),
      Col("requested_bytes", &OomRecord::requested_bytes, "size the call asked for, bytes"),
      Col("memory_kind", &OomRecord::memory_kind,
          "enum_memory_kind.id of the request (device, pinned, managed)"),
      Col("free_bytes", &OomRecord::free_bytes,
          "free device memory right after the failure (cuMemGetInfo), bytes; -1 unknown"),
      Col("total_bytes", &OomRecord::total_bytes,
          "total device memory (cuMemGetInfo), bytes; -1 unknown"));
};

template <>
struct RecordFormat<HostAllocRecord> {
  static constexpr const char* kTable = "host_alloc";
  static constexpr auto kFields = std::make_tuple(
      Col("ts_ns", &HostAllocRecord::ts_ns, "time of the call, ns"),
      Col("tid", &HostAllocRecord::tid, "calling thread (threads.tid)"),
      Col("op", &HostAllocRecord::op, "enum_memory_op.id: 1 alloc, 2 free",
          {.read = ReadInRange<0, 2>}),
      Col("address", &HostAllocRecord::address,
          "address returned by the allocation / passed to the free"),
      Col("bytes", &HostAllocRecord::bytes,
          "size requested (alloc) or released (free; usable size for free()), bytes",
          {.read = ReadAtLeast<0>}),
      Col("kind", &HostAllocRecord::kind,
          "enum_host_alloc_kind.id: 1 malloc family, 2 anonymous mmap",
          {.read = ReadInRange<0, 2>}));
};

template <>
struct RecordFormat<NvtxRecord> {
  static constexpr const char* kTable = "nvtx";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &NvtxRecord::start_ns, "range start, ns", kTime),
      Col("end_ns", &NvtxRecord::end_ns,
          "range end, ns (= start_ns for marks; -1 if never closed)"),
      Col("tid", &NvtxRecord::tid, "thread that started the range"),
      Col("end_tid", &NvtxRecord::end_tid,
          "thread that ended it (differs only for start/end ranges)"),
      Col("kind", &NvtxRecord::kind, "enum_nvtx_kind.id: 1 push/pop, 2 start/end, 3 mark"),
      Col("depth", &NvtxRecord::depth, "push/pop nesting depth at start (0 = outermost)"),
      Col("domain_id", &NvtxRecord::domain, "NVTX domain (strings.id); 0 = default domain"),
      Col("name_id", &NvtxRecord::name, "message (strings.id)"),
      Col("category", &NvtxRecord::category, "NVTX category, 0 when none"),
      Col("color", &NvtxRecord::color, "ARGB color, 0 when none"),
      Extra(
          "unclosed",
          "1: the range was still open when the process died or exited (end_ns is then the end of "
          "the trace); 0 otherwise (schema 1.3; older traces lack "
          "the column)",
          {.sql_type = "INTEGER DEFAULT 0"}));
};

template <>
struct RecordFormat<OverheadRecord> {
  static constexpr const char* kTable = "overhead";
  static constexpr auto kFields =
      std::make_tuple(Col("start_ns", &OverheadRecord::start_ns, "start, ns", kTime),
                      Col("end_ns", &OverheadRecord::end_ns, "end, ns", kTime),
                      Col("tid", &OverheadRecord::tid, "thread, 0 when not thread-specific"),
                      Col("kind_id", &OverheadRecord::kind, "what the overhead was (strings.id)"));
};

template <>
struct RecordFormat<DeviceRecord> {
  static constexpr const char* kTable = "devices";
  static constexpr auto kFields = std::make_tuple(
      Col("id", &DeviceRecord::id, "row id"),
      Col("name_id", &DeviceRecord::name, "device name (strings.id)"),
      Col("uuid", &DeviceRecord::uuid, "GPU UUID, e.g. GPU-5f3c...; empty when unknown",
          {.sql_type = "TEXT"}),
      Col("cc_major", &DeviceRecord::cc_major, "compute capability, major"),
      Col("cc_minor", &DeviceRecord::cc_minor, "compute capability, minor"),
      Col("sm_count", &DeviceRecord::sm_count, "number of streaming multiprocessors"),
      Col("global_memory_bytes", &DeviceRecord::global_memory_bytes, "device memory size, bytes"),
      Col("memory_bandwidth_bytes_per_s", &DeviceRecord::memory_bandwidth_bytes_per_s,
          "theoretical DRAM bandwidth reported by CUPTI, bytes/s (0: unknown)"),
      Col("l2_cache_bytes", &DeviceRecord::l2_cache_bytes, "L2 cache size, bytes"),
      Col("core_clock_khz", &DeviceRecord::core_clock_khz, "SM clock, kHz"),
      Col("max_threads_per_block", &DeviceRecord::max_threads_per_block, "limit"),
      Col("max_shared_memory_per_block", &DeviceRecord::max_shared_memory_per_block, "bytes"),
      Col("max_warps_per_sm", &DeviceRecord::max_warps_per_sm, "limit"));
};

template <>
struct RecordFormat<FrameRecord> {
  static constexpr const char* kTable = "frames";
  static constexpr auto kFields = std::make_tuple(
      Col("id", &FrameRecord::id, "row id", kU32),
      Col("kind", &FrameRecord::kind, "enum_frame_kind.id: 1 python, 2 native, 3 cuda_api",
          {.read = ReadInRange<0, 3>}),
      Col("function_id", &FrameRecord::function,
          "function name (strings.id), qualified when known: Trainer.training_step", kU32),
      Col("file_id", &FrameRecord::file,
          "source file (strings.id) as the code object names it; 0 for native frames "
          "without one",
          kU32),
      Col("line", &FrameRecord::line, "line being executed (Python); 0 unknown",
          {.read = ReadClamp<0, (1 << 30)>}));
};

template <>
struct RecordFormat<CallsiteRecord> {
  static constexpr const char* kTable = "callsites";
  static constexpr auto kFields = std::make_tuple(
      Col("id", &CallsiteRecord::id, "row id", kU32),
      Col("parent_id", &CallsiteRecord::parent, "callsites.id of the caller; 0 for a root frame",
          kU32),
      Col("frame_id", &CallsiteRecord::frame, "frames.id", kU32),
      Col("depth", &CallsiteRecord::depth, "0 for a root frame, parent's depth + 1 otherwise",
          {.read = ReadClamp<0, 0xffff>}));
};

template <>
struct RecordFormat<SampleRecord> {
  static constexpr const char* kTable = "samples";
  static constexpr auto kFields = std::make_tuple(
      Col("ts_ns", &SampleRecord::ts_ns, "time of the observation, ns", kTime),
      Col("tid", &SampleRecord::tid,
          "thread (threads.tid): of the traced process, or of one of its child processes "
          "(DataLoader workers; capture only)",
          kU32),
      Col("state", &SampleRecord::state, "enum_thread_state.id", kThreadStateColumn),
      Col("wait_id", &SampleRecord::wait,
          "what it was blocked in (strings.id): futex, poll(pipe), cudaStreamSynchronize, GIL; 0 "
          "when running",
          kU32),
      Col("callsite_id", &SampleRecord::callsite,
          "leaf callsites.id of its stack; 0 none (not a Python thread, or unwound)", kU32),
      Col("cpu_ns", &SampleRecord::cpu_ns,
          "thread CPU time consumed since its previous sample, ns; "
          "-1 unknown",
          {.read = ReadAtLeast<-1>, .null = NullAs::kValue, .null_value = -1}));
};

template <>
struct RecordFormat<NativeSampleRecord> {
  static constexpr const char* kTable = "native_samples";
  static constexpr auto kFields = std::make_tuple(
      Col("ts_ns", &NativeSampleRecord::ts_ns, "time of the sample, ns", kTime),
      Col("tid", &NativeSampleRecord::tid, "thread (threads.tid) of the traced process", kU32),
      Col("callsite_id", &NativeSampleRecord::callsite,
          "leaf callsites.id of its native stack (frames of kind native: function, library); 0 "
          "none (the sampled address is in no mapped file)",
          kU32));
};

template <>
struct RecordFormat<SchedRecord> {
  static constexpr const char* kTable = "thread_sched";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &SchedRecord::start_ns, "interval start, ns", kTime),
      Col("end_ns", &SchedRecord::end_ns, "interval end, ns", kTime),
      Col("tid", &SchedRecord::tid, "thread (threads.tid)", kU32),
      Col("cpu", &SchedRecord::cpu, "CPU it ran on; -1 unknown or not running",
          {.read = ReadClamp<-1, (1 << 30)>}),
      Col("state", &SchedRecord::state, "enum_thread_state.id: 1 running, or the blocked kind",
          kThreadStateColumn));
};

template <>
struct RecordFormat<OsrtRecord> {
  static constexpr const char* kTable = "osrt";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &OsrtRecord::start_ns, "wait start, ns", kTime),
      Col("end_ns", &OsrtRecord::end_ns, "wait end, ns", kTime),
      Col("tid", &OsrtRecord::tid, "waiting thread (threads.tid)", kU32),
      Col("name_id", &OsrtRecord::name,
          "call (strings.id): pthread_cond_wait, futex, poll, read, sem_wait, nanosleep", kU32),
      Col("detail_id", &OsrtRecord::detail,
          "what it waited on (strings.id): pipe, socket, a path; 0 unknown", kU32),
      Col("callsite_id", &OsrtRecord::callsite,
          "leaf callsites.id of the stack at the wait; 0 none", kU32),
      Col("source", &OsrtRecord::source,
          "1 traced (exact), 2 sampled (two or more consecutive samples in one wait: ends "
          "accurate to one sample period), 3 imported (nsys OSRT_API)",
          {.read = ReadClamp<0, 3>}));
};

template <>
struct RecordFormat<ApiCallsiteRecord> {
  static constexpr const char* kTable = "api_callsite";
  static constexpr auto kFields =
      std::make_tuple(Col("correlation", &ApiCallsiteRecord::correlation, "api.correlation", kU32),
                      Col("callsite_id", &ApiCallsiteRecord::callsite, "leaf callsites.id", kU32));
};
template <>
struct RecordFormat<GpuMetricRecord> {
  static constexpr const char* kTable = "gpu_metrics";
  static constexpr auto kFields = std::make_tuple(
      Col("start_ns", &GpuMetricRecord::start_ns, "sample interval start, ns", kTime),
      Col("end_ns", &GpuMetricRecord::end_ns, "sample interval end, ns", kTime),
      Col("device", &GpuMetricRecord::device, "devices.id"),
      Col("metric_id", &GpuMetricRecord::metric,
          "CUPTI metric name (strings.id), e.g. "
          "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed; "
          "docs/capture.md, GPU metrics, lists them with their units",
          kU32),
      Col("value", &GpuMetricRecord::value,
          "the metric over the interval: a percentage (pct_of_peak_*), a rate per second "
          "(per_second) or a count"));
};
// clang-format on

}  // namespace stepscope
