// Lookups in a trace's strings table by value, for code that writes into an
// existing trace outside TraceWriter (which interns in memory) and readers
// that look a name up.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace stepscope {

// strings.id of `value` (the first row holding it), -1 when absent.
StatusOr<int64_t> FindStringId(sqlite3* db, std::string_view value);

// strings.id of `value`, added to the table when absent; 0 for "".
StatusOr<int64_t> InternStringRow(sqlite3* db, std::string_view value);

}  // namespace stepscope
