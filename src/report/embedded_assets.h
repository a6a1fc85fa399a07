// Files compiled into the binary at build time (see CMakeLists.txt): the
// charting library's minified JS from node_modules and the report's own
// script and stylesheet. Each view stays valid for the life of the program.
#pragma once

#include <string_view>

namespace stepscope {

std::string_view EmbeddedChartLibrary();  // empty when built without node_modules/echarts
std::string_view EmbeddedReportScript();
std::string_view EmbeddedReportViews();  // assets/report_views.js: tables, timeline, compare
std::string_view EmbeddedReportStyle();

}  // namespace stepscope
