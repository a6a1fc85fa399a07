#include "common/table.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "common/json_writer.h"
#include "common/strings.h"

namespace stepscope {

bool ParseOutputFormat(const std::string& s, OutputFormat* out) {
  if (s == "text" || s == "table") {
    *out = OutputFormat::kText;
  } else if (s == "csv") {
    *out = OutputFormat::kCsv;
  } else if (s == "json") {
    *out = OutputFormat::kJson;
  } else {
    return false;
  }
  return true;
}

bool ParseTimeUnit(const std::string& s, TimeUnit* out) {
  if (s == "ns") {
    *out = TimeUnit::kNs;
  } else if (s == "us") {
    *out = TimeUnit::kUs;
  } else if (s == "ms") {
    *out = TimeUnit::kMs;
  } else if (s == "s") {
    *out = TimeUnit::kS;
  } else {
    return false;
  }
  return true;
}

const char* TimeUnitName(TimeUnit u) {
  switch (u) {
    case TimeUnit::kUs:
      return "us";
    case TimeUnit::kMs:
      return "ms";
    case TimeUnit::kS:
      return "s";
    case TimeUnit::kNs:
      break;
  }
  return "ns";
}

std::string ShortestNumber(double v) {
  if (!std::isfinite(v)) return "";
  // Plain decimals ("200000", "0.5") over exponents where they stay short;
  // either way the shortest digits that read back as v.
  char buf[400];
  const double a = std::fabs(v);
  auto r = a == 0 || (a >= 1e-6 && a < 1e21)
               ? std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed)
               : std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

const std::string* Cell::TextRef() const {
  if (auto* s = std::get_if<std::string>(&value)) return s;
  if (auto* p = std::get_if<SharedText>(&value)) return *p ? p->get() : nullptr;
  return nullptr;
}

std::string Cell::Text() const {
  if (const std::string* s = TextRef()) return *s;
  if (std::holds_alternative<SharedText>(value)) return "";
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  double d = std::get<double>(value);
  if (!std::isfinite(d)) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, d);
  return buf;
}

void Table::PrependColumn(Column c, const Cell& value) {
  columns_.insert(columns_.begin(), std::move(c));
  for (auto& row : rows_) row.insert(row.begin(), value);
}

void Table::UseTitlesAsNames() {
  for (Column& c : columns_) {
    if (!c.title.empty()) c.name = c.title;
  }
}

std::string Table::Render(OutputFormat format, TimeUnit unit) const {
  switch (format) {
    case OutputFormat::kCsv:
      return RenderCsv();
    case OutputFormat::kJson:
      return RenderJson();
    case OutputFormat::kText:
      break;
  }
  return RenderText(unit);
}

namespace {

bool IsNsColumn(const Column& c) { return EndsWith(c.name, "_ns"); }

// The title of a nanosecond column in `unit`: "(ns)" replaced, else appended.
std::string UnitTitle(const std::string& title, TimeUnit unit) {
  const std::string u = std::string("(") + TimeUnitName(unit) + ")";
  const size_t at = title.find("(ns)");
  if (at != std::string::npos) return title.substr(0, at) + u + title.substr(at + 4);
  return title + " " + u;
}

// A nanosecond cell in `unit`: integers stay exact in ns; other units show
// 3 decimals (6 for seconds).
std::string UnitText(const Cell& cell, TimeUnit unit) {
  double v = 0;
  if (auto* i = std::get_if<int64_t>(&cell.value)) {
    if (unit == TimeUnit::kNs) return std::to_string(*i);
    v = static_cast<double>(*i);
  } else if (auto* d = std::get_if<double>(&cell.value)) {
    if (unit == TimeUnit::kNs) return cell.Text();
    v = *d;
  } else {
    return cell.Text();
  }
  if (!std::isfinite(v)) return "";
  const double scale = unit == TimeUnit::kUs ? 1e3 : unit == TimeUnit::kMs ? 1e6 : 1e9;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", unit == TimeUnit::kS ? 6 : 3, v / scale);
  return buf;
}

std::string Shortened(std::string s, size_t max) {
  if (max > 3 && s.size() > max) {
    size_t cut = max - 3;
    // Not inside a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

}  // namespace

std::string Table::RenderText(TimeUnit unit) const {
  const size_t n = columns_.size();
  std::vector<size_t> width(n, 0);
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows_.size());
  std::vector<std::string> titles;
  for (size_t c = 0; c < n; ++c) {
    std::string t = columns_[c].title.empty() ? columns_[c].name : columns_[c].title;
    if (unit != TimeUnit::kNs && IsNsColumn(columns_[c])) t = UnitTitle(t, unit);
    titles.push_back(PrintableText(t));
    width[c] = titles.back().size();
  }
  for (const auto& row : rows_) {
    std::vector<std::string> line;
    for (size_t c = 0; c < n; ++c) {
      // Names come from traces: no escape sequence reaches the terminal.
      std::string v;
      const size_t max = columns_[c].text_max_width;
      if (c < row.size() && max > 0 && row[c].TextRef() != nullptr) {
        // Only the head of a long text is shown: escape that much, not all
        // of it (escaping never shortens text).
        const std::string& raw = *row[c].TextRef();
        v = PrintableText(raw.size() > 2 * max + 8 ? raw.substr(0, 2 * max + 8) : raw);
      } else if (c < row.size()) {
        v = PrintableText(IsNsColumn(columns_[c]) ? UnitText(row[c], unit) : row[c].Text());
      }
      line.push_back(Shortened(std::move(v), columns_[c].text_max_width));
      width[c] = std::max(width[c], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  auto emit_line = [&](const std::vector<std::string>& line, std::string* out) {
    std::string s;
    for (size_t c = 0; c < n; ++c) {
      const std::string& v = line[c];
      size_t pad = width[c] - std::min(width[c], v.size());
      bool last = c + 1 == n;
      if (columns_[c].right_align) {
        s.append(pad, ' ');
        s.append(v);
      } else {
        s.append(v);
        if (!last) s.append(pad, ' ');
      }
      if (!last) s.append("  ");
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out->append(s);
    out->push_back('\n');
  };
  std::string out;
  std::vector<std::string> rule;
  for (size_t c = 0; c < n; ++c) rule.push_back(std::string(width[c], '-'));
  emit_line(titles, &out);
  emit_line(rule, &out);
  for (const auto& line : cells) emit_line(line, &out);
  return out;
}

namespace {
// Valid UTF-8 without control characters other than the quoted newlines.
std::string CsvQuote(const std::string& raw) {
  std::string s = ValidUtf8(raw);
  for (char& ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7F) ch = '?';
  }
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out.push_back('"');
    out.push_back(ch);
  }
  out.push_back('"');
  return out;
}
}  // namespace

std::string Table::RenderCsv() const {
  std::string out;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c) out.push_back(',');
    out.append(CsvQuote(columns_[c].name));
  }
  out.push_back('\n');
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c) out.push_back(',');
      if (c < row.size()) {
        const Cell& cell = row[c];
        if (auto* d = std::get_if<double>(&cell.value)) {
          out.append(ShortestNumber(*d));
        } else {
          out.append(CsvQuote(cell.Text()));
        }
      }
    }
    out.push_back('\n');
  }
  return out;
}

std::string Table::RenderJson() const {
  std::string out = "[";
  for (size_t r = 0; r < rows_.size(); ++r) {
    out.append(r ? ",\n {" : "\n {");
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c) out.append(", ");
      out.append(JsonQuote(columns_[c].name));
      out.append(": ");
      const Cell& cell = c < rows_[r].size() ? rows_[r][c] : Cell("");
      if (const std::string* s = cell.TextRef()) {
        out.append(JsonQuote(*s));
      } else if (std::holds_alternative<SharedText>(cell.value)) {
        out.append("\"\"");
      } else if (auto* i = std::get_if<int64_t>(&cell.value)) {
        out.append(std::to_string(*i));
      } else {
        double d = std::get<double>(cell.value);
        if (std::isfinite(d)) {
          out.append(ShortestNumber(d));
        } else {
          out.append("null");
        }
      }
    }
    out.append("}");
  }
  out.append(rows_.empty() ? "]\n" : "\n]\n");
  return out;
}

}  // namespace stepscope
