// stepscope import: a torch.profiler (Kineto) JSON trace or an Nsight Systems
// SQLite export -> a stepscope trace, then a summary of what was read.
#include <chrono>
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "common/table.h"
#include "importers/import.h"

namespace stepscope {

int RunImport(int argc, char** argv) {
  ArgParser p(
      "import", "IN -o OUT.sqlite [--format auto|kineto|nsys]",
      "Convert a foreign trace into a stepscope trace, so that every recipe, rule and report "
      "works on it:\n"
      "  * torch.profiler / Kineto Chrome-trace JSON (.json or .json.gz, read as a stream:\n"
      "    files of many GB are fine; gzip is decoded on the fly);\n"
      "  * Nsight Systems SQLite exports (nsys export --type sqlite REPORT.nsys-rep).\n"
      "The format is detected from the file's first bytes. CPU ops, user annotations and\n"
      "python functions become NVTX-like ranges (domain = the torch category). Events the\n"
      "importer cannot map, or that are malformed, are counted in the trace's stats table\n"
      "and skipped; only an unreadable file is an error (exit code 2, no output left behind).\n"
      "Prints the counters of the import (what was read, what was skipped); the time taken\n"
      "goes to stderr. docs/import.md lists what is mapped to what.");
  p.Flag("--output", "OUT", "the stepscope trace to write (replaced if it exists)", "", "-o");
  p.Flag("--format", "FMT", "input format: auto (default), kineto or nsys", "auto");
  p.Flag("--summary", "FMT", "summary table format: text (default), csv or json", "text");
  p.Switch("--quiet", "print nothing but errors", "-q");
  p.Epilog(
      "examples:\n"
      "  stepscope import trace.json.gz -o trace.sqlite\n"
      "  stepscope import report.sqlite --format nsys -o trace.sqlite\n"
      "  sqlite3 trace.sqlite \"SELECT name, value FROM stats WHERE value > 0\"");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.positionals().size() != 1) {
    return ReportError("import",
                       InvalidInput("expected one input file; see 'stepscope import --help'"));
  }
  const std::string in = p.positionals()[0];
  const std::string out = p.Get("--output");
  if (out.empty())
    return ReportError("import",
                       InvalidInput("missing -o OUT.sqlite; see 'stepscope import --help'"));
  if (out == in)
    return ReportError("import", InvalidInput(in + ": the output would overwrite the input"));
  ImportFormat format;
  if (!ParseImportFormat(p.Get("--format"), &format)) {
    return ReportError("import", InvalidInput("unknown --format '" + p.Get("--format") +
                                              "' (auto, kineto, nsys)"));
  }
  OutputFormat summary_format;
  if (!ParseOutputFormat(p.Get("--summary"), &summary_format)) {
    return ReportError(
        "import", InvalidInput("unknown --summary '" + p.Get("--summary") + "' (text, csv, json)"));
  }

  auto t0 = std::chrono::steady_clock::now();
  ImportResult r;
  Status st = ImportTrace(in, out, format, &r);
  if (!st.ok()) return ReportError("import", st);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const std::string& w : r.stats.warnings()) {
    std::fprintf(stderr, "import: warning: %s: %s\n", in.c_str(), w.c_str());
  }
  if (p.Has("--quiet")) return 0;

  Table t({{"counter"}, {"value", "", true}});
  for (const ImportStats::Counter& c : r.stats.counters()) {
    if (c.value != 0) t.AddRow({c.name, c.value});
  }
  if (summary_format == OutputFormat::kText) {
    std::printf("%s (%s%s) -> %s\n", in.c_str(), ImportFormatName(r.format), r.gzip ? ", gzip" : "",
                out.c_str());
    int64_t kernel_ns = r.stats.Get("import_kernel_time_ns");
    std::printf("kernel time: %s.%03lld us\n", FormatCount(kernel_ns / 1000).c_str(),
                static_cast<long long>(kernel_ns % 1000));
  }
  std::fputs(t.Render(summary_format).c_str(), stdout);
  std::fprintf(stderr,
               "import: %s bytes parsed in %.2f s (%.1f MB/s), %s rows written "
               "(read+parse+insert %.2f s, indices+close %.2f s)\n",
               FormatCount(static_cast<int64_t>(r.decoded_bytes)).c_str(), secs,
               secs > 0 ? r.decoded_bytes / secs / 1e6 : 0.0,
               FormatCount(static_cast<int64_t>(r.rows)).c_str(), r.read_parse_insert_s,
               r.finalize_s);
  return 0;
}

}  // namespace stepscope
