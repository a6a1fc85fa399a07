// Stages of AnalyzeRanks, shared between its files (not a public API).
#pragma once

#include <vector>

#include "ranks/ranks_analysis.h"

namespace stepscope {

// Position of step number `step` in a.steps, or -1.
int StepPosition(const RanksAnalysis& a, int64_t step);

// Matches every NCCL collective across ranks (clock offsets from
// a->ranks[i].offset_ns) and fills a->collectives, a->waited, a->caused and
// the per-rank collective counts. Returns, per rank, the median difference
// between its collective end times and the median end time of each
// collective (the residual clock skew; 0 without evidence), and in
// `steps_with_collectives` the step positions that had a matched collective.
std::vector<int64_t> MatchCollectives(RanksAnalysis* a, std::vector<bool>* steps_with_collectives);

// Finds stragglers and their causes; needs MatchCollectives' results.
void FindStragglers(RanksAnalysis* a, const std::vector<bool>& steps_with_collectives);

}  // namespace stepscope
