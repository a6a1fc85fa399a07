#include "importers/import.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/file_util.h"
#include "importers/import_util.h"
#include "importers/input_stream.h"
#include "importers/kineto_importer.h"
#include "importers/nsys_importer.h"
#include "store/trace_fixups.h"
#include "store/trace_writer.h"

namespace stepscope {

bool ParseImportFormat(const std::string& s, ImportFormat* out) {
  if (s == "auto")
    *out = ImportFormat::kAuto;
  else if (s == "kineto")
    *out = ImportFormat::kKinetoJson;
  else if (s == "nsys")
    *out = ImportFormat::kNsysSqlite;
  else
    return false;
  return true;
}

const char* ImportFormatName(ImportFormat f) {
  switch (f) {
    case ImportFormat::kKinetoJson:
      return "kineto-json";
    case ImportFormat::kNsysSqlite:
      return "nsys-sqlite";
    case ImportFormat::kAuto:
      break;
  }
  return "auto";
}

StatusOr<ImportFormat> DetectImportFormat(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return InvalidInput(path + ": cannot open: " + std::strerror(errno));
  unsigned char head[64];
  size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (n == 0) return InvalidInput(path + ": byte 0: empty file: nothing to import");
  if (n >= 16 && std::memcmp(head, "SQLite format 3\0", 16) == 0) return ImportFormat::kNsysSqlite;
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return ImportFormat::kKinetoJson;
  size_t i = 0;
  if (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) i = 3;  // UTF-8 BOM
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  // JSON (including a JSON array, which the JSON importer rejects with a precise message).
  if (i == n || head[i] == '{' || head[i] == '[') return ImportFormat::kKinetoJson;
  return InvalidInput(path + ": byte " + std::to_string(i) +
                      ": unrecognized format: expected torch.profiler JSON (.json, .json.gz) or an "
                      "Nsight Systems SQLite export; use --format to force one");
}

Status ImportTrace(const std::string& in, const std::string& out, ImportFormat format,
                   ImportResult* result) {
  if (format == ImportFormat::kAuto) {
    ASSIGN_OR_RETURN(format, DetectImportFormat(in));
  }
  result->format = format;
  AtomicOutput output(out);
  StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(output.temp_path());
  if (!writer.ok()) return writer.status();
  TraceWriter* w = writer->get();
  // The output is a temporary file until the import succeeds, so the crash
  // safety of a journal buys nothing: write each page once, not WAL + checkpoint.
  RETURN_IF_ERROR(StopJournal(w->db()).WithContext(out));
  Status st;
  auto t0 = std::chrono::steady_clock::now();
  if (format == ImportFormat::kKinetoJson) {
    StatusOr<std::unique_ptr<InputStream>> input = InputStream::Open(in);
    if (!input.ok()) return input.status().WithContext(in);
    result->gzip = (*input)->gzip();
    result->input_bytes = (*input)->file_size();
    st = ImportKinetoJson(input->get(), w, &result->stats);
    result->decoded_bytes = (*input)->decoded_bytes();
    if (!st.ok() && result->gzip && st.message().rfind("byte ", 0) == 0) {
      st = Status(st.code(), st.message() + " (offset in the decompressed JSON)");
    }
  } else {
    FILE* f = std::fopen(in.c_str(), "rb");
    if (f == nullptr) return InvalidInput(in + ": cannot open: " + std::strerror(errno));
    std::fseek(f, 0, SEEK_END);
    result->input_bytes = static_cast<uint64_t>(std::ftell(f));
    std::fclose(f);
    result->decoded_bytes = result->input_bytes;
    st = ImportNsysSqlite(in, w, &result->stats);
  }
  if (!st.ok()) {
    // Input problems are the user's (exit code 2); store failures keep their code.
    return st.code() == StatusCode::kInvalidInput ? InvalidInput(in + ": " + st.message())
                                                  : st.WithContext(in);
  }
  st = ResolveCopyAsync(w->db(), &result->stats);
  if (!st.ok()) return st.WithContext(out);
  result->stats.WriteTo(w);
  result->rows = w->rows();
  auto t1 = std::chrono::steady_clock::now();
  // Index builds sort every row: let SQLite spill the sort to a temporary file
  // instead of memory, so peak memory does not grow with the trace.
  RETURN_IF_ERROR(SpillTempToFile(w->db()).WithContext(out));
  RETURN_IF_ERROR(w->Finalize().WithContext(out));
  auto t2 = std::chrono::steady_clock::now();
  result->read_parse_insert_s = std::chrono::duration<double>(t1 - t0).count();
  result->finalize_s = std::chrono::duration<double>(t2 - t1).count();
  return output.Commit();
}

}  // namespace stepscope
