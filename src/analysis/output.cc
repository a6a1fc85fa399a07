#include "analysis/output.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/file_util.h"
#include "common/json_writer.h"
#include "common/strings.h"

namespace stepscope {

std::string RenderTables(const std::vector<NamedTable>& tables, OutputFormat format,
                         TimeUnit unit) {
  std::string out;
  if (format == OutputFormat::kText) {
    for (size_t i = 0; i < tables.size(); ++i) {
      if (i) out += "\n";
      out += "== " + tables[i].title + " (" + tables[i].name + ") ==\n";
      out += tables[i].table.size() ? tables[i].table.RenderText(unit) : "(no rows)\n";
      if (!tables[i].note.empty()) out += tables[i].note + "\n";
    }
    return out;
  }
  if (format == OutputFormat::kCsv) {
    if (tables.size() == 1) return tables[0].table.RenderCsv();
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
  out += tables.empty() ? "}\n" : "\n}\n";
  return out;
}

namespace {

const char* Extension(OutputFormat format) {
  return format == OutputFormat::kCsv ? ".csv" : format == OutputFormat::kJson ? ".json" : ".txt";
}

bool OneFilePerTable(const std::vector<NamedTable>& tables, const OutputSpec& spec) {
  return EndsWith(spec.path, "/") || (spec.format == OutputFormat::kCsv && tables.size() > 1);
}

}  // namespace

std::vector<std::string> OutputPaths(const std::vector<NamedTable>& tables,
                                     const OutputSpec& spec) {
  if (!OneFilePerTable(tables, spec)) return {spec.path};
  std::string base = spec.path;
  const std::string ext = Extension(spec.format);
  if (EndsWith(base, ext) && base.size() > ext.size() && base[base.size() - ext.size() - 1] != '/')
    base.resize(base.size() - ext.size());
  std::vector<std::string> paths;
  for (const NamedTable& t : tables) {
    paths.push_back(base + (EndsWith(base, "/") ? "" : "_") + t.name + ext);
  }
  return paths;
}

Status CheckOverwrite(const std::string& path, bool force) {
  RETURN_IF_ERROR(CheckNotBeingWritten(path));
  struct stat st;
  if (force || ::stat(path.c_str(), &st) != 0) return OkStatus();
  if (S_ISDIR(st.st_mode)) {
    return InvalidInput(path +
                        " is a directory; give a file name, or end -o with '/' for one "
                        "file per table in it");
  }
  return InvalidInput(path +
                      " exists; pass -f (--force-overwrite) to replace it, or choose "
                      "another -o");
}

StatusOr<std::vector<std::string>> WriteTables(const std::vector<NamedTable>& tables,
                                               const OutputSpec& spec, const std::string& prefix) {
  const std::vector<std::string> paths = OutputPaths(tables, spec);
  if (EndsWith(spec.path, "/")) {
    const std::string dir = spec.path.substr(0, spec.path.size() - 1);
    if (!dir.empty() && ::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return IoError(dir + ": cannot create output directory: " + std::strerror(errno));
    }
  }
  for (const std::string& path : paths) RETURN_IF_ERROR(CheckOverwrite(path, spec.force));
  if (paths.size() == 1 && !OneFilePerTable(tables, spec)) {
    RETURN_IF_ERROR(
        WriteFileAtomic(paths[0], prefix + RenderTables(tables, spec.format, spec.unit)));
    return paths;
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    RETURN_IF_ERROR(WriteFileAtomic(paths[i], RenderTables({tables[i]}, spec.format, spec.unit)));
  }
  return paths;
}

}  // namespace stepscope
