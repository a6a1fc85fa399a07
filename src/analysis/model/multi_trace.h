// Many traces (one per rank): load and analyze them in parallel on a small
// thread pool, keep the results in input order, and tag tables with the
// rank/file columns.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analysis/model/trace_model.h"
#include "common/log.h"
#include "common/status.h"
#include "common/table.h"

namespace stepscope {

// Runs fn(model, index) for every path on min(jobs, paths) threads. Each trace
// is loaded, used and freed inside its task, so memory holds at most `jobs`
// traces. On failure returns the error of the first failing path (in input
// order). jobs <= 0: one thread per core.
template <typename T>
StatusOr<std::vector<T>> ForEachTrace(
    const std::vector<std::string>& paths, int jobs,
    const std::function<StatusOr<T>(const TraceModel&, size_t)>& fn) {
  const size_t n = paths.size();
  std::vector<std::unique_ptr<StatusOr<T>>> results(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      const auto t0 = std::chrono::steady_clock::now();
      auto model = TraceModel::Load(paths[i]);
      if (!model.ok()) {
        results[i] = std::make_unique<StatusOr<T>>(model.status());
        continue;
      }
      const auto t1 = std::chrono::steady_clock::now();
      results[i] = std::make_unique<StatusOr<T>>(fn(**model, i));
      // -v: where the time went.
      LogVerbose("%s: loaded in %.2f s, processed in %.2f s", paths[i].c_str(),
                 std::chrono::duration<double>(t1 - t0).count(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    }
  };
  size_t threads =
      jobs > 0 ? static_cast<size_t>(jobs) : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (threads > 0) worker();
  for (std::thread& t : pool) t.join();
  std::vector<T> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!results[i]->ok()) return results[i]->status();
    out.push_back(std::move(*results[i]).value());
  }
  return out;
}

// The rank of a trace for the rank column: meta.rank when recorded, else its
// position on the command line.
inline int64_t TraceRank(const TraceModel& m, size_t index) {
  return m.rank() >= 0 ? m.rank() : static_cast<int64_t>(index);
}

// Prepends "rank" and "file" columns.
inline void AddTraceColumns(Table* t, const TraceModel& m, size_t index) {
  t->PrependColumn({"file", "File", false}, Cell(m.file_name()));
  t->PrependColumn({"rank", "Rank", true}, Cell(TraceRank(m, index)));
}

// Appends the rows of `src` to `dst` (same columns).
inline void AppendRows(Table* dst, const Table& src) {
  if (dst->columns().empty()) {
    for (const Column& c : src.columns()) dst->AddColumn(c);
  }
  for (const auto& row : src.rows()) dst->AddRow(row);
}

}  // namespace stepscope
