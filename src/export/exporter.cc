#include "export/exporter.h"

#include <memory>

#include "export/chrome_json_writer.h"
#include "export/output_file.h"
#include "export/perfetto_writer.h"

namespace stepscope {

bool ParseExportFormat(const std::string& name, ExportFormat* format) {
  if (name == "perfetto" || name == "pftrace" || name == "protobuf") {
    *format = ExportFormat::kPerfetto;
    return true;
  }
  if (name == "chrome" || name == "json") {
    *format = ExportFormat::kChromeJson;
    return true;
  }
  return false;
}

Status ExportTrace(const TraceReader& reader, ExportFormat format, const TimelineOptions& options,
                   const std::string& out_path, TimelineStats* stats, uint64_t* bytes_written) {
  OutputFile out(out_path);
  RETURN_IF_ERROR(out.Open());
  std::unique_ptr<TimelineSink> sink;
  ChromeJsonWriter* chrome = nullptr;
  if (format == ExportFormat::kPerfetto) {
    sink = std::make_unique<PerfettoWriter>(&out);
  } else {
    auto w = std::make_unique<ChromeJsonWriter>(&out, reader.Meta("source", "unknown"));
    chrome = w.get();
    sink = std::move(w);
  }
  RETURN_IF_ERROR(WalkTimeline(reader, options, sink.get(), stats).WithContext(reader.path()));
  RETURN_IF_ERROR(sink->Finish());
  if (chrome && stats) stats->names_truncated = chrome->names_truncated();
  if (bytes_written) *bytes_written = out.bytes_written();
  return out.Close();
}

}  // namespace stepscope
