#include "collector/cupti_decoder.h"

#include <cstdio>
#include <cstring>

#include "capture/cupti_records.h"
#include "common/strings.h"

namespace stepscope {
namespace {

// stepscope's enums use CUPTI's numbering for these (see format/records.h);
// anything out of range becomes kUnknown rather than an invalid enum value.
MemoryKind ToMemoryKind(uint32_t v) {
  return v <= 7 ? static_cast<MemoryKind>(v) : MemoryKind::kUnknown;
}
CopyKind ToCopyKind(uint32_t v) { return v <= 10 ? static_cast<CopyKind>(v) : CopyKind::kUnknown; }
SyncType ToSyncType(uint32_t v) { return v <= 4 ? static_cast<SyncType>(v) : SyncType::kUnknown; }
MemoryOp ToMemoryOp(uint32_t v) { return v <= 2 ? static_cast<MemoryOp>(v) : MemoryOp::kUnknown; }
UmCounterKind ToUmKind(uint32_t v) {
  return v <= 8 ? static_cast<UmCounterKind>(v) : UmCounterKind::kUnknown;
}
MemoryPoolOp ToPoolOp(uint32_t v) {
  return v <= 3 ? static_cast<MemoryPoolOp>(v) : MemoryPoolOp::kUnknown;
}

const char* OverheadName(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "activity_buffer_request";
    default:
      return "unknown";
  }
}

std::string FormatUuid(const CUuuid& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof(buf),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

}  // namespace

ActivityDecoder::ActivityDecoder(TraceWriter* writer, ApiNameResolver resolver)
    : w_(writer), resolver_(std::move(resolver)) {}

void ActivityDecoder::Span(int64_t start, int64_t end) {
  if (start > 0 && (min_ns_ == 0 || start < min_ns_)) min_ns_ = start;
  if (end > max_ns_) max_ns_ = end;
}

namespace {
// The synchronizing API functions and the kind of wait each one is.
SyncType SyncTypeFromName(const std::string& n) {
  auto is = [&](const char* prefix) { return StartsWith(n, prefix); };
  if (is("cudaStreamSynchronize") || is("cuStreamSynchronize")) return SyncType::kStreamSynchronize;
  if (is("cudaDeviceSynchronize") || is("cuCtxSynchronize")) return SyncType::kContextSynchronize;
  if (is("cudaEventSynchronize") || is("cuEventSynchronize")) return SyncType::kEventSynchronize;
  if (is("cudaStreamWaitEvent") || is("cuStreamWaitEvent")) return SyncType::kStreamWaitEvent;
  return SyncType::kUnknown;
}
}  // namespace

StringId ActivityDecoder::ApiName(ApiDomain domain, uint32_t cbid, SyncType* sync_type) {
  uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it == api_names_.end()) {
    const char* name = resolver_ ? resolver_(domain, cbid) : nullptr;
    std::string s =
        name ? name : (std::string(ApiDomainName(domain)) + "_cbid_" + std::to_string(cbid));
    it = api_names_.emplace(key, std::make_pair(w_->Intern(s), SyncTypeFromName(s))).first;
  }
  *sync_type = it->second.second;
  return it->second.first;
}

void ActivityDecoder::AddApi(ApiRecord r) {
  SyncType sync = SyncType::kUnknown;
  r.name = ApiName(r.domain, r.cbid, &sync);
  w_->AddApi(r);
  threads_.insert(r.tid);
  Span(r.start_ns, r.end_ns);
  ++counters_.api_calls;
  if (sync_from_api_ && sync != SyncType::kUnknown) {
    SyncRecord y{};
    y.start_ns = r.start_ns;
    y.end_ns = r.end_ns;
    y.tid = r.tid;
    y.correlation = r.correlation;
    y.stream = 0xffffffffu;
    y.type = sync;
    w_->AddSync(y);
    ++counters_.syncs;
  }
}

void ActivityDecoder::KernelNames(const char* mangled, StringId* name, StringId* mangled_id) {
  std::string key = mangled ? mangled : "";
  auto it = kernel_names_.find(key);
  if (it == kernel_names_.end()) {
    std::string demangled = Demangle(key);
    StringId n = w_->Intern(demangled.empty() ? "<unnamed kernel>" : demangled);
    StringId m = demangled == key ? kNoString : w_->Intern(key);
    it = kernel_names_.emplace(std::move(key), std::make_pair(n, m)).first;
  }
  *name = it->second.first;
  *mangled_id = it->second.second;
}

// MEMCPY and MEMCPY2 (peer) records share these fields; only the devices differ.
template <typename CuptiMemcpy>
void ActivityDecoder::AddMemcpy(const CuptiMemcpy& m, uint32_t device, uint32_t dst_device) {
  MemcpyRecord r{};
  r.start_ns = static_cast<int64_t>(m.start);
  r.end_ns = static_cast<int64_t>(m.end);
  r.bytes = m.bytes;
  r.device = device;
  r.dst_device = dst_device;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = m.correlationId;
  r.graph_id = m.graphId;
  r.copy_kind = ToCopyKind(m.copyKind);
  r.src_kind = ToMemoryKind(m.srcKind);
  r.dst_kind = ToMemoryKind(m.dstKind);
  r.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  w_->AddMemcpy(r);
  Span(r.start_ns, r.end_ns);
  ++counters_.memcpys;
}

void ActivityDecoder::DecodeKernel(const cupti::Kernel& k) {
  KernelRecord r{};
  r.start_ns = static_cast<int64_t>(k.start);
  r.end_ns = static_cast<int64_t>(k.end);
  r.device = k.deviceId;
  r.context = k.contextId;
  r.stream = k.streamId;
  r.correlation = k.correlationId;
  KernelNames(Fetch(k.name), &r.name, &r.mangled_name);
  r.grid_x = k.gridX;
  r.grid_y = k.gridY;
  r.grid_z = k.gridZ;
  r.block_x = k.blockX;
  r.block_y = k.blockY;
  r.block_z = k.blockZ;
  r.static_smem_bytes = k.staticSharedMemory;
  r.dynamic_smem_bytes = k.dynamicSharedMemory;
  r.registers_per_thread = k.registersPerThread;
  r.graph_id = k.graphId;
  r.graph_node_id = k.graphNodeId;
  w_->AddKernel(r);
  Span(r.start_ns, r.end_ns);
  ++counters_.kernels;
}

void ActivityDecoder::DecodeMemset(const cupti::Memset& m) {
  MemsetRecord r{};
  r.start_ns = static_cast<int64_t>(m.start);
  r.end_ns = static_cast<int64_t>(m.end);
  r.bytes = m.bytes;
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = m.correlationId;
  r.graph_id = m.graphId;
  r.value = m.value;
  r.memory_kind = ToMemoryKind(m.memoryKind);
  r.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0;
  w_->AddMemset(r);
  Span(r.start_ns, r.end_ns);
  ++counters_.memsets;
}

void ActivityDecoder::DecodeSync(const cupti::Sync& s) {
  SyncRecord r{};
  r.start_ns = static_cast<int64_t>(s.start);
  r.end_ns = static_cast<int64_t>(s.end);
  r.correlation = s.correlationId;
  r.context = s.contextId;
  r.stream = s.streamId;
  r.event = s.cudaEventId;
  r.type = ToSyncType(s.type);
  w_->AddSync(r);
  Span(r.start_ns, r.end_ns);
  ++counters_.syncs;
}

void ActivityDecoder::DecodeMemory(const cupti::Memory& m) {
  MemoryRecord r{};
  r.ts_ns = static_cast<int64_t>(m.timestamp);
  r.op = ToMemoryOp(m.memoryOperationType);
  r.address = m.address;
  r.bytes = m.bytes;
  r.memory_kind = ToMemoryKind(m.memoryKind);
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = m.correlationId;
  r.is_async = m.isAsync ? 1 : 0;
  r.pool_address = m.isAsync ? m.memoryPoolConfig.address : 0;
  w_->AddMemory(r);
  Span(r.ts_ns, r.ts_ns);
  ++counters_.memory;
}

void ActivityDecoder::DecodeMemoryPool(const cupti::MemoryPool& p) {
  MemoryPoolRecord r{};
  r.ts_ns = static_cast<int64_t>(p.timestamp);
  r.op = ToPoolOp(p.memoryPoolOperationType);
  r.address = p.address;
  r.size = p.size;
  r.utilized_bytes = p.utilizedSize;
  r.release_threshold = p.releaseThreshold;
  r.device = p.deviceId;
  r.is_managed = p.isManagedPool;
  w_->AddMemoryPool(r);
  ++counters_.memory_pools;
}

void ActivityDecoder::DecodeDevice(const cupti::Device& d) {
  DeviceRecord r{};
  r.id = d.id;
  const char* device_name = Fetch(d.name);
  r.name = w_->Intern(device_name ? device_name : "unknown GPU");
  std::string uuid = FormatUuid(d.uuid);
  std::memcpy(r.uuid, uuid.c_str(), std::min(uuid.size(), sizeof(r.uuid) - 1));
  r.cc_major = d.computeCapabilityMajor;
  r.cc_minor = d.computeCapabilityMinor;
  r.sm_count = d.numMultiprocessors;
  r.global_memory_bytes = d.globalMemorySize;
  // CUPTI reports globalMemoryBandwidth in KB/s.
  r.memory_bandwidth_bytes_per_s = d.globalMemoryBandwidth * 1000ull;
  r.l2_cache_bytes = d.l2CacheSize;
  r.core_clock_khz = d.coreClockRate;
  r.max_threads_per_block = d.maxThreadsPerBlock;
  r.max_shared_memory_per_block = d.maxSharedMemoryPerBlock;
  r.max_warps_per_sm = d.maxWarpsPerMultiprocessor;
  w_->AddDevice(r);
  ++counters_.devices;
}

void ActivityDecoder::DecodeOverhead(const cupti::Overhead& o) {
  OverheadRecord r{};
  r.start_ns = static_cast<int64_t>(o.start);
  r.end_ns = static_cast<int64_t>(o.end);
  r.tid = o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o.objectId.pt.threadId : 0;
  r.kind = w_->Intern(OverheadName(o.overheadKind));
  w_->AddOverhead(r);
  ++counters_.overheads;
}

void ActivityDecoder::DecodeUnifiedMemory(const cupti::UnifiedMemory& u) {
  // Plain values (no pointers into the traced process): decoded as is.
  UmRecord r{};
  r.kind = ToUmKind(u.counterKind);
  r.start_ns = static_cast<int64_t>(u.start);
  // CUPTI leaves `end` undefined for point events (CPU faults, thrashing,
  // remote maps); ranges with end < start are clamped the same way.
  const bool point = r.kind == UmCounterKind::kCpuPageFault ||
                     r.kind == UmCounterKind::kThrashing || r.kind == UmCounterKind::kRemoteMap;
  r.end_ns = point || u.end < u.start ? r.start_ns : static_cast<int64_t>(u.end);
  r.value = u.value;
  r.address = u.address;
  r.src_id = u.srcId;
  r.dst_id = u.dstId;
  r.flags = u.flags;
  w_->AddUm(r);
  Span(r.start_ns, r.end_ns);
  ++counters_.um;
}

void ActivityDecoder::Decode(const CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      DecodeKernel(*reinterpret_cast<const cupti::Kernel*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const cupti::Memcpy*>(rec);
      AddMemcpy(*m, m->deviceId, m->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const cupti::MemcpyPtoP*>(rec);
      AddMemcpy(*m, m->srcDeviceId, m->dstDeviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      DecodeMemset(*reinterpret_cast<const cupti::Memset*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const cupti::Api*>(rec);
      ApiRecord r{};
      r.domain = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiDomain::kDriver : ApiDomain::kRuntime;
      r.start_ns = static_cast<int64_t>(a->start);
      r.end_ns = static_cast<int64_t>(a->end);
      r.tid = a->threadId;
      r.correlation = a->correlationId;
      r.cbid = a->cbid;
      r.return_code = static_cast<int32_t>(a->returnValue);
      AddApi(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      DecodeSync(*reinterpret_cast<const cupti::Sync*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      DecodeMemory(*reinterpret_cast<const cupti::Memory*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      DecodeMemoryPool(*reinterpret_cast<const cupti::MemoryPool*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      DecodeDevice(*reinterpret_cast<const cupti::Device*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      DecodeOverhead(*reinterpret_cast<const cupti::Overhead*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: {
      DecodeUnifiedMemory(*reinterpret_cast<const cupti::UnifiedMemory*>(rec));
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT:
    case CUPTI_ACTIVITY_KIND_NAME:
    case CUPTI_ACTIVITY_KIND_MARKER:
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      ++counters_.other;
      break;
    default:
      ++counters_.unknown_kind;
      break;
  }
}

void ActivityDecoder::AddOom(const OomRecord& o) {
  SyncType unused;
  w_->AddOom(o, ApiName(o.domain, o.cbid, &unused));
  ++counters_.ooms;
}

size_t ActivityDecoder::DecodeBuffer(uint8_t* buffer, size_t valid_size, NextRecordFn next) {
  size_t n = 0;
  CUpti_Activity* rec = nullptr;
  if (!next) return 0;
  while (next(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
    Decode(rec);
    ++n;
  }
  return n;
}

}  // namespace stepscope
