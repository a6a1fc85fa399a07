// The Python stack of the thread making a CUDA call, read in-process from
// the API callback (docs/capture.md, "Host capture"): for blocking calls (synchronizations,
// synchronous copies and memsets, async copies of pageable memory), allocations and frees,
// and optionally one launch in N.
//
// The calling thread is inside our callback, so its Python frames cannot
// change under us; still every read goes through process_vm_readv on our own
// pid (capture/pystack), so a wrong layout or a stale pointer is a failed
// read, never a crash. No Python API is called but
// PyGILState_GetThisThreadState (a thread-local read): no GIL, no Python
// object allocated, no Python code run. Each code object's names are sent
// once (shm kPyCode) under an id of its own (its address and identity stamp:
// a freed and reused address gets a new id), then stacks as those ids and
// lines (kPyStack), tied to the call by its correlation id.
#pragma once

#include <cstdint>

#include "capture/shm_ring.h"

namespace stepscope {

// Which calls get a stack. kIfPageable: an async copy, when a host pointer
// of it is pageable memory (capture/pageable_copy.h: it blocks the thread).
enum class StackPolicy : uint8_t { kNone, kAlways, kLaunch, kIfPageable };
StackPolicy StackPolicyForName(const char* api_name);

// Reads the calling thread's Python stack and puts it into the ring for the
// API call `correlation`. False when there is no Python (the first call
// finds out and remembers), the thread runs no Python, or the ring is full.
bool EmitPythonStack(shm::Header* ring, uint32_t correlation, uint32_t tid);

}  // namespace stepscope
