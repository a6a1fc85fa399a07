#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "ranks/summarize.h"

namespace stepscope {

int RunSummarize(int argc, char** argv) {
  ArgParser p(
      "summarize", "[options] TRACE...",
      "Write the rank summary of each trace: a small JSON file with the rank, host and clock "
      "offset, "
      "per-step times, per-kernel and per-NVTX-section totals and medians per step, every NCCL "
      "collective, host launch lateness and communication/computation overlap. 'stepscope ranks' "
      "compares the summaries of all ranks of a job; docs/ranks.md describes the file.");
  p.Flag("--output", "PATH", "where to write the summary (one TRACE only; '-' prints it)", "",
         "-o");
  p.Switch("--force-overwrite", "replace existing summary files", "-f");
  p.Flag("--output-dir", "DIR", "write every summary into DIR instead of beside its trace");
  p.Epilog(
      "examples:\n"
      "  stepscope summarize run_*.sqlite\n"
      "  stepscope summarize run_0.sqlite -o -        # print it\n"
      "  stepscope summarize -f run_*.sqlite          # replace earlier summaries\n"
      "  srun --ntasks-per-node=1 stepscope summarize /scratch/job/run_$SLURM_NODEID_*.sqlite   # "
      "per node\n"
      "  stepscope ranks run_*.summary.json\n"
      "\n"
      "Each summary goes beside its trace: run_0.sqlite -> run_0.summary.json. One line per file "
      "written, on stderr.");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  const auto& traces = p.positionals();
  if (traces.empty())
    return ReportError("summarize",
                       InvalidInput("no TRACE given; see 'stepscope summarize --help'"));
  const std::string output = p.Get("--output");
  if (!output.empty() && traces.size() > 1) {
    return ReportError(
        "summarize", InvalidInput("--output takes one TRACE, got " + std::to_string(traces.size()) +
                                  "; use --output-dir for several"));
  }
  const std::string dir = p.Get("--output-dir");
  for (const std::string& trace : traces) {
    auto reader = TraceReader::Open(trace);
    if (!reader.ok()) return ReportError("summarize", reader.status());
    auto summary = BuildSummary(**reader);
    if (!summary.ok()) return ReportError("summarize", summary.status().WithContext(trace));
    const std::string json = SummaryToJson(*summary);
    if (output == "-") {
      std::fputs(json.c_str(), stdout);
      continue;
    }
    std::string path = output;
    if (path.empty()) {
      path = DefaultSummaryPath(trace);
      if (!dir.empty()) {
        size_t slash = path.rfind('/');
        path = dir + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
      }
    }
    Status st = CheckOverwrite(path, p.Has("--force-overwrite"));
    if (st.ok()) st = WriteFileAtomic(path, json);
    if (!st.ok()) return ReportError("summarize", st);
    CliNote("summarize", "wrote " + path + ": rank " + std::to_string(summary->rank) + ", " +
                             std::to_string(summary->steps.size()) + " steps, " +
                             FormatCount(static_cast<int64_t>(summary->collectives.size())) +
                             " NCCL collectives");
  }
  return 0;
}

}  // namespace stepscope
