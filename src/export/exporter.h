// ExportTrace: writes a stepscope trace as a timeline file for Perfetto
// (protobuf, the default) or Chrome-trace JSON. See docs/export.md.
#pragma once

#include <string>

#include "common/status.h"
#include "export/timeline.h"
#include "store/trace_reader.h"

namespace stepscope {

enum class ExportFormat { kPerfetto, kChromeJson };

// "perfetto" | "chrome" (also "json") -> format; false when unknown.
bool ParseExportFormat(const std::string& name, ExportFormat* format);

// Streams the timeline of `reader` to `out_path`, atomically: on error the
// path is left as it was. *stats says what was written.
Status ExportTrace(const TraceReader& reader, ExportFormat format, const TimelineOptions& options,
                   const std::string& out_path, TimelineStats* stats,
                   uint64_t* bytes_written = nullptr);

}  // namespace stepscope
