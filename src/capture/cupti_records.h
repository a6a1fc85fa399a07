// The CUPTI activity record versions this build decodes, chosen in exactly
// one place. Everything else names records through these aliases
// (cupti::Kernel, never CUpti_ActivityKernel10): the decoder
// (collector/cupti_decoder.cc), the tracer's string copying (session.cc) and the tests
// that build synthetic buffers.
//
// CUPTI writes each kind in the newest struct version of the library that
// runs in the program, and a new CUDA major may bring new versions with
// fields at other offsets. So:
//   - the build accepts only the CUDA major these versions were checked
//     against (CUDA 13.x; the #error below says what to do for another);
//   - at run time the tracer refuses a loaded CUPTI of another major
//     (RecordLayoutMatches, checked in cupti_setup.cc) and the program runs
//     untraced, instead of decoding garbage;
//   - the static_asserts pin the size and the offset of every field the
//     decoder reads, as CUDA 13.0's headers lay them out (the layout the GPU
//     runs were checked with). Moving to new versions means changing the
//     aliases and these numbers together, after checking the new layout.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#if !defined(CUDA_VERSION) || !defined(CUPTI_API_VERSION)
#error "cupti_records.h: cupti.h did not define CUDA_VERSION and CUPTI_API_VERSION"
#elif CUDA_VERSION < 13000
#error \
    "stepscope decodes CUDA 13's CUPTI records (CUpti_ActivityKernel10, ...); this CUDA is older: build against CUDA 13.x (STEPSCOPE_CUDA_ROOT) or add that version's record structs here"
#elif CUDA_VERSION >= 14000
#error \
    "stepscope's CUPTI record versions were checked against CUDA 13.x; for this newer CUDA, check which struct versions its CUPTI writes (cupti_activity.h), update the aliases and static_asserts below, then widen this guard"
#endif

namespace stepscope::cupti {

using Kernel = CUpti_ActivityKernel10;                      // CONCURRENT_KERNEL, KERNEL
using Memcpy = CUpti_ActivityMemcpy6;                       // MEMCPY
using MemcpyPtoP = CUpti_ActivityMemcpyPtoP4;               // MEMCPY2 (peer-to-peer)
using Memset = CUpti_ActivityMemset4;                       // MEMSET
using Api = CUpti_ActivityAPI;                              // RUNTIME, DRIVER
using Sync = CUpti_ActivitySynchronization2;                // SYNCHRONIZATION
using Memory = CUpti_ActivityMemory4;                       // MEMORY2
using MemoryPool = CUpti_ActivityMemoryPool3;               // MEMORY_POOL
using Device = CUpti_ActivityDevice5;                       // DEVICE
using Overhead = CUpti_ActivityOverhead3;                   // OVERHEAD
using Name = CUpti_ActivityName;                            // NAME
using UnifiedMemory = CUpti_ActivityUnifiedMemoryCounter3;  // UNIFIED_MEMORY_COUNTER

// The CUDA major whose CUPTI writes the versions above.
inline constexpr uint32_t kCudaMajor = 13;

// True when a loaded CUPTI (cuptiGetVersion) writes the record versions
// above. From CUDA 13 on, CUPTI's API version reads xxyyzz with xx the CUDA
// major (130000 = 13.0, 130001 = 13.0 Update 1); before, it was a small
// counter (28 = 12.9 Update 1), which is never a match.
constexpr bool RecordLayoutMatches(uint32_t cupti_api_version) {
  return cupti_api_version / 10000 == kCudaMajor;
}
static_assert(RecordLayoutMatches(CUPTI_API_VERSION), "CUPTI_API_VERSION is not CUDA 13's");

// Sizes and field offsets the decoder relies on (CUDA 13.0 headers).
#define STEPSCOPE_CUPTI_FIELD_AT(T, field, offset) \
  static_assert(offsetof(T, field) == (offset), #T "::" #field " moved: see the top of this file")
// Kernel
static_assert(sizeof(Kernel) == 216);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, start, 16);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, end, 24);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, deviceId, 40);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, contextId, 44);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, streamId, 48);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, correlationId, 92);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, name, 104);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, gridX, 52);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, gridY, 56);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, gridZ, 60);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, blockX, 64);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, blockY, 68);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, blockZ, 72);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, staticSharedMemory, 76);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, dynamicSharedMemory, 80);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, registersPerThread, 6);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, graphId, 156);
STEPSCOPE_CUPTI_FIELD_AT(Kernel, graphNodeId, 144);

// Memcpy
static_assert(sizeof(Memcpy) == 96);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, copyKind, 4);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, srcKind, 5);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, dstKind, 6);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, flags, 7);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, bytes, 8);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, start, 16);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, end, 24);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, deviceId, 32);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, contextId, 36);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, streamId, 40);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, correlationId, 44);
STEPSCOPE_CUPTI_FIELD_AT(Memcpy, graphId, 72);

// MemcpyPtoP
static_assert(sizeof(MemcpyPtoP) == 96);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, copyKind, 4);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, srcKind, 5);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, dstKind, 6);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, flags, 7);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, bytes, 8);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, start, 16);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, end, 24);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, srcDeviceId, 44);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, dstDeviceId, 52);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, contextId, 36);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, streamId, 40);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, correlationId, 60);
STEPSCOPE_CUPTI_FIELD_AT(MemcpyPtoP, graphId, 80);

// Memset
static_assert(sizeof(Memset) == 88);
STEPSCOPE_CUPTI_FIELD_AT(Memset, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Memset, value, 4);
STEPSCOPE_CUPTI_FIELD_AT(Memset, bytes, 8);
STEPSCOPE_CUPTI_FIELD_AT(Memset, start, 16);
STEPSCOPE_CUPTI_FIELD_AT(Memset, end, 24);
STEPSCOPE_CUPTI_FIELD_AT(Memset, deviceId, 32);
STEPSCOPE_CUPTI_FIELD_AT(Memset, contextId, 36);
STEPSCOPE_CUPTI_FIELD_AT(Memset, streamId, 40);
STEPSCOPE_CUPTI_FIELD_AT(Memset, correlationId, 44);
STEPSCOPE_CUPTI_FIELD_AT(Memset, flags, 48);
STEPSCOPE_CUPTI_FIELD_AT(Memset, memoryKind, 50);
STEPSCOPE_CUPTI_FIELD_AT(Memset, graphId, 72);

// Api
static_assert(sizeof(Api) == 40);
STEPSCOPE_CUPTI_FIELD_AT(Api, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Api, cbid, 4);
STEPSCOPE_CUPTI_FIELD_AT(Api, start, 8);
STEPSCOPE_CUPTI_FIELD_AT(Api, end, 16);
STEPSCOPE_CUPTI_FIELD_AT(Api, processId, 24);
STEPSCOPE_CUPTI_FIELD_AT(Api, threadId, 28);
STEPSCOPE_CUPTI_FIELD_AT(Api, correlationId, 32);
STEPSCOPE_CUPTI_FIELD_AT(Api, returnValue, 36);

// Sync
static_assert(sizeof(Sync) == 56);
STEPSCOPE_CUPTI_FIELD_AT(Sync, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Sync, type, 4);
STEPSCOPE_CUPTI_FIELD_AT(Sync, start, 8);
STEPSCOPE_CUPTI_FIELD_AT(Sync, end, 16);
STEPSCOPE_CUPTI_FIELD_AT(Sync, correlationId, 24);
STEPSCOPE_CUPTI_FIELD_AT(Sync, contextId, 28);
STEPSCOPE_CUPTI_FIELD_AT(Sync, streamId, 32);
STEPSCOPE_CUPTI_FIELD_AT(Sync, cudaEventId, 36);

// Memory
static_assert(sizeof(Memory) == 128);
STEPSCOPE_CUPTI_FIELD_AT(Memory, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Memory, memoryOperationType, 4);
STEPSCOPE_CUPTI_FIELD_AT(Memory, memoryKind, 8);
STEPSCOPE_CUPTI_FIELD_AT(Memory, correlationId, 12);
STEPSCOPE_CUPTI_FIELD_AT(Memory, address, 16);
STEPSCOPE_CUPTI_FIELD_AT(Memory, bytes, 24);
STEPSCOPE_CUPTI_FIELD_AT(Memory, timestamp, 32);
STEPSCOPE_CUPTI_FIELD_AT(Memory, deviceId, 52);
STEPSCOPE_CUPTI_FIELD_AT(Memory, contextId, 56);
STEPSCOPE_CUPTI_FIELD_AT(Memory, streamId, 60);
STEPSCOPE_CUPTI_FIELD_AT(Memory, isAsync, 72);
STEPSCOPE_CUPTI_FIELD_AT(Memory, memoryPoolConfig, 80);

// MemoryPool
static_assert(sizeof(MemoryPool) == 80);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, memoryPoolOperationType, 4);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, address, 32);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, size, 40);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, utilizedSize, 64);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, releaseThreshold, 48);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, timestamp, 56);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, deviceId, 20);
STEPSCOPE_CUPTI_FIELD_AT(MemoryPool, isManagedPool, 72);

// Device
static_assert(sizeof(Device) == 184);
STEPSCOPE_CUPTI_FIELD_AT(Device, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Device, globalMemoryBandwidth, 8);
STEPSCOPE_CUPTI_FIELD_AT(Device, globalMemorySize, 16);
STEPSCOPE_CUPTI_FIELD_AT(Device, l2CacheSize, 28);
STEPSCOPE_CUPTI_FIELD_AT(Device, coreClockRate, 36);
STEPSCOPE_CUPTI_FIELD_AT(Device, maxThreadsPerBlock, 76);
STEPSCOPE_CUPTI_FIELD_AT(Device, maxSharedMemoryPerBlock, 72);
STEPSCOPE_CUPTI_FIELD_AT(Device, maxWarpsPerMultiprocessor, 52);
STEPSCOPE_CUPTI_FIELD_AT(Device, numMultiprocessors, 44);
STEPSCOPE_CUPTI_FIELD_AT(Device, computeCapabilityMajor, 104);
STEPSCOPE_CUPTI_FIELD_AT(Device, computeCapabilityMinor, 108);
STEPSCOPE_CUPTI_FIELD_AT(Device, id, 112);
STEPSCOPE_CUPTI_FIELD_AT(Device, name, 136);
STEPSCOPE_CUPTI_FIELD_AT(Device, uuid, 120);

// Overhead
static_assert(sizeof(Overhead) == 56);
STEPSCOPE_CUPTI_FIELD_AT(Overhead, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Overhead, overheadKind, 4);
STEPSCOPE_CUPTI_FIELD_AT(Overhead, objectKind, 8);
STEPSCOPE_CUPTI_FIELD_AT(Overhead, objectId, 12);
STEPSCOPE_CUPTI_FIELD_AT(Overhead, start, 24);
STEPSCOPE_CUPTI_FIELD_AT(Overhead, end, 32);

// UnifiedMemory
static_assert(sizeof(UnifiedMemory) == 104);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, counterKind, 4);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, value, 8);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, start, 16);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, end, 24);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, address, 32);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, srcId, 40);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, dstId, 44);
STEPSCOPE_CUPTI_FIELD_AT(UnifiedMemory, flags, 56);

// Name
static_assert(sizeof(Name) == 32);
STEPSCOPE_CUPTI_FIELD_AT(Name, kind, 0);
STEPSCOPE_CUPTI_FIELD_AT(Name, objectKind, 4);
STEPSCOPE_CUPTI_FIELD_AT(Name, objectId, 8);
STEPSCOPE_CUPTI_FIELD_AT(Name, name, 24);
#undef STEPSCOPE_CUPTI_FIELD_AT

}  // namespace stepscope::cupti
