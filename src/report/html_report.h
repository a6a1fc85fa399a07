// The self-contained HTML report: one file, no network request, opens from
// file://. Layout and charts live in assets/report.{css,js}; the charting
// library (Apache ECharts, from npm) and those assets are compiled into the
// binary (embedded_assets.cc), so an installed stepscope needs no data files.
//
// Untrusted strings (kernel and NVTX names, paths, command lines) only ever
// reach the page as JSON inside <script type="application/json"> with <, >
// and & written as \u003c \u003e \u0026, and the page's script puts them into
// the DOM with textContent. A Content-Security-Policy allows only the two
// scripts carrying this report's random nonce and no network access at all.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/table.h"
#include "report/report_data.h"

namespace stepscope {

// The data block: the JSON the page's script reads (HTML-safe, see above).
std::string ReportDataJson(const ReportData& data);

// The whole page. Fails when the binary was built without the charting library.
StatusOr<std::string> RenderHtmlReport(const ReportData& data);

// Renders and writes atomically to `path`.
Status WriteHtmlReport(const ReportData& data, const std::string& path);

// Whether the charting library was embedded at build time.
bool ReportHasChartLibrary();

// The host section's thread table (static HTML): `stats -r thread_states` as
// one row per thread, busiest first, times with their unit, the first 12
// shown and the rest collapsed, the profiler's own threads hidden behind a
// count (IsProfilerThreadName).
std::string HostThreadsHtml(const Table& thread_states);

// A thread of the profiler itself: stepscope's tracer ("stepscope-*"),
// CUPTI's workers, Nsight Systems' ("[NSys]", "#1TaskRunner", ...), Kineto's.
bool IsProfilerThreadName(std::string_view name);

}  // namespace stepscope
