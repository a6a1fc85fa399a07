// libFuzzer target: the Kineto JSON import (tokenizer + event parser + mapping
// into a real TraceWriter). The input is fed in two chunks split at a point
// chosen from the data, so chunk-boundary handling is fuzzed too. Any input
// must end in OK or an InvalidInput status, never a crash or a hang.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "importers/import_stats.h"
#include "importers/json_tokenizer.h"
#include "importers/kineto_importer.h"
#include "store/trace_writer.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      "/tmp/stepscope_kineto_fuzz_" + std::to_string(getpid()) + ".sqlite";
  unlink(path.c_str());
  auto w = TraceWriter::Create(path);
  if (!w.ok()) abort();
  ImportStats stats;
  KinetoImporter importer(w->get(), &stats);
  ChromeTraceTokenizer tokenizer(&importer);
  const char* p = reinterpret_cast<const char*>(data);
  size_t split = size ? data[0] % (size + 1) : 0;
  Status st = tokenizer.Feed(p, split);
  if (st.ok()) st = tokenizer.Feed(p + split, size - split);
  if (st.ok()) st = tokenizer.Finish();
  if (st.ok()) st = importer.Finish();
  if (!st.ok() && st.code() != StatusCode::kInvalidInput) abort();
  w->reset();
  unlink(path.c_str());
  unlink((path + "-wal").c_str());
  unlink((path + "-shm").c_str());
  return 0;
}
