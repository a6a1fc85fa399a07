// Summarize one trace into a RankSummary (see rank_summary.h).
//
// Self-contained on purpose: it uses only common/, format/ and store/, so the
// injected tracer can call WriteSummary() when the traced process exits
// without pulling in the analysis library.
//
// What is computed (docs/ranks.md gives each definition):
//  * Steps: the one step definition `steps` uses: the step ranges of
//    common/step_names.h ("step N", "ProfilerStep#N", the "iteration N"
//    ranges of `profile`), else the repeating kernel sequence
//    (common/kernel_sequence.h); with neither, the whole trace is one step.
//    A kernel belongs to the step whose host range contains the start of the
//    API call that launched it (found through the correlation id), or, for
//    kernel-sequence steps (windows on the GPU timeline) and work without
//    such a call, its own start.
//  * The main thread's CPU time and run-queue time per step and its CPU time
//    per Python function, from the host samples.
//  * Per kernel name and per NVTX section: total, count and median per step.
//  * Per step: host and GPU span, compute / communication busy time (unions
//    of intervals per device), their overlap (HTA's definition), and the host
//    launch lateness on the critical stream (the stream with the most
//    non-NCCL kernel time): for consecutive operations on it, the part of the
//    GPU gap that passed before the host even called the launch API,
//    max(0, min(api_start, op_start) - previous_end).
//  * Every NCCL collective kernel (name starting ncclDevKernel_ / ncclKernel_).
#pragma once

#include <string>

#include "common/status.h"
#include "ranks/rank_summary.h"
#include "store/trace_reader.h"

namespace stepscope {

StatusOr<RankSummary> BuildSummary(const TraceReader& trace);

// Builds the summary of `trace` and writes it atomically to `path` as JSON.
Status WriteSummary(const TraceReader& trace, const std::string& path);

}  // namespace stepscope
