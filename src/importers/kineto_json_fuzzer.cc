// libFuzzer target: the Kineto JSON import (tokenizer + event parser + mapping
// into a real TraceWriter). The input is fed in two chunks split at a point
// chosen from the data, so chunk-boundary handling is fuzzed too. Any input
// must end in OK or an InvalidInput status, never a crash or a hang.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "importers/import_stats.h"
#include "importers/json_tokenizer.h"
#include "importers/kineto_importer.h"
#include "store/trace_writer.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One in-memory output reused across runs (creating the schema costs more
  // than the parse), renewed now and then so it does not grow without bound.
  static std::unique_ptr<TraceWriter> w;
  static int runs = 0;
  if (w == nullptr || ++runs % 500 == 0) {
    w.reset();
    auto created = TraceWriter::Create(":memory:");
    if (!created.ok()) abort();
    w = std::move(*created);
  }
  ImportStats stats;
  KinetoImporter importer(w.get(), &stats);
  ChromeTraceTokenizer tokenizer(&importer);
  const char* p = reinterpret_cast<const char*>(data);
  size_t split = size ? data[0] % (size + 1) : 0;
  Status st = tokenizer.Feed(p, split);
  if (st.ok()) st = tokenizer.Feed(p + split, size - split);
  if (st.ok()) st = tokenizer.Finish();
  if (st.ok()) st = importer.Finish();
  if (!st.ok() && st.code() != StatusCode::kInvalidInput) abort();
  return 0;
}
