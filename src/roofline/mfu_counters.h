// The kernels a `stepscope roofline` run measured, as MFU's per-class table
// reads them (analysis/mfu.h MeasuredKernel): the trace's stored roofline
// rows evaluated against the ceilings (the current ceilings file, else the
// ones stored with the rows), as `roofline --from TRACE` shows them.
#pragma once

#include <string>
#include <vector>

#include "analysis/mfu.h"

namespace stepscope {

// Empty when the trace has no roofline rows (or no roofline table: a trace
// of an older schema, or not a stepscope trace); the rows otherwise.
std::vector<MeasuredKernel> MeasuredKernelsOf(const std::string& trace_path,
                                              const std::string& ceilings_path);

}  // namespace stepscope
