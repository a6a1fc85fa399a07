#include "format/records.h"

namespace stepscope {

const char* MemoryKindName(MemoryKind k) {
  switch (k) {
    case MemoryKind::kPageable:
      return "pageable";
    case MemoryKind::kPinned:
      return "pinned";
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kArray:
      return "array";
    case MemoryKind::kManaged:
      return "managed";
    case MemoryKind::kDeviceStatic:
      return "device_static";
    case MemoryKind::kManagedStatic:
      return "managed_static";
    case MemoryKind::kUnknown:
      break;
  }
  return "unknown";
}

const char* CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kHostToDevice:
      return "HtoD";
    case CopyKind::kDeviceToHost:
      return "DtoH";
    case CopyKind::kHostToArray:
      return "HtoA";
    case CopyKind::kArrayToHost:
      return "AtoH";
    case CopyKind::kArrayToArray:
      return "AtoA";
    case CopyKind::kArrayToDevice:
      return "AtoD";
    case CopyKind::kDeviceToArray:
      return "DtoA";
    case CopyKind::kDeviceToDevice:
      return "DtoD";
    case CopyKind::kHostToHost:
      return "HtoH";
    case CopyKind::kPeerToPeer:
      return "PtoP";
    case CopyKind::kUnknown:
      break;
  }
  return "unknown";
}

const char* SyncTypeName(SyncType t) {
  switch (t) {
    case SyncType::kEventSynchronize:
      return "event_synchronize";
    case SyncType::kStreamWaitEvent:
      return "stream_wait_event";
    case SyncType::kStreamSynchronize:
      return "stream_synchronize";
    case SyncType::kContextSynchronize:
      return "context_synchronize";
    case SyncType::kUnknown:
      break;
  }
  return "unknown";
}

const char* MemoryOpName(MemoryOp op) {
  switch (op) {
    case MemoryOp::kAlloc:
      return "alloc";
    case MemoryOp::kFree:
      return "free";
    case MemoryOp::kUnknown:
      break;
  }
  return "unknown";
}

const char* MemoryPoolOpName(MemoryPoolOp op) {
  switch (op) {
    case MemoryPoolOp::kCreated:
      return "created";
    case MemoryPoolOp::kDestroyed:
      return "destroyed";
    case MemoryPoolOp::kTrimmed:
      return "trimmed";
    case MemoryPoolOp::kUnknown:
      break;
  }
  return "unknown";
}

const char* NvtxKindName(NvtxKind k) {
  switch (k) {
    case NvtxKind::kPushPop:
      return "push_pop";
    case NvtxKind::kStartEnd:
      return "start_end";
    case NvtxKind::kMark:
      return "mark";
  }
  return "unknown";
}

const char* ApiDomainName(ApiDomain d) { return d == ApiDomain::kDriver ? "driver" : "runtime"; }

const char* UmCounterKindName(UmCounterKind k) {
  switch (k) {
    case UmCounterKind::kBytesHtoD:
      return "bytes_htod";
    case UmCounterKind::kBytesDtoH:
      return "bytes_dtoh";
    case UmCounterKind::kCpuPageFault:
      return "cpu_page_fault";
    case UmCounterKind::kGpuPageFault:
      return "gpu_page_fault";
    case UmCounterKind::kThrashing:
      return "thrashing";
    case UmCounterKind::kThrottling:
      return "throttling";
    case UmCounterKind::kRemoteMap:
      return "remote_map";
    case UmCounterKind::kBytesDtoD:
      return "bytes_dtod";
    case UmCounterKind::kDriverHtoD:
      return "driver_htod";
    case UmCounterKind::kDriverDtoH:
      return "driver_dtoh";
    case UmCounterKind::kDriverCpuFaults:
      return "driver_cpu_faults";
    case UmCounterKind::kDriverGpuFaults:
      return "driver_gpu_faults";
    case UmCounterKind::kUnknown:
      break;
  }
  return "unknown";
}

const char* ThreadStateName(ThreadState s) {
  switch (s) {
    case ThreadState::kRunning:
      return "running";
    case ThreadState::kBlockedCuda:
      return "blocked_cuda";
    case ThreadState::kBlockedGil:
      return "blocked_gil";
    case ThreadState::kBlockedLock:
      return "blocked_lock";
    case ThreadState::kBlockedIo:
      return "blocked_io";
    case ThreadState::kSleep:
      return "sleep";
    case ThreadState::kBlockedOther:
      return "blocked_other";
    case ThreadState::kUnknown:
      break;
  }
  return "unknown";
}

const char* FrameKindName(FrameKind k) {
  switch (k) {
    case FrameKind::kPython:
      return "python";
    case FrameKind::kNative:
      return "native";
    case FrameKind::kCudaApi:
      return "cuda_api";
    case FrameKind::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace stepscope
