// stepscope memory: where device (and host) memory goes.
#include <cstdio>

#include "analysis/memory/memory_analysis.h"
#include "analysis/memory/memory_report.h"
#include "analysis/model/trace_model.h"
#include "analysis/rules/oom.h"
#include "analysis/rules/rules.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/plan_flags.h"
#include "common/file_util.h"
#include "common/strings.h"

namespace stepscope {

namespace {

// The oom finding (docs/rules.md) ahead of the report when the process ran
// out of memory: the same text `analyze` leads with.
std::string OomLead(const std::string& path, const OomModel* model) {
  auto m = TraceModel::Load(path);
  if (!m.ok()) return "";
  auto steps = DetectSteps(**m, StepOptions{});
  StepSet none;
  std::string s;
  for (const Finding& f : OomFindings(**m, steps.ok() ? *steps : none, model)) {
    s += "== oom: " + f.title + "\n";
    s += "where: " + f.where + "\n";
    s += "what:  " + f.detail + "\n";
    s += "fix:   " + f.fix + "\n\n";
  }
  return s;
}

}  // namespace

int RunMemory(int argc, char** argv) {
  ArgParser p(
      "memory", "[options] TRACE",
      "Where memory goes: bytes in use over time per GPU and on the host, by how it was\n"
      "obtained (cudaMalloc, stream-ordered pool, pinned host, managed, host malloc/mmap);\n"
      "each peak and when it happened (step = the NVTX 'step N' range; innermost NVTX\n"
      "range); the allocations live at each peak grouped by NVTX range and API call;\n"
      "the largest allocations; allocations never freed; out-of-memory events with the\n"
      "live set at that moment. With a PyTorch memory file beside the trace\n"
      "(stepscope profile --pytorch-memory, or `import stepscope.torch`): the caching\n"
      "allocator's allocated vs reserved bytes and the live tensors at the peak with\n"
      "their Python source lines. Definitions: docs/memory.md.");
  p.Flag("--section", "NAME",
         "print one table: peaks, live_at_peak, largest, never_freed, threads, pools, pytorch, "
         "pytorch_live_at_peak, oom, oom_live, quality");
  p.Flag("--top", "N", "rows per ranking", "10");
  p.Flag("--torch-memory", "FILE",
         "the PyTorch memory file (default: TRACE.torch-memory.json or torch-memory-PID.json "
         "beside the trace; 'none' to ignore it)");
  p.Switch("--timeline",
           "print bytes in use over time instead (CSV: ts_ns,t_s,place,series,bytes)");
  p.Flag("--max-points", "N", "with --timeline: at most N points per series, peaks kept (0: all)",
         "0");
  p.TableOutput("write to FILE instead of stdout");
  p.Epilog(
      "examples:\n"
      "  stepscope memory run.sqlite\n"
      "  stepscope memory --section live_at_peak --format csv run.sqlite\n"
      "  stepscope memory --timeline --max-points 2000 -o mem.csv run.sqlite\n"
      "  stepscope profile --pytorch-memory -o run -- python train.py\n"
      "  stepscope memory run.sqlite   # finds the PyTorch memory file beside the trace");
  AddPlanFlags(&p, false);  // the run's model: the oom finding's fixes from the planner
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.positionals().size() != 1) {
    return ReportError("memory", InvalidInput("expected one TRACE; see 'stepscope memory --help'"));
  }
  OutputSpec output;
  if (Status st = p.ParseTableOutput(&output); !st.ok()) return ReportError("memory", st);
  const OutputFormat format = output.format;
  int64_t top = 0, max_points = 0;
  if (!ParseInt64(p.Get("--top"), &top) || top < 1) {
    return ReportError("memory", InvalidInput("--top must be a positive integer"));
  }
  if (!ParseInt64(p.Get("--max-points"), &max_points) || max_points < 0) {
    return ReportError("memory", InvalidInput("--max-points must be 0 or a positive integer"));
  }
  const std::string section = p.Get("--section");
  static const char* kSections[] = {"peaks",   "live_at_peak", "largest", "never_freed",
                                    "threads", "pools",        "pytorch", "pytorch_live_at_peak",
                                    "oom",     "oom_live",     "quality"};
  if (!section.empty()) {
    bool known = false;
    for (const char* s : kSections) known = known || section == s;
    if (!known) {
      return ReportError("memory", InvalidInput("unknown --section '" + section +
                                                "'; see 'stepscope memory --help'"));
    }
  }

  std::shared_ptr<OomModel> oom_model;
  if (p.Has("--model")) {
    oom_model = std::make_shared<OomModel>();
    Status st = ParsePlanFlags(p, &oom_model->model, &oom_model->options);
    if (!st.ok()) return ReportError("memory", st);
  }

  auto reader = TraceReader::Open(p.positionals()[0]);
  if (!reader.ok()) return ReportError("memory", reader.status());
  memory::MemoryOptions opt;
  opt.torch_memory_path = p.Get("--torch-memory");
  auto analysis = memory::AnalyzeMemory(**reader, opt);
  if (!analysis.ok()) return ReportError("memory", analysis.status());

  std::string out;
  if (p.Has("--timeline")) {
    auto points = memory::MemoryTimeline(*analysis, static_cast<size_t>(max_points));
    out = RenderTables(
        {{"memory_timeline", "Memory in use", memory::TimelineTable(*analysis, points), ""}},
        format == OutputFormat::kText ? OutputFormat::kCsv : format);
  } else {
    memory::ReportOptions ro;
    ro.top = static_cast<size_t>(top);
    out = memory::RenderMemoryReport(memory::BuildMemoryReport(*analysis, **reader, ro), format,
                                     section);
    if (format == OutputFormat::kText && section.empty() && !analysis->trace.ooms.empty()) {
      out = OomLead(p.positionals()[0], oom_model.get()) + out;
    }
  }
  return EmitText("memory", p, out);
}

}  // namespace stepscope
