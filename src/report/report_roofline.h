// The report's roofline section, read from the trace's stored `roofline`
// table and meta.roofline_ceilings (both written by `stepscope roofline`; see
// docs/roofline.md). The include rules keep the report from depending on the
// roofline stage (tools/check_includes.py), so the section shows the stored
// rows as they are (intensity, achieved FLOP/s, bound and % of bound were
// computed by roofline_model.cc when they were stored) and derives only the
// chart's geometry from the stored ceilings, with the rules of the roofline
// stage's SVG chart (roofline_svg.cc: ComputeAxes and its roof segments).
// report_test.cc checks both against the roofline library.
#pragma once

#include "common/status.h"
#include "report/report_data.h"
#include "store/trace_reader.h"

namespace stepscope {

// Fills d->roofline and sets d->has_roofline when the trace has a roofline
// table with rows; otherwise leaves both untouched (no table, an empty one).
Status CollectRoofline(const TraceReader& reader, ReportData* d);

// The chart's geometry from the kernels and the ceilings (key -> B/s or
// FLOP/s): which compute roofs are drawn (those of the precisions the kernels
// used, with a stored ceiling), the DRAM roof, ridge points and log axes.
// Fills r->roofs, r->ridges, the axes, and a note per precision without a
// ceiling. Exposed for tests.
void RooflineGeometry(const std::vector<std::pair<std::string, double>>& ceilings,
                      const std::vector<std::string>& precisions, ReportRoofline* r);

}  // namespace stepscope
