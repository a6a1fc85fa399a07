// torch.profiler (with_stack=True) Python stacks -> the host model (schema 1.5,
// docs/host.md). Called by the kineto importer once the events are written.
#pragma once

#include "common/status.h"
#include "format/records.h"
#include "importers/import_stats.h"

namespace stepscope {

class TraceWriter;

// From the python_function ranges already written to the nvtx table (domain
// `python_domain`): nests them by time per thread (a range inside another
// is its callee), and gives each CUDA API call of the thread the stack of
// the ranges open at its start (api_callsite). A range named
// "path/file.py(152): function" is a Python frame (file, line, function); any
// other name ("<built-in method item of Tensor object at 0x...>") a native
// one. Counts: kineto_api_with_python_stack.
Status ImportKinetoPythonStacks(TraceWriter* w, StringId python_domain, ImportStats* stats);

}  // namespace stepscope
