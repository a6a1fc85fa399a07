// libFuzzer target: the Nsight Systems importer on arbitrary bytes written as
// an SQLite file (the seeds are real-schema exports, so mutations reach the
// table readers). Any input must end in OK or a clean error, never a crash.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "importers/import_stats.h"
#include "importers/nsys_importer.h"
#include "store/trace_writer.h"

using namespace stepscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string in =
      "/tmp/stepscope_nsys_fuzz_in_" + std::to_string(getpid()) + ".sqlite";
  static const std::string out =
      "/tmp/stepscope_nsys_fuzz_out_" + std::to_string(getpid()) + ".sqlite";
  FILE* f = std::fopen(in.c_str(), "wb");
  if (f == nullptr) abort();
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto w = TraceWriter::Create(":memory:");  // the output is not under test
  if (!w.ok()) abort();
  ImportStats stats;
  Status st = ImportNsysSqlite(in, w->get(), &stats);
  (void)st;  // corrupt databases surface as SQLite errors of any kind; only crashes matter
  return 0;
}
