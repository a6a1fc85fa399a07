// stepscope: the command-line front-end. A thin dispatcher over the core
// library: each subcommand lives in its own cmd_*.cc.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "cli/commands.h"
#include "common/version.h"
#include "store/trace_reader.h"

namespace stepscope {
namespace {

const CommandInfo kCommands[] = {
    {"profile", "run a command under the tracer: one SQLite trace per process", RunProfile},
    {"schema", "print the trace schema (SQL or Markdown)", RunSchema},
    {"stats", "summary tables (recipes): kernels, API, memory, NVTX, utilization", RunStats},
    {"steps", "training steps: duration, GPU busy, breakdown, top kernels", RunSteps},
    {"analyze", "expert rules: what slows the steps down and the fix, ranked by cost", RunAnalyze},
    {"diff", "compare two traces: step-time speedup, kernel and NVTX changes", RunDiff},
    {"whatif", "replay the steps with a fix applied: what it saves", RunWhatif},
    {"mfu", "model FLOPs utilization per step; FLOP/s per kernel class", RunMfu},
    {"import", "convert a torch.profiler JSON or nsys SQLite trace into a stepscope trace",
     RunImport},
    {"memory", "device/host memory over time, peaks, live set, leaks, OOMs", RunMemory},
    {"plan", "memory of a training step before it runs: what fits, what to change", RunPlan},
    {"bench", "measure this GPU's ceilings (bandwidths, FLOP/s)", RunBench},
    {"roofline", "counters of a step's top kernels against the ceilings", RunRoofline},
    {"summarize", "write the small per-rank summary of traces (for 'ranks')", RunSummarize},
    {"ranks", "compare ranks: step times, NCCL waits, scores, the straggler and why", RunRanks},
    {"export", "write a timeline for the Perfetto UI (protobuf) or Chrome JSON", RunExport},
    {"report", "write a self-contained HTML report with charts", RunReport},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "stepscope %s: profiler and analyzer for LLM training on NVIDIA GPUs\n\n"
               "usage: stepscope COMMAND [options] [args]\n\ncommands:\n",
               kVersion);
  for (const CommandInfo& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nEvery command: -h help and examples, -q quiet, -v verbose; output to -o FILE\n"
               "(replaced only with -f); tables as --format text|csv|json (docs/cli.md).\n"
               "Run 'stepscope COMMAND --help' for a command's options and examples.\n"
               "A 5-minute tour: README.md; every table and rule: docs/.\n");
}

}  // namespace
}  // namespace stepscope

int main(int argc, char** argv) {
  using namespace stepscope;
  // `stepscope help COMMAND` is `stepscope COMMAND --help`.
  if (argc == 3 && !std::strcmp(argv[1], "help")) {
    for (const CommandInfo& c : kCommands) {
      if (std::strcmp(argv[2], c.name) != 0) continue;
      char help[] = "--help";
      char* args[] = {help, nullptr};
      return c.run(1, args);
    }
    std::fprintf(stderr,
                 "stepscope: error: unknown command '%s'; run 'stepscope --help' for the list\n",
                 argv[2]);
    return 2;
  }
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    PrintUsage(stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::printf("stepscope %s\n", kVersion);
    return 0;
  }
  for (const CommandInfo& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    // Every command that reads traces says once per file that one was cut
    // off (profile's own summary says it of the traces it wrote).
    if (std::strcmp(c.name, "profile") != 0) TraceReader::WarnIfNotFinalized();
    // Nothing is meant to throw (errors are Status values), but a damaged
    // input can still reach an allocation or a library that does: one line
    // and exit 2 instead of an abort. Catching here unwinds the stack, so
    // temporary outputs (AtomicOutput, OutputFile) remove themselves.
    try {
      return c.run(argc - 2, argv + 2);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr,
                   "stepscope %s: error: out of memory; the input is damaged or too large for "
                   "this machine\n",
                   c.name);
    } catch (const std::exception& e) {
      std::fprintf(stderr,
                   "stepscope %s: error: internal error (%s); the input may be damaged; please "
                   "report it with the input\n",
                   c.name, e.what());
    } catch (...) {
      std::fprintf(stderr, "stepscope %s: error: internal error; please report it with the input\n",
                   c.name);
    }
    return 2;
  }
  // Not listed: the collector a tracer starts for itself (docs/capture.md).
  if (!std::strcmp(argv[1], "_collect")) return RunCollect(argc - 2, argv + 2);
  // Not listed: the launcher's journal keeper (collector/journal_guard.h).
  if (!std::strcmp(argv[1], "_guard")) return RunGuard(argc - 2, argv + 2);
  std::fprintf(stderr,
               "stepscope: error: unknown command '%s'; run 'stepscope --help' for the list\n",
               argv[1]);
  return 2;
}
