// Typed reads of a trace being written, for an importer's second pass over
// rows it already wrote (importers/kineto_host.cc: the Python stacks of the
// CUDA API calls, from the python_function ranges around them).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stepscope {

// NVTX rows of domain `domain_id` by (tid, start_ns, end_ns DESC, id).
struct NvtxSpanRow {
  int64_t tid, start_ns, end_ns, name_id;
};
StatusOr<std::vector<NvtxSpanRow>> LoadNvtxSpansInDomain(sqlite3* db, int64_t domain_id);

// strings.value of `id`; "" when absent.
StatusOr<std::string> LoadStringValue(sqlite3* db, int64_t id);

// API calls by (tid, start_ns, id).
struct ApiCallRow {
  int64_t tid, start_ns, correlation;
};
StatusOr<std::vector<ApiCallRow>> LoadApiCallsByThread(sqlite3* db);

// The largest frames.id and callsites.id written so far (0 when none).
StatusOr<std::pair<int64_t, int64_t>> MaxFrameAndCallsiteIds(sqlite3* db);

}  // namespace stepscope
