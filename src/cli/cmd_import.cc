// stepscope import: a torch.profiler (Kineto) JSON trace or an Nsight Systems
// SQLite export -> a stepscope trace, then a summary of what was read.
#include <chrono>
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/progress.h"
#include "common/strings.h"
#include "common/table.h"
#include "importers/import.h"

namespace stepscope {

int RunImport(int argc, char** argv) {
  ArgParser p(
      "import", "IN -o OUT.sqlite [--input-format auto|kineto|nsys] [--format text|csv|json]",
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
  p.FileOutput("OUT", "the stepscope trace to write (required)");
  p.Flag("--input-format", "FMT", "input format: auto, kineto or nsys", "auto");
  p.Flag("--format", "FMT", "format of the summary table: text, csv or json", "text");
  p.Flag("--summary", "FMT", "deprecated spelling of --format");
  p.Epilog(
      "examples:\n"
      "  stepscope import trace.json.gz -o trace.sqlite\n"
      "  stepscope import report.sqlite --input-format nsys -o trace.sqlite\n"
      "  stepscope import trace.json.gz -o trace.sqlite -f --format json   # replace, JSON "
      "summary\n"
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
  // Before the convention --format named the input format and --summary the
  // table format: both spellings still work, with a note.
  std::string input_format = p.Get("--input-format"), table_format = p.Get("--format");
  ImportFormat format;
  if (p.Has("--format") && ParseImportFormat(table_format, &format)) {
    CliNote("import", "note: --format " + table_format + " is deprecated; use --input-format " +
                          table_format + " (--format is the summary table's format)");
    input_format = table_format;
    table_format = "text";
  }
  if (p.Has("--summary")) {
    CliNote("import", "note: --summary is deprecated; use --format");
    table_format = p.Get("--summary");
  }
  if (!ParseImportFormat(input_format, &format)) {
    return ReportError("import", InvalidInput("--input-format '" + input_format +
                                              "': expected auto, kineto or nsys"));
  }
  OutputFormat summary_format;
  if (!ParseOutputFormat(table_format, &summary_format)) {
    return ReportError("import",
                       InvalidInput("--format '" + table_format + "': expected text, csv or json"));
  }

  auto t0 = std::chrono::steady_clock::now();
  ImportResult r;
  Status st;
  {
    ProgressReporter progress("import", ReadProgress(in));
    st = ImportTrace(in, out, format, &r);
  }
  if (!st.ok()) return ReportError("import", st);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!CliQuiet()) {
    for (const std::string& w : r.stats.warnings()) {
      std::fprintf(stderr, "import: warning: %s: %s\n", in.c_str(), w.c_str());
    }
  }

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
  std::fputs(summary_format == OutputFormat::kText
                 ? t.RenderText().c_str()
                 : RenderTables({{"import", "Import counters", t, ""}}, summary_format).c_str(),
             stdout);
  if (CliQuiet()) return 0;
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
