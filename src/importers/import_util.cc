#include "importers/import_util.h"

#include "importers/import_stats.h"
#include "store/trace_fixups.h"
#include "store/trace_writer.h"

namespace stepscope {

StringId StringCache::Get(std::string_view s) {
  auto it = map_.find(s);
  if (it != map_.end()) return it->second;
  StringId id = w_->Intern(s);
  map_.emplace(std::string(s), id);
  return id;
}

uint8_t RangeDepthTracker::Depth(uint64_t key, int64_t start, int64_t end) {
  Stack& s = stacks_[key];
  if (start < s.last_start || (start == s.last_start && end > s.last_end)) {
    ++out_of_order_;
    unordered_.insert(key);
  }
  while (!s.ends.empty() && s.ends.back() <= start) s.ends.pop_back();
  if (!s.ends.empty() && end > s.ends.back()) ++s.partial;
  size_t depth = s.ends.size();
  s.ends.push_back(end);
  s.last_start = start;
  s.last_end = end;
  return depth > 255 ? 255 : static_cast<uint8_t>(depth);
}

uint64_t RangeDepthTracker::partial_overlaps() const {
  uint64_t n = 0;
  for (const auto& [key, s] : stacks_) {
    if (!unordered_.count(key)) n += s.partial;
  }
  return n;
}

Status ResolveCopyAsync(sqlite3* db, ImportStats* stats) {
  RETURN_IF_ERROR(ClassifyCopiesAsync(db));
  ASSIGN_OR_RETURN(CopyAsyncCounts counts, CountCopiesByAsync(db));
  const int64_t n[3] = {counts.async, counts.sync, counts.unknown};
  stats->Set(stats->Add("import_copies_async",
                        "memcpy/memset rows issued by an async call (cudaMemcpyAsync, ...; "
                        "found by correlation id): is_async = 1"),
             n[0]);
  stats->Set(stats->Add("import_copies_sync",
                        "memcpy/memset rows issued by a synchronous call (cudaMemcpy, "
                        "cudaMemset, ...): is_async = 0"),
             n[1]);
  stats->Set(stats->Add("import_copies_async_unknown",
                        "memcpy/memset rows whose issuing call is not in the trace: is_async "
                        "NULL (the sync_memcpy rule cannot decide on them)"),
             n[2]);
  if (n[2] > 0) {
    stats->Warn(std::to_string(n[2]) + " of " + std::to_string(n[0] + n[1] + n[2]) +
                " memcpy/memset rows have no issuing API call in the trace (by correlation "
                "id): whether they were async is unknown (is_async NULL; stats "
                "import_copies_async_unknown)");
  }
  return OkStatus();
}

}  // namespace stepscope
