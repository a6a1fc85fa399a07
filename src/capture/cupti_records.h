// The CUPTI record versions this build decodes, chosen in exactly one place.
// CUDA 13.0's CUPTI delivers these struct versions for the activity kinds the
// tracer enables; moving to a newer CUDA means changing only these aliases
// (and the static_asserts that pin the fields we read).
#pragma once

#include <cupti.h>

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

}  // namespace stepscope::cupti
