// Nsight Systems SQLite export (`nsys export --type sqlite`) -> stepscope trace.
//
// Reads the documented export tables (docs/import.md lists every column):
//   CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET -> kernels / memcpy / memset
//   CUPTI_ACTIVITY_KIND_RUNTIME (and _DRIVER when present) -> api
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> sync (tid from the matching api row)
//   NVTX_EVENTS (push/pop, start/end, marks; domains) -> nvtx
//   StringIds -> strings; TARGET_INFO_GPU -> devices; ThreadNames -> threads;
//   TARGET_INFO_SESSION_START_TIME -> meta.wall_clock_offset_ns
//   ENUM_* tables translate nsys's enum values (copy kind, memory kind, sync
//   type, NVTX event type); without them CUPTI's numbering is assumed.
// globalTid / globalPid pack the ids as NVIDIA documents them
// (docs.nvidia.com/nsight-systems, "Serialized process and thread
// identifiers": PID = globalTid / 0x1000000 % 0x1000000, TID = globalTid %
// 0x1000000), i.e. bits 0-23 = TID, bits 24-47 = PID, bits 48-63 = the
// hardware/VM id (ignored). Times are ns since the session start.
//
// Tables are created lazily by nsys and columns vary between versions, so a
// missing table is skipped and a missing column reads as NULL (0); only a
// database with none of the tables above is rejected.
#pragma once

#include <string>

#include "common/status.h"
#include "importers/import_stats.h"

namespace stepscope {

class TraceWriter;

inline uint32_t NsysTid(int64_t global_tid) { return static_cast<uint32_t>(global_tid & 0xFFFFFF); }
inline uint32_t NsysPid(int64_t global_id) {
  return static_cast<uint32_t>((global_id >> 24) & 0xFFFFFF);
}

Status ImportNsysSqlite(const std::string& path, TraceWriter* w, ImportStats* stats);

}  // namespace stepscope
