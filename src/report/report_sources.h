// CollectReportData: fills every section of the HTML report from a trace.
// Each section comes from one function below; the ones marked "interim" are
// stand-ins until the analysis library provides the same result (see
// interim_analysis.h), and switch here.
#pragma once

#include "common/status.h"
#include "report/report_data.h"
#include "store/trace_reader.h"

namespace stepscope {

struct ReportOptions {
  int top_kernels = 15;
  int max_series_points = 2000;  // per device and chart; memory keeps each bucket's peak
};

StatusOr<ReportData> CollectReportData(const TraceReader& reader, const ReportOptions& options);

}  // namespace stepscope
