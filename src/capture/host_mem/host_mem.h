// Host-memory tracing (`--trace host-mem`): the record and the per-thread
// buffers between the malloc/mmap interposer and the trace writer.
//
// Producers are the traced program's own threads, inside malloc/free/mmap, so
// Record() must be cheap and must not allocate: each thread owns a
// single-producer/single-consumer ring (fixed size, obtained with mmap, never
// with malloc), found through a thread-local pointer. Only calls at or above a
// size threshold are recorded (default 1 MiB; STEPSCOPE_HOST_MEM_THRESHOLD),
// so the rings see few records. The consumer (the tracer's writer thread)
// calls Drain() about once a second; a full ring drops records and counts
// them (Dropped()) rather than block the program. A ring whose thread exited is
// reused by the next new thread once drained.
//
// The C entry points at the bottom are what libstepscope_hostmem.so (the
// LD_PRELOAD interposer) exports, so that the injected tracer can find them
// with dlsym(RTLD_DEFAULT, ...) without linking against this library.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/records.h"

namespace stepscope::hostmem {

// The record is the trace format's (format/records.h), shared with the collector.
using HostAllocOp = stepscope::HostAllocOp;
using HostAllocKind = stepscope::HostAllocKind;
using HostAllocRecord = stepscope::HostAllocRecord;

inline constexpr uint64_t kDefaultThreshold = 1 << 20;
inline constexpr uint32_t kRingCapacity = 4096;  // records per thread between drains

// The threshold: STEPSCOPE_HOST_MEM_THRESHOLD (bytes) when set, else 1 MiB.
uint64_t Threshold();
void SetThresholdForTest(uint64_t bytes);

// Appends a record to the calling thread's ring (no allocation, no lock).
void Record(HostAllocOp op, HostAllocKind kind, uint64_t address, uint64_t bytes);

// Hands every record buffered since the last call to `sink`, oldest first
// within each thread, in chunks. One consumer at a time (serialized inside).
using DrainFn = void (*)(const HostAllocRecord* records, size_t count, void* context);
size_t Drain(DrainFn sink, void* context);

// Records dropped because a ring was full.
uint64_t Dropped();

}  // namespace stepscope::hostmem

extern "C" {
// Exported by libstepscope_hostmem.so; see Drain/Dropped/Threshold above.
size_t stepscope_hostmem_drain(stepscope::hostmem::DrainFn sink, void* context);
uint64_t stepscope_hostmem_dropped(void);
uint64_t stepscope_hostmem_threshold(void);
}
