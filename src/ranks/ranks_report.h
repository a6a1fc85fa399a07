// Tables and text of `stepscope ranks` (the HTML report can reuse the tables).
// Times in the tables are milliseconds; docs/ranks.md lists every column.
#pragma once

#include <string>

#include "common/table.h"
#include "ranks/ranks_analysis.h"

namespace stepscope {

// Step times side by side: one column per rank ("wide", for the terminal) or
// one row per (step, rank) with every per-step number ("long", for CSV/JSON).
Table StepsTable(const RanksAnalysis& a, bool wide);
// One row per rank: medians per step, overlap, waits, NVRx scores.
Table RanksTable(const RanksAnalysis& a);
// One row per (rank, section): median time and NVRx relative/individual scores.
Table SectionsTable(const RanksAnalysis& a);
// One row per matched NCCL collective: who arrived last, how long others waited.
Table CollectivesTable(const RanksAnalysis& a);
// One row per straggler.
Table VerdictTable(const RanksAnalysis& a);
// One row per score below the threshold.
Table ScoreFlagsTable(const RanksAnalysis& a);

// The lines above the tables: ranks, hosts, steps, missing ranks, notes.
std::string HeaderText(const RanksAnalysis& a);
// The verdict in sentences.
// `scores_where`: where the scores table is printed relative to the verdict
// ("above", "below"; empty: not printed).
std::string VerdictText(const RanksAnalysis& a, const std::string& scores_where);

}  // namespace stepscope
