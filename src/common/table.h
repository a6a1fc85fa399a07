// Table: the one output shape of every recipe and command that prints rows.
//
// A Table has named columns (with a unit and alignment) and rows of cells. It
// renders as an aligned text table (the terminal default), CSV or JSON, so that
// every recipe gets `--format csv|json` for free. Numeric cells keep their raw
// value for CSV/JSON (doubles in the shortest form that reads back to the same
// value, names never shortened) and a formatted string for the text view.
// Columns whose machine name ends in "_ns" hold nanoseconds: the text view
// shows them in the --timeunit (ns by default); CSV/JSON keep nanoseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace stepscope {

enum class OutputFormat { kText, kCsv, kJson };
bool ParseOutputFormat(const std::string& s, OutputFormat* out);

// The unit of "_ns" columns in text tables (--timeunit).
enum class TimeUnit { kNs, kUs, kMs, kS };
bool ParseTimeUnit(const std::string& s, TimeUnit* out);
const char* TimeUnitName(TimeUnit u);

// A double in the shortest text that reads back as the same value ("0.1",
// "200000", "1e-07": plain decimals from 1e-6 to 1e21); "" for NaN and
// infinities.
std::string ShortestNumber(double v);

struct Column {
  std::string name;   // machine name, used as CSV header and JSON key
  std::string title;  // header in the text view (defaults to name)
  bool right_align = false;
  // Text view only: longer values are cut to this width with "..." (0: never).
  size_t text_max_width = 0;
};

// Text view width of a column of names from a trace (NVTX ranges, kernels)
// whose rows may repeat one long name: each row shows at most this much.
inline constexpr size_t kNameTextMaxWidth = 200;

// Text shared by many cells (one long name on every row): held once.
using SharedText = std::shared_ptr<const std::string>;

// A cell: text, an integer, a double shown with `decimals` digits, or
// shared text.
struct Cell {
  std::variant<std::string, int64_t, double, SharedText> value;
  int decimals = 2;
  Cell(std::string s) : value(std::move(s)) {}          // NOLINT
  Cell(const char* s) : value(std::string(s)) {}        // NOLINT
  Cell(int64_t v) : value(v) {}                         // NOLINT
  Cell(int v) : value(static_cast<int64_t>(v)) {}       // NOLINT
  Cell(uint32_t v) : value(static_cast<int64_t>(v)) {}  // NOLINT
  Cell(uint64_t v) : value(static_cast<int64_t>(v)) {}  // NOLINT
  Cell(double v, int d = 2) : value(v), decimals(d) {}  // NOLINT
  Cell(SharedText s) : value(std::move(s)) {}           // NOLINT
  std::string Text() const;
  // The text of a text cell (string or shared), else nullptr.
  const std::string* TextRef() const;
};

class Table {
 public:
  Table() = default;
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void AddColumn(Column c) { columns_.push_back(std::move(c)); }
  void AddRow(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  // Inserts a leading column with the same value in every row (e.g. rank/file).
  void PrependColumn(Column c, const Cell& value);
  // CSV headers and JSON keys become the columns' titles (`stats --nsys-names`).
  // Only for CSV/JSON: the text view reads the unit from a name ending in "_ns".
  void UseTitlesAsNames();

  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }

  std::string Render(OutputFormat format, TimeUnit unit = TimeUnit::kNs) const;
  std::string RenderText(TimeUnit unit = TimeUnit::kNs) const;
  std::string RenderCsv() const;
  std::string RenderJson() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace stepscope
