#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "store/schema.h"

namespace stepscope {

int RunSchema(int argc, char** argv) {
  ArgParser p("schema", "[--markdown | --sql]",
              "Print the trace schema: the SQL of every table (default) or the Markdown of "
              "docs/schema.md.");
  p.Switch("--markdown", "print docs/schema.md");
  p.Switch("--sql", "print CREATE statements (default)");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.Has("--markdown")) {
    std::fputs(SchemaMarkdown().c_str(), stdout);
  } else {
    std::fputs(SchemaCreateSql().c_str(), stdout);
    std::fputs(SchemaIndexSql().c_str(), stdout);
  }
  return 0;
}

}  // namespace stepscope
