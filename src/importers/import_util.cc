#include "importers/import_util.h"

#include "importers/import_stats.h"
#include "store/sqlite_util.h"
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

Status RecomputeNvtxDepth(sqlite3* db, uint32_t tid, const std::vector<StringId>& domains,
                          uint64_t* partial) {
  std::string in;
  for (size_t i = 0; i < domains.size(); ++i) in += (i ? ",?" : "?");
  ASSIGN_OR_RETURN(
      Statement sel,
      Prepare(db,
              "SELECT id, start_ns, end_ns, depth FROM nvtx WHERE kind = 1 AND tid = ? "
              "AND domain_id IN (" +
                  in + ") ORDER BY start_ns, end_ns DESC, id"));
  ASSIGN_OR_RETURN(Statement upd, Prepare(db, "UPDATE nvtx SET depth = ? WHERE id = ?"));
  sel.BindInt(1, tid);
  for (size_t i = 0; i < domains.size(); ++i) sel.BindInt(static_cast<int>(i) + 2, domains[i]);
  std::vector<int64_t> ends;
  while (sel.Step()) {
    int64_t start = sel.Int(1), end = sel.Int(2);
    while (!ends.empty() && ends.back() <= start) ends.pop_back();
    if (!ends.empty() && end > ends.back()) ++*partial;
    int64_t depth = ends.size() > 255 ? 255 : static_cast<int64_t>(ends.size());
    ends.push_back(end);
    if (depth != sel.Int(3)) {
      upd.BindInt(1, depth);
      upd.BindInt(2, sel.Int(0));
      upd.Step();
      if (!upd.ok()) return upd.status();
      upd.Reset();
    }
  }
  return sel.status();
}

Status ResolveCopyAsync(sqlite3* db, ImportStats* stats) {
  // The class of a call name: 1 async, 0 synchronous, NULL neither.
  static const char kClass[] =
      "(SELECT CASE WHEN s.value LIKE '%Async%' OR s.value LIKE 'cudaGraphLaunch%' OR "
      "s.value LIKE 'cuGraphLaunch%' THEN 1 "
      "WHEN s.value LIKE 'cudaMemcpy%' OR s.value LIKE 'cudaMemset%' OR "
      "s.value LIKE 'cuMemcpy%' OR s.value LIKE 'cuMemset%' THEN 0 ELSE NULL END "
      "FROM api a JOIN strings s ON s.id = a.name_id WHERE a.correlation = T.correlation "
      "AND T.correlation != 0 LIMIT 1)";
  std::string sql = "CREATE INDEX IF NOT EXISTS api_correlation ON api(correlation);";
  for (const char* t : {"memcpy", "memset"}) {
    std::string c = kClass;
    for (size_t p = c.find("T."); p != std::string::npos; p = c.find("T.", p)) c.replace(p, 1, t);
    sql += std::string("UPDATE ") + t + " SET is_async = " + c + ";";
  }
  RETURN_IF_ERROR(Exec(db, sql));
  int64_t n[3] = {0, 0, 0};  // async, sync, unknown
  ASSIGN_OR_RETURN(Statement q,
                   Prepare(db,
                           "SELECT coalesce(is_async, 2), count(*) FROM (SELECT is_async FROM "
                           "memcpy UNION ALL SELECT is_async FROM memset) GROUP BY 1"));
  while (q.Step()) {
    const int64_t k = q.Int(0);
    if (k == 1)
      n[0] += q.Int(1);
    else if (k == 0)
      n[1] += q.Int(1);
    else
      n[2] += q.Int(1);
  }
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
