// Writing several named tables at once, the way every analysis command does:
// text shows a titled section per table; CSV and JSON print one table alone,
// or, for several, CSV sections headed "# name" and one JSON object keyed by
// name. With an output directory each table goes to DIR/<name>.<txt|csv|json>,
// written atomically (never a half-written file).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/table.h"

namespace stepscope {

struct NamedTable {
  std::string name;   // machine name: file name, JSON key
  std::string title;  // text heading
  Table table;
  std::string note;  // text only: a line under the table (empty: none)
};

std::string RenderTables(const std::vector<NamedTable>& tables, OutputFormat format);
// Writes one file per table into dir (created if missing); returns the paths.
StatusOr<std::vector<std::string>> WriteTables(const std::vector<NamedTable>& tables,
                                               OutputFormat format, const std::string& dir);

}  // namespace stepscope
