#include <cstdio>

#include "analysis/model/trace_model.h"
#include "cli/analysis_flags.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/mfu_flags.h"
#include "common/strings.h"
#include "report/html_report.h"
#include "report/report_sources.h"

namespace stepscope {

int RunReport(int argc, char** argv) {
  ArgParser p(
      "report", "TRACE.sqlite -o report.html | BEFORE.sqlite AFTER.sqlite -o report.html",
      "Write one self-contained HTML file about the trace: the findings of the expert rules with "
      "their fixes (stepscope analyze), step time split into compute / communication / memcpy / "
      "idle (stepscope steps), where GPU time goes, the top kernels and GPU utilization "
      "(stepscope stats), and device memory in use over time with its peak and what was live at "
      "the peak (stepscope memory): the same numbers as those commands. When `stepscope "
      "roofline` has stored its rows in the trace, a roofline chart and table of them too. "
      "Given BEFORE and AFTER traces, AFTER's report with a before/after section on top (stepscope "
      "diff's tables and both traces' findings). "
      "The file has the charting library inside: it opens from disk (file://), offline, and makes "
      "no network request.");
  p.FileOutput("FILE", "the HTML file to write (required)");
  p.Flag("--top", "N", "how many kernels the top-kernels chart shows", "15");
  AddStepFlags(&p);
  AddPricingFlags(&p);
  AddPlanFlags(&p, false);  // --model ...: analyze's MFU line on the page (docs/flops.md)
  p.Epilog(
      "examples:\n"
      "  stepscope report trace.sqlite -o report.html && xdg-open report.html\n"
      "  stepscope report --top 25 imported.sqlite -o report.html\n"
      "  stepscope report before.sqlite after.sqlite -o compare.html   # AFTER's report with a "
      "before/after section: stepscope diff's tables\n"
      "  stepscope roofline --from trace.sqlite -- python train.py   # GPU: stores roofline rows\n"
      "  stepscope report -f trace.sqlite -o report.html             # replaced, now with a "
      "Roofline section\n"
      "  stepscope report --model config.json --micro-batch 8 --seq-len 1024 run.sqlite -o "
      "r.html  # + MFU\n"
      "\nNames from the trace (kernels, NVTX ranges) are shown as text, never run as HTML.\n"
      "See docs/report.md for what each chart shows.\n");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.positionals().size() != 1 && p.positionals().size() != 2) {
    return ReportError("report", InvalidInput("expected TRACE.sqlite or BEFORE.sqlite "
                                              "AFTER.sqlite; see 'stepscope report --help'"));
  }
  if (!p.Has("--output"))
    return ReportError("report", InvalidInput("missing -o FILE; see 'stepscope report --help'"));
  ReportOptions options;
  int64_t top = 0;
  if (!ParseInt64(p.Get("--top"), &top) || top < 1 || top > 1000) {
    return ReportError(
        "report", InvalidInput("--top " + p.Get("--top") + ": expected a number from 1 to 1000"));
  }
  options.top_kernels = static_cast<int>(top);
  options.step_regex = p.Get("--step-range");
  // analyze's options for each trace: the same pricing flags and ceilings
  // (cli/analysis_flags.h), so the report's findings are analyze's.
  AnalyzeOptions pricing;
  if (Status st = ParsePricingFlags(p, &pricing); !st.ok()) return ReportError("report", st);
  options.analysis_options = [&p, pricing](const TraceModel& m, AnalyzeOptions* o) {
    *o = pricing;
    ApplyCeilings(p, m, o);
  };
  // analyze's MFU line: the model's FLOPs (--model), else stored roofline counters.
  MfuOptions mfu_opt;
  if (p.Has("--model")) {
    if (Status st = ParseMfuModel(p, &mfu_opt); !st.ok()) return ReportError("report", st);
  }
  options.mfu_line = [&p, mfu_opt](const TraceModel& m, const StepSet& steps, int device,
                                   double* pct) {
    MfuOptions mo = mfu_opt;
    mo.device = device;
    ApplyMfuTrace(p, m, &mo);
    if (!mo.has_model && mo.measured.empty()) return std::string();
    const MfuReport r = ComputeMfu(m, steps, mo);
    if (!r.has_mfu()) return std::string();
    *pct = r.mfu_pct;
    return MfuLine(r);
  };
  if (!ReportHasChartLibrary()) {
    return ReportError("report",
                       Unavailable("this stepscope was built without the charting library "
                                   "(node_modules/echarts): run scripts/bootstrap.sh and rebuild"));
  }
  // Two traces: the page is AFTER's, with a before/after section on top.
  const std::string& trace = p.positionals().back();
  auto reader = TraceReader::Open(trace);
  if (!reader.ok()) return ReportError("report", reader.status());
  auto model = LoadTrace(trace);
  if (!model.ok()) return ReportError("report", model.status());
  auto data = CollectReportData(**reader, **model, options);
  if (!data.ok()) return ReportError("report", data.status().WithContext(trace));
  if (p.positionals().size() == 2) {
    const std::string& before = p.positionals()[0];
    auto before_reader = TraceReader::Open(before);
    if (!before_reader.ok()) return ReportError("report", before_reader.status());
    auto before_model = LoadTrace(before);
    if (!before_model.ok()) return ReportError("report", before_model.status());
    Status st = CollectReportCompare(**before_reader, **before_model, **model, options, &*data);
    if (!st.ok()) return ReportError("report", st.WithContext(before));
  }
  std::string out = p.Get("--output");
  Status st = WriteHtmlReport(*data, out);
  if (!st.ok()) return ReportError("report", st);
  if (!CliQuiet()) {
    std::fprintf(
        stderr,
        "stepscope report: wrote %s (%zu steps, %zu kernels in the top list, %zu findings)\n",
        out.c_str(), data->steps.size(), data->top_kernels.size(), data->findings.size());
  }
  return 0;
}

}  // namespace stepscope
