// API capture through CUPTI callbacks instead of API activity records.
//
// Measured on an H200 (small preset, docs/PERFORMANCE.md): CUPTI's API
// activity records for the chosen set cost ~10% of step time. A callback
// pair per call that stamps two timestamps and appends a 40-byte ApiRecord to
// the shared ring (capture/shm_ring.h: one CAS and a copy) is the same
// information for less. The correlation id CUPTI passes to the callback is the
// one its kernel/memcpy records carry.
#pragma once

#include <cupti.h>

#include "format/records.h"

namespace stepscope {

// Enables or disables the callbacks for the chosen API set (without the
// driver domain: diagnostics, STEPSCOPE_DIAG_OFF=driver).
// runtime_launches false: kernel and graph launches are taken from the driver
// domain only (the runtime's cudaLaunchKernel calls cuLaunchKernel).
void ToggleApiCallbacks(CUpti_SubscriberHandle subscriber, bool on, bool driver = true,
                        bool runtime_launches = true);

// Handles one runtime/driver API callback (enter or exit).
void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData* info);

// True for the managed-allocation functions (cudaMallocManaged,
// cuMemAllocManaged): their callbacks stay on outside recording windows, and
// the first one turns the unified-memory counters on (cupti_setup.cc).
bool IsManagedAllocation(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
// Defined in cupti_setup.cc: the program made a managed allocation (only the
// first one acts; cheap after it).
void OnFirstManagedAllocation();

// True when the function name belongs to the chosen API set.
bool IsChosenApi(CUpti_CallbackDomain domain, const char* name);

}  // namespace stepscope
