// Figure: rows per second the trace store sustains (docs/PERFORMANCE.md,
// "Store write rate"). Writes N (kernel, launch-API) record pairs through
// TraceWriter the way the tracer's writer thread does (one open transaction,
// a commit every `--commit-rows`), then finalizes; prints the insert rate and
// the finalize time separately.
//
//   store_write_rate [--pairs N] [--commit-rows R] OUT.sqlite
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "store/trace_writer.h"

int main(int argc, char** argv) {
  using namespace stepscope;
  long pairs = 1'000'000, commit_rows = 200'000;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--pairs") && i + 1 < argc) {
      pairs = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--commit-rows") && i + 1 < argc) {
      commit_rows = std::atol(argv[++i]);
    } else {
      out = argv[i];
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "usage: store_write_rate [--pairs N] [--commit-rows R] OUT.sqlite\n");
    return 2;
  }
  std::remove(out.c_str());
  auto w = TraceWriter::Create(out);
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.status().message().c_str());
    return 1;
  }
  TraceWriter& tw = **w;
  StringId names[8];
  for (int i = 0; i < 8; ++i) names[i] = tw.Intern("void kernel_" + std::to_string(i) + "<float>(float*, int)");
  StringId launch = tw.Intern("cudaLaunchKernel");
  const int64_t t0 = 1'795'245'651'484'984'452;
  auto start = std::chrono::steady_clock::now();
  long since_commit = 0;
  for (long i = 0; i < pairs; ++i) {
    ApiRecord a{};
    a.start_ns = t0 + i * 5000;
    a.end_ns = a.start_ns + 2400;
    a.tid = 574;
    a.correlation = static_cast<uint32_t>(i + 1);
    a.cbid = 211;
    a.name = launch;
    tw.AddApi(a);
    KernelRecord k{};
    k.start_ns = t0 + i * 5000 + 3000;
    k.end_ns = k.start_ns + 1800 + (i % 7) * 100;
    k.device = 0;
    k.context = 1;
    k.stream = 7;
    k.correlation = static_cast<uint32_t>(i + 1);
    k.name = names[i % 8];
    k.grid_x = 132;
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 32;
    tw.AddKernel(k);
    since_commit += 2;
    if (since_commit >= commit_rows) {
      if (!tw.Commit().ok()) return 1;
      since_commit = 0;
    }
  }
  if (!tw.Commit().ok()) return 1;
  double insert_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto f0 = std::chrono::steady_clock::now();
  if (!tw.Finalize().ok()) return 1;
  double fin_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
  std::printf("{\"rows\": %ld, \"insert_s\": %.3f, \"rows_per_s\": %.0f, \"finalize_s\": %.3f}\n", 2 * pairs,
              insert_s, 2 * pairs / insert_s, fin_s);
  return 0;
}
