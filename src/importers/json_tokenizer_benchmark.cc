// json_tokenizer_benchmark FILE[.gz]: MB/s of the streaming tokenizer + JSON
// parser alone (events go to a null sink: no mapping, no SQLite), to split
// the import time (bench/import_speed.sh runs it).
#include <chrono>
#include <cstdio>

#include "importers/input_stream.h"
#include "importers/json_tokenizer.h"

using namespace stepscope;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: json_tokenizer_benchmark FILE[.gz]\n");
    return 2;
  }
  struct NullSink : ChromeTraceTokenizer::Sink {
    size_t nodes = 0;
    Status OnEvent(const JsonValueParser& e, uint64_t) override {
      nodes += e.size();
      return OkStatus();
    }
    Status OnTopLevel(std::string_view, const JsonValueParser&, uint64_t) override {
      return OkStatus();
    }
  } sink;
  auto t0 = std::chrono::steady_clock::now();
  auto in = InputStream::Open(argv[1]);
  if (!in.ok()) return std::fprintf(stderr, "%s\n", in.status().message().c_str()), 1;
  ChromeTraceTokenizer tokenizer(&sink);
  ReadAhead reader(in->get());
  Status st;
  while (st.ok()) {
    auto chunk = reader.Next();
    if (!chunk.ok()) st = chunk.status();
    if (!st.ok() || chunk->empty()) break;
    st = tokenizer.Feed(chunk->data(), chunk->size());
  }
  if (st.ok()) st = tokenizer.Finish();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!st.ok()) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
  std::printf("tokenizer+parser: %llu events, %zu JSON nodes, %.2f s, %.0f MB/s of JSON\n",
              static_cast<unsigned long long>(tokenizer.events()), sink.nodes, s,
              (*in)->decoded_bytes() / s / 1e6);
  return 0;
}
