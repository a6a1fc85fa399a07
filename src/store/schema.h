// The trace store's schema, declared once.
//
// Every table of a stepscope trace is described here: its columns, their SQL
// types and units, and their meaning (a record table's columns come from its
// column list in format/record_fields.h). TraceWriter creates the tables from this
// list, and `stepscope schema --markdown` renders docs/schema.md from it (a
// test keeps the two in sync), so the docs cannot drift from the code.
//
// Versioning: kSchemaVersion increases when a table or column changes meaning
// or is removed; adding a table or an index keeps readers of older traces
// working and only bumps kSchemaMinor. Readers accept any trace with the same
// kSchemaVersion.
#pragma once

#include <string>
#include <vector>

namespace stepscope {

inline constexpr int kSchemaVersion = 1;
inline constexpr int kSchemaMinor = 8;

struct ColumnDef {
  const char* name;
  const char* type;  // SQL type: INTEGER, TEXT, REAL, BLOB
  const char* doc;   // meaning and unit
};

struct TableDef {
  const char* name;
  const char* doc;
  std::vector<ColumnDef> columns;
  // Index definitions "name(col, col)": created when the trace is finalized.
  std::vector<const char*> indices;
  bool has_integer_pk = true;  // first column is "id INTEGER PRIMARY KEY" (implicit)
};

struct MetaKeyDef {
  const char* key;
  const char* doc;
};

// An analysis view (schema_views.cc): its SQL, documented columns and example
// queries for docs/schema.md.
struct ViewExample {
  const char* what;
  const char* sql;
};

struct ViewDef {
  const char* name;
  const char* doc;
  std::vector<ColumnDef> columns;
  std::string sql;  // the SELECT, without ';'
  std::vector<ViewExample> examples;
};

const std::vector<TableDef>& SchemaTables();
const std::vector<ViewDef>& SchemaViews();
const std::vector<MetaKeyDef>& SchemaMetaKeys();
const TableDef* FindTable(const std::string& name);

// CREATE TABLE statements (and the enum tables' rows and the views).
std::string SchemaCreateSql();
// The CREATE TABLE IF NOT EXISTS statement of one table (no trailing ';').
std::string CreateTableSql(const TableDef& t);
// CREATE INDEX IF NOT EXISTS statements.
std::string SchemaIndexSql();
// CREATE VIEW IF NOT EXISTS statements of SchemaViews() (part of SchemaCreateSql()).
std::string SchemaViewsSql();
// docs/schema.md, and its section on SchemaViews().
std::string SchemaMarkdown();
std::string SchemaViewsMarkdown();

}  // namespace stepscope
