#include "store/trace_fixups.h"

#include <string>

#include "store/sqlite_util.h"

namespace stepscope {

Status FillSyncThreads(sqlite3* db) {
  return Exec(db,
              "CREATE INDEX IF NOT EXISTS api_correlation ON api(correlation);"
              "UPDATE sync SET tid = COALESCE((SELECT tid FROM api WHERE api.correlation = "
              "sync.correlation LIMIT 1), 0) WHERE tid = 0;");
}

Status MarkBlockingCudaWaits(sqlite3* db) {
  return Exec(
      db,
      "CREATE TEMP TABLE host_blocking_api AS SELECT a.tid, a.start_ns, a.end_ns, a.name_id "
      "FROM api a JOIN strings s ON s.rowid = a.name_id WHERE s.value LIKE '%Synchronize%' "
      "OR s.value IN ('cudaMemcpy', 'cudaMemcpy2D', 'cudaMemcpy3D', 'cudaMemcpyPeer', "
      "'cudaMemcpyToSymbol', 'cudaMemcpyFromSymbol', 'cudaMemset', 'cudaMemset2D', "
      "'cudaMemset3D', 'cuMemcpy', 'cuMemcpyDtoH', 'cuMemcpyHtoD', 'cuMemcpyDtoD', "
      "'cuMemcpyPeer', 'cuMemsetD8', 'cuMemsetD16', 'cuMemsetD32', 'cudaFree', 'cudaFreeHost', "
      "'cuMemFree', 'cuMemFreeHost');"
      "CREATE INDEX host_blocking_api_tid ON host_blocking_api(tid, start_ns);"
      "UPDATE samples SET state = 2, wait_id = (SELECT b.name_id FROM host_blocking_api b "
      "WHERE b.tid = samples.tid AND b.start_ns <= samples.ts_ns ORDER BY b.start_ns DESC "
      "LIMIT 1) WHERE (SELECT b.end_ns FROM host_blocking_api b WHERE b.tid = samples.tid AND "
      "b.start_ns <= samples.ts_ns ORDER BY b.start_ns DESC LIMIT 1) >= samples.ts_ns;"
      "DELETE FROM osrt WHERE source = 2 AND (SELECT b.end_ns FROM host_blocking_api b WHERE "
      "b.tid = osrt.tid AND b.start_ns <= osrt.end_ns ORDER BY b.start_ns DESC LIMIT 1) >= "
      "osrt.start_ns;"
      "DROP TABLE host_blocking_api;");
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

Status ClassifyCopiesAsync(sqlite3* db) {
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
  return Exec(db, sql);
}

StatusOr<CopyAsyncCounts> CountCopiesByAsync(sqlite3* db) {
  ASSIGN_OR_RETURN(Statement q,
                   Prepare(db,
                           "SELECT coalesce(is_async, 2), count(*) FROM (SELECT is_async FROM "
                           "memcpy UNION ALL SELECT is_async FROM memset) GROUP BY 1"));
  CopyAsyncCounts n;
  while (q.Step()) {
    const int64_t k = q.Int(0);
    if (k == 1)
      n.async += q.Int(1);
    else if (k == 0)
      n.sync += q.Int(1);
    else
      n.unknown += q.Int(1);
  }
  return n;
}

Status StopJournal(sqlite3* db) { return Exec(db, "COMMIT; PRAGMA journal_mode=OFF; BEGIN;"); }

Status SpillTempToFile(sqlite3* db) { return Exec(db, "PRAGMA temp_store=FILE;"); }

}  // namespace stepscope
