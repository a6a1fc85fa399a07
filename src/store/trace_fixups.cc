#include "store/trace_fixups.h"

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

}  // namespace stepscope
