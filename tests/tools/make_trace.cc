// make_trace: builds a stepscope trace from a fixture written as SQL.
//
//   make_trace [--no-finalize] OUT.sqlite FIXTURE.sql [FIXTURE.sql ...]
//
// The schema comes from TraceWriter (so fixtures always match the code); the
// fixture only INSERTs rows (strings with explicit ids, kernels, nvtx, ...).
// --no-finalize leaves the trace as a crashed capture would (finalized = 0,
// no indices).
#include <cstdio>
#include <cstring>
#include <string>

#include "common/file_util.h"
#include "store/trace_writer.h"

int main(int argc, char** argv) {
  using namespace stepscope;
  bool finalize = true;
  int i = 1;
  if (i < argc && std::strcmp(argv[i], "--no-finalize") == 0) {
    finalize = false;
    ++i;
  }
  if (argc - i < 2) {
    std::fprintf(stderr, "usage: make_trace [--no-finalize] OUT.sqlite FIXTURE.sql...\n");
    return 2;
  }
  std::string out = argv[i++];
  std::remove(out.c_str());
  auto w = TraceWriter::Create(out);
  if (!w.ok()) {
    std::fprintf(stderr, "make_trace: %s\n", w.status().message().c_str());
    return 1;
  }
  (*w)->SetMeta("source", "fixture");
  (*w)->SetMeta("clock", "CLOCK_REALTIME");
  for (; i < argc; ++i) {
    auto sql = ReadFile(argv[i]);
    if (!sql.ok()) {
      std::fprintf(stderr, "make_trace: %s\n", sql.status().message().c_str());
      return 1;
    }
    Status st = Exec((*w)->db(), *sql);
    if (!st.ok()) {
      std::fprintf(stderr, "make_trace: %s: %s\n", argv[i], st.message().c_str());
      return 1;
    }
  }
  Status st = finalize ? (*w)->Finalize() : (*w)->Commit();
  if (!st.ok()) {
    std::fprintf(stderr, "make_trace: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}
