// API capture through CUPTI callbacks instead of API activity records.
//
// Measured on an H200 (small preset, docs/PERFORMANCE.md): CUPTI's API
// activity records for the chosen set cost ~10% of step time. A callback
// pair per call that stamps two timestamps and appends a 40-byte ApiRecord to
// a per-thread buffer is the same information for less. The correlation id
// CUPTI passes to the callback is the one its kernel/memcpy records carry.
//
// Per-thread buffers: lock-free single-producer/single-consumer chunk queues
// (the program thread produces, the writer thread consumes).
#pragma once

#include <cupti.h>

#include <vector>

#include "format/records.h"

namespace stepscope {

// Enables or disables the callbacks for the chosen API set.
void ToggleApiCallbacks(CUpti_SubscriberHandle subscriber, bool on);

// Handles one runtime/driver API callback (enter or exit).
void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData* info);

// Moves every thread's pending API records into `out`. Writer thread only.
void DrainApiRecords(std::vector<ApiRecord>* out);

// True when the function name belongs to the chosen API set.
bool IsChosenApi(CUpti_CallbackDomain domain, const char* name);

}  // namespace stepscope
