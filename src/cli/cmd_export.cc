#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "export/chrome_json_writer.h"
#include "export/exporter.h"

namespace stepscope {

int RunExport(int argc, char** argv) {
  ArgParser p(
      "export", "[--timeline-format perfetto|chrome] TRACE.sqlite -o OUT",
      "Write the trace as a timeline for the Perfetto UI (ui.perfetto.dev, or trace_processor): "
      "a track per GPU stream under its device, host threads with their CUDA API calls and NVTX "
      "ranges, an arrow from each launch to the kernel/memcpy/memset it created, and counter "
      "tracks per device for GPU utilization (% of each time bucket with a kernel running) and "
      "device memory in use. The output streams (any trace size) and appears only when complete.");
  p.Flag("--timeline-format", "FMT",
         "perfetto (protobuf .pftrace, loads traces of any size) or chrome (Chrome trace-event "
         "JSON; Perfetto's JSON importer struggles near 1 GB)",
         "perfetto");
  p.Flag("--format", "FMT", "deprecated spelling of --timeline-format");
  p.FileOutput("OUT", "output file (required)");
  p.Flag("--util-bucket", "DURATION",
         "GPU utilization bucket, e.g. 1ms (default: auto, about 2000 buckets)");
  p.Switch("--no-args",
           "leave out per-slice arguments (grid, block, bytes, correlation): smaller files");
  p.Epilog(
      "examples:\n"
      "  stepscope export trace.sqlite -o trace.pftrace     # then open it in ui.perfetto.dev\n"
      "  stepscope export --timeline-format chrome trace.sqlite -o trace.json\n"
      "  stepscope export -f trace.sqlite -o trace.pftrace   # replace an earlier export\n"
      "  stepscope export --util-bucket 500us trace.sqlite -o trace.pftrace\n"
      "\nTimes: the .pftrace keeps the trace clock in ns; the JSON is relative to the first event\n"
      "(otherData.time_origin_ns holds it). See docs/export.md for the track layout.\n");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.positionals().size() != 1) {
    return ReportError(
        "export", InvalidInput("expected exactly one TRACE.sqlite; see 'stepscope export --help'"));
  }
  if (!p.Has("--output")) {
    return ReportError("export", InvalidInput("missing -o OUT; see 'stepscope export --help'"));
  }
  std::string timeline_format = p.Get("--timeline-format");
  if (p.Has("--format")) {
    CliNote("export", "note: --format is deprecated; use --timeline-format " + p.Get("--format"));
    timeline_format = p.Get("--format");
  }
  ExportFormat format;
  if (!ParseExportFormat(timeline_format, &format)) {
    return ReportError("export", InvalidInput("--timeline-format '" + timeline_format +
                                              "': expected perfetto or chrome"));
  }
  TimelineOptions options;
  options.args = !p.Has("--no-args");
  if (p.Has("--util-bucket") &&
      (!ParseDurationNs(p.Get("--util-bucket"), &options.util_bucket_ns) ||
       options.util_bucket_ns <= 0)) {
    return ReportError("export",
                       InvalidInput("--util-bucket " + p.Get("--util-bucket") +
                                    ": expected a positive duration such as 1ms or 250us"));
  }
  auto reader = TraceReader::Open(p.positionals()[0]);
  if (!reader.ok()) return ReportError("export", reader.status());
  TimelineStats stats;
  uint64_t bytes = 0;
  std::string out = p.Get("--output");
  Status st = ExportTrace(**reader, format, options, out, &stats, &bytes);
  if (!st.ok()) return ReportError("export", st);
  if (!CliQuiet()) {
    // Host-model slices (docs/host.md) only when the trace has them: older output unchanged.
    const std::string host =
        stats.host_slices > 0 ? ", " + FormatCount(stats.host_slices) + " host" : std::string();
    std::fprintf(stderr,
                 "stepscope export: wrote %s (%s): %s tracks, %s slices (%s GPU, %s CPU%s), %s "
                 "flows, %s counter "
                 "points\n",
                 out.c_str(), FormatBytes(bytes).c_str(), FormatCount(stats.tracks).c_str(),
                 FormatCount(stats.slices).c_str(), FormatCount(stats.gpu_slices).c_str(),
                 FormatCount(stats.cpu_slices).c_str(), host.c_str(),
                 FormatCount(stats.flows).c_str(), FormatCount(stats.counter_points).c_str());
    if (stats.names_truncated > 0) {
      CliNote("export", FormatCount(stats.names_truncated) + " names longer than " +
                            std::to_string(ChromeJsonWriter::kMaxNameBytes / 1024) +
                            " KiB were cut (Chrome JSON repeats each name per event; "
                            "--timeline-format perfetto keeps them whole)");
    }
  }
  return 0;
}

}  // namespace stepscope
