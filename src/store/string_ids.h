// Lookups in a trace's strings table by value, for readers that look a name
// up without loading the whole table.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace stepscope {

// strings.id of `value` (the first row holding it), -1 when absent.
StatusOr<int64_t> FindStringId(sqlite3* db, std::string_view value);

}  // namespace stepscope
