// The tables of `stepscope memory`, built from a MemoryAnalysis. Each section
// is a Table (so every one has text, CSV and JSON forms); docs/memory.md lists
// the sections and their columns.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/memory/memory_analysis.h"
#include "common/table.h"
#include "store/trace_reader.h"

namespace stepscope::memory {

struct ReportOptions {
  size_t top = 10;  // rows per ranking (largest, live-at-peak groups, OOM live set)
};

struct MemorySection {
  std::string name;   // machine name: peaks, live_at_peak, largest, ...
  std::string title;  // text heading
  Table table;
};

struct MemoryReport {
  std::vector<std::string> header;  // text-only lines before the sections
  std::vector<MemorySection> sections;
};

MemoryReport BuildMemoryReport(const MemoryAnalysis& analysis, const TraceReader& reader,
                               const ReportOptions& options);

// Text: header, then each non-empty section under "== title". CSV: each
// section as "# name" followed by its CSV. JSON: one object, a key per section.
// `only` (when not empty) keeps the one section of that name.
std::string RenderMemoryReport(const MemoryReport& report, OutputFormat format,
                               const std::string& only = "");

// The --timeline table: ts_ns, t_s, place, series, bytes.
Table TimelineTable(const MemoryAnalysis& analysis, const std::vector<TimelinePoint>& points);

}  // namespace stepscope::memory
