// The launcher's end-of-run summary: for each trace the collector kept, its
// size, pid and state (not finalized, the process died), kernel count, GPU
// time, NVTX ranges, dropped records by kind, unified-memory traffic and the
// top kernels by GPU time; then the next command to run. `stepscope profile`
// prints it to stderr.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "collector/trace_collector.h"

namespace stepscope {

// One trace's lines (an unreadable trace: one line saying why).
void PrintTraceSummary(const std::string& path, FILE* out);
// The whole run: the traces kept, processes that recorded nothing, the next step.
void PrintRunSummary(const std::vector<CollectedTrace>& results, FILE* out);

}  // namespace stepscope
