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
  p.FileOutput("FILE", "write to FILE instead of stdout");
  p.Epilog(
      "examples:\n"
      "  stepscope schema | less\n"
      "  stepscope schema --markdown -o docs/schema.md -f   # regenerate docs/schema.md");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  if (p.Has("--markdown")) return EmitText("schema", p, SchemaMarkdown());
  return EmitText("schema", p, SchemaCreateSql() + SchemaIndexSql());
}

}  // namespace stepscope
