#include "analysis/output.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/file_util.h"

namespace stepscope {

std::string RenderTables(const std::vector<NamedTable>& tables, OutputFormat format) {
  std::string out;
  if (format == OutputFormat::kText) {
    for (size_t i = 0; i < tables.size(); ++i) {
      if (i) out += "\n";
      out += "== " + tables[i].title + " (" + tables[i].name + ") ==\n";
      out += tables[i].table.size() ? tables[i].table.RenderText() : "(no rows)\n";
      if (!tables[i].note.empty()) out += tables[i].note + "\n";
    }
    return out;
  }
  if (tables.size() == 1) return tables[0].table.Render(format);
  if (format == OutputFormat::kCsv) {
    for (size_t i = 0; i < tables.size(); ++i) {
      if (i) out += "\n";
      out += "# " + tables[i].name + "\n" + tables[i].table.RenderCsv();
    }
    return out;
  }
  out = "{";
  for (size_t i = 0; i < tables.size(); ++i) {
    std::string body = tables[i].table.RenderJson();
    while (!body.empty() && body.back() == '\n') body.pop_back();
    out += (i ? ",\n" : "\n") + JsonQuote(tables[i].name) + ": " + body;
  }
  out += "\n}\n";
  return out;
}

StatusOr<std::vector<std::string>> WriteTables(const std::vector<NamedTable>& tables,
                                               OutputFormat format, const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return IoError(dir + ": cannot create output directory: " + std::strerror(errno));
  }
  const char* ext = format == OutputFormat::kCsv    ? ".csv"
                    : format == OutputFormat::kJson ? ".json"
                                                    : ".txt";
  std::vector<std::string> paths;
  for (const NamedTable& t : tables) {
    const std::string path = dir + "/" + t.name + ext;
    RETURN_IF_ERROR(WriteFileAtomic(path, t.table.Render(format)));
    paths.push_back(path);
  }
  return paths;
}

}  // namespace stepscope
