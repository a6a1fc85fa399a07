// The importers' entry point: a foreign trace file in, a finalized stepscope
// trace out.
//
//   ImportResult r;
//   Status st = ImportTrace("trace.json.gz", "trace.sqlite", ImportFormat::kAuto, &r);
//
// The format is detected from the file's first bytes (gzip magic or '{' ->
// Kineto JSON; "SQLite format 3" -> Nsight Systems export), not from its
// name. The output is written to a temporary file beside OUT and renamed
// only when the import succeeded: a failed import leaves nothing behind.
// Errors are InvalidInput with a message "IN: <position>: <what>; <hint>".
#pragma once

#include <string>

#include "common/status.h"
#include "importers/import_stats.h"

namespace stepscope {

enum class ImportFormat { kAuto, kKinetoJson, kNsysSqlite };

// "kineto", "nsys" or "auto" -> format; false when unknown.
bool ParseImportFormat(const std::string& s, ImportFormat* out);
const char* ImportFormatName(ImportFormat f);

struct ImportResult {
  ImportFormat format = ImportFormat::kAuto;
  bool gzip = false;
  uint64_t input_bytes = 0;        // bytes of the file on disk
  uint64_t decoded_bytes = 0;      // bytes parsed (uncompressed JSON; = input for SQLite)
  uint64_t rows = 0;               // rows written to the output trace
  double read_parse_insert_s = 0;  // wall time reading, parsing and inserting rows
  double finalize_s = 0;           // wall time building indices and closing the trace
  ImportStats stats;
};

// Detects the format of `path` from its first bytes.
StatusOr<ImportFormat> DetectImportFormat(const std::string& path);

Status ImportTrace(const std::string& in, const std::string& out, ImportFormat format,
                   ImportResult* result);

}  // namespace stepscope
