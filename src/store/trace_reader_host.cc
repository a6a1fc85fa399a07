// TraceReader's loaders of the host model (schema 1.5): frames, callsites,
// samples, thread_sched, osrt, api_callsite. A trace of an older minor has
// these as empty TEMP tables (AdaptOlderLayout), so the loaders return empty
// vectors for it.
#include <algorithm>

#include "store/trace_reader.h"

namespace stepscope {
namespace {

int64_t TimeNs(int64_t v) { return std::clamp<int64_t>(v, 0, int64_t{1} << 62); }

ThreadState StateOf(int64_t v) {
  return v >= 0 && v <= kThreadStateMax ? static_cast<ThreadState>(v) : ThreadState::kUnknown;
}

uint32_t U32(int64_t v) { return v < 0 || v > 0xffffffffLL ? 0 : static_cast<uint32_t>(v); }

template <typename T, typename Fill>
StatusOr<std::vector<T>> Load(sqlite3* db, const char* sql, Fill fill) {
  ASSIGN_OR_RETURN(Statement st, Prepare(db, sql));
  std::vector<T> out;
  while (st.Step()) {
    T r{};
    fill(st, r);
    out.push_back(r);
  }
  if (!st.ok()) return st.status();
  return out;
}

}  // namespace

StatusOr<std::vector<FrameRecord>> TraceReader::Frames() const {
  return Load<FrameRecord>(db_, "SELECT id,kind,function_id,file_id,line FROM frames ORDER BY id",
                           [](const Statement& s, FrameRecord& r) {
                             r.id = U32(s.Int(0));
                             const int64_t k = s.Int(1);
                             r.kind = static_cast<uint8_t>(k >= 0 && k <= 3 ? k : 0);
                             r.function = U32(s.Int(2));
                             r.file = U32(s.Int(3));
                             r.line =
                                 static_cast<int32_t>(std::clamp<int64_t>(s.Int(4), 0, 1 << 30));
                           });
}

StatusOr<std::vector<CallsiteRecord>> TraceReader::Callsites() const {
  return Load<CallsiteRecord>(db_, "SELECT id,parent_id,frame_id,depth FROM callsites ORDER BY id",
                              [](const Statement& s, CallsiteRecord& r) {
                                r.id = U32(s.Int(0));
                                r.parent = U32(s.Int(1));
                                r.frame = U32(s.Int(2));
                                r.depth =
                                    static_cast<uint16_t>(std::clamp<int64_t>(s.Int(3), 0, 0xffff));
                              });
}

StatusOr<std::vector<SampleRecord>> TraceReader::Samples() const {
  return Load<SampleRecord>(
      db_,
      "SELECT ts_ns,tid,state,wait_id,callsite_id,COALESCE(cpu_ns,-1) FROM samples "
      "ORDER BY tid, ts_ns, id",
      [](const Statement& s, SampleRecord& r) {
        r.ts_ns = TimeNs(s.Int(0));
        r.tid = U32(s.Int(1));
        r.state = StateOf(s.Int(2));
        r.wait = U32(s.Int(3));
        r.callsite = U32(s.Int(4));
        r.cpu_ns = std::max<int64_t>(s.Int(5), -1);
      });
}

StatusOr<std::vector<SchedRecord>> TraceReader::Sched() const {
  return Load<SchedRecord>(
      db_, "SELECT start_ns,end_ns,tid,cpu,state FROM thread_sched ORDER BY start_ns, id",
      [](const Statement& s, SchedRecord& r) {
        r.start_ns = TimeNs(s.Int(0));
        r.end_ns = std::max(r.start_ns, TimeNs(s.Int(1)));
        r.tid = U32(s.Int(2));
        r.cpu = static_cast<int32_t>(std::clamp<int64_t>(s.Int(3), -1, 1 << 30));
        r.state = StateOf(s.Int(4));
      });
}

StatusOr<std::vector<OsrtRecord>> TraceReader::Osrt() const {
  return Load<OsrtRecord>(db_,
                          "SELECT start_ns,end_ns,tid,name_id,detail_id,callsite_id,source "
                          "FROM osrt ORDER BY start_ns, id",
                          [](const Statement& s, OsrtRecord& r) {
                            r.start_ns = TimeNs(s.Int(0));
                            r.end_ns = std::max(r.start_ns, TimeNs(s.Int(1)));
                            r.tid = U32(s.Int(2));
                            r.name = U32(s.Int(3));
                            r.detail = U32(s.Int(4));
                            r.callsite = U32(s.Int(5));
                            r.source = static_cast<uint8_t>(std::clamp<int64_t>(s.Int(6), 0, 3));
                          });
}

StatusOr<std::vector<ApiCallsiteRecord>> TraceReader::ApiCallsites() const {
  return Load<ApiCallsiteRecord>(
      db_, "SELECT correlation,callsite_id FROM api_callsite ORDER BY correlation, rowid",
      [](const Statement& s, ApiCallsiteRecord& r) {
        r.correlation = U32(s.Int(0));
        r.callsite = U32(s.Int(1));
      });
}

}  // namespace stepscope
