// TraceReader's loaders of the host model (schema 1.5): frames, callsites,
// samples, thread_sched, osrt, api_callsite. A trace of an older minor has
// these as empty TEMP tables (AdaptOlderLayout), so the loaders return empty
// vectors for it.
#include <algorithm>

#include "store/record_sql.h"
#include "store/trace_reader.h"

namespace stepscope {

StatusOr<std::vector<FrameRecord>> TraceReader::Frames() const {
  return LoadRecords<FrameRecord>(db_, " ORDER BY id");
}

StatusOr<std::vector<CallsiteRecord>> TraceReader::Callsites() const {
  return LoadRecords<CallsiteRecord>(db_, " ORDER BY id");
}

StatusOr<std::vector<SampleRecord>> TraceReader::Samples() const {
  return LoadRecords<SampleRecord>(db_, " ORDER BY tid, ts_ns, id");
}

StatusOr<std::vector<NativeSampleRecord>> TraceReader::NativeSamples() const {
  return LoadRecords<NativeSampleRecord>(db_, " ORDER BY tid, ts_ns, id");
}

// An interval ends no earlier than it starts.
StatusOr<std::vector<SchedRecord>> TraceReader::Sched() const {
  return LoadRecords<SchedRecord>(
      db_, " ORDER BY start_ns, id",
      [](const Statement&, SchedRecord& r) { r.end_ns = std::max(r.start_ns, r.end_ns); });
}

StatusOr<std::vector<OsrtRecord>> TraceReader::Osrt() const {
  return LoadRecords<OsrtRecord>(
      db_, " ORDER BY start_ns, id",
      [](const Statement&, OsrtRecord& r) { r.end_ns = std::max(r.start_ns, r.end_ns); });
}

StatusOr<std::vector<ApiCallsiteRecord>> TraceReader::ApiCallsites() const {
  return LoadRecords<ApiCallsiteRecord>(db_, " ORDER BY correlation, rowid");
}

}  // namespace stepscope
