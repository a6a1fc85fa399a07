// Writing several named tables at once, the way every command that prints
// rows does (docs/cli.md, "The convention"):
//
// * text: a titled section per table;
// * CSV: one table alone, or, for several, sections headed "# name";
// * JSON: always one shape, an object of named tables:
//   {"name": [{"column": value, ...}, ...], ...}, whatever the number of
//   tables or traces.
//
// With -o FILE the same bytes go to FILE instead of stdout. Where one file
// cannot hold them (CSV of several tables, or -o ending in '/'), each table
// goes to its own file, BASE_<name>.<csv|json|txt> (BASE: FILE without its
// extension; DIR/<name>.<ext> for -o DIR/), as nsys stats names them. An
// existing file is only replaced with -f; files are written atomically.
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

std::string RenderTables(const std::vector<NamedTable>& tables, OutputFormat format,
                         TimeUnit unit = TimeUnit::kNs);

// Where the output goes and how it looks: the -o, -f, --format and
// --timeunit flags.
struct OutputSpec {
  OutputFormat format = OutputFormat::kText;
  TimeUnit unit = TimeUnit::kNs;
  std::string path;  // empty: stdout
  bool force = false;
};

// The files WriteTables would write for these tables (one, or one per table).
std::vector<std::string> OutputPaths(const std::vector<NamedTable>& tables, const OutputSpec& spec);
// Writes the tables to spec.path (see above); `prefix` goes before the
// rendered text in a single-file output (a command's heading line). Refuses,
// before writing anything, when a target exists and spec.force is false.
// Returns the paths written.
StatusOr<std::vector<std::string>> WriteTables(const std::vector<NamedTable>& tables,
                                               const OutputSpec& spec,
                                               const std::string& prefix = "");
// The one error for an existing output without -f (InvalidInput), or OK.
Status CheckOverwrite(const std::string& path, bool force);

}  // namespace stepscope
