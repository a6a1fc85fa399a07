// Embeds files with the assembler's .incbin (no generated source, no size
// limit of string literals). The paths come from CMake as string-literal
// macros; OBJECT_DEPENDS rebuilds this file when one of them changes.
#include "report/embedded_assets.h"

#define STEPSCOPE_EMBED(sym, path)                                           \
  __asm__(                                                                   \
      ".section .rodata\n"                                                   \
      ".balign 16\n"                                                         \
      ".global " #sym "_begin\n.hidden " #sym "_begin\n" #sym                \
      "_begin:\n"                                                            \
      ".incbin \"" path                                                      \
      "\"\n"                                                                 \
      ".global " #sym "_end\n.hidden " #sym "_end\n" #sym                    \
      "_end:\n"                                                              \
      ".byte 0\n"                                                            \
      ".previous\n");                                                        \
  extern "C" __attribute__((visibility("hidden"))) const char sym##_begin[]; \
  extern "C" __attribute__((visibility("hidden"))) const char sym##_end[];

STEPSCOPE_EMBED(stepscope_report_js, STEPSCOPE_REPORT_JS)
STEPSCOPE_EMBED(stepscope_report_views_js, STEPSCOPE_REPORT_VIEWS_JS)
STEPSCOPE_EMBED(stepscope_report_css, STEPSCOPE_REPORT_CSS)
#ifdef STEPSCOPE_ECHARTS_JS
STEPSCOPE_EMBED(stepscope_echarts_js, STEPSCOPE_ECHARTS_JS)
#endif

namespace stepscope {

std::string_view EmbeddedChartLibrary() {
#ifdef STEPSCOPE_ECHARTS_JS
  return std::string_view(
      stepscope_echarts_js_begin,
      static_cast<size_t>(stepscope_echarts_js_end - stepscope_echarts_js_begin));
#else
  return {};
#endif
}

std::string_view EmbeddedReportScript() {
  return std::string_view(stepscope_report_js_begin,
                          static_cast<size_t>(stepscope_report_js_end - stepscope_report_js_begin));
}

std::string_view EmbeddedReportViews() {
  return std::string_view(
      stepscope_report_views_js_begin,
      static_cast<size_t>(stepscope_report_views_js_end - stepscope_report_views_js_begin));
}

std::string_view EmbeddedReportStyle() {
  return std::string_view(
      stepscope_report_css_begin,
      static_cast<size_t>(stepscope_report_css_end - stepscope_report_css_begin));
}

}  // namespace stepscope
