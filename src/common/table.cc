#include "common/table.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

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

std::string Cell::Text() const {
  if (auto* s = std::get_if<std::string>(&value)) return *s;
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

std::string Table::Render(OutputFormat format) const {
  switch (format) {
    case OutputFormat::kCsv:
      return RenderCsv();
    case OutputFormat::kJson:
      return RenderJson();
    case OutputFormat::kText:
      break;
  }
  return RenderText();
}

std::string Table::RenderText() const {
  const size_t n = columns_.size();
  std::vector<size_t> width(n, 0);
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows_.size());
  for (size_t c = 0; c < n; ++c) {
    const std::string& t = columns_[c].title.empty() ? columns_[c].name : columns_[c].title;
    width[c] = PrintableText(t).size();
  }
  for (const auto& row : rows_) {
    std::vector<std::string> line;
    for (size_t c = 0; c < n; ++c) {
      // Names come from traces: no escape sequence reaches the terminal.
      line.push_back(c < row.size() ? PrintableText(row[c].Text()) : "");
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
  std::vector<std::string> header;
  std::vector<std::string> rule;
  for (size_t c = 0; c < n; ++c) {
    header.push_back(
        PrintableText(columns_[c].title.empty() ? columns_[c].name : columns_[c].title));
    rule.push_back(std::string(width[c], '-'));
  }
  emit_line(header, &out);
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
          char buf[64];
          std::snprintf(buf, sizeof(buf), "%.*f", std::max(cell.decimals, 3), *d);
          out.append(std::isfinite(*d) ? buf : "");
        } else {
          out.append(CsvQuote(cell.Text()));
        }
      }
    }
    out.push_back('\n');
  }
  return out;
}

std::string JsonQuote(const std::string& raw) {
  const std::string s = ValidUtf8(raw);  // JSON text is UTF-8
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '<':
        out.append("\\u003c");
        break;  // safe to inline in HTML <script>
      case '>':
        out.append("\\u003e");
        break;
      case '&':
        out.append("\\u0026");
        break;
      default:
        if (ch < 0x20 || ch == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
          out.append(buf);
        } else {
          out.push_back(static_cast<char>(ch));
        }
    }
  }
  out.push_back('"');
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
      if (auto* s = std::get_if<std::string>(&cell.value)) {
        out.append(JsonQuote(*s));
      } else if (auto* i = std::get_if<int64_t>(&cell.value)) {
        out.append(std::to_string(*i));
      } else {
        double d = std::get<double>(cell.value);
        if (std::isfinite(d)) {
          char buf[64];
          std::snprintf(buf, sizeof(buf), "%.*f", std::max(cell.decimals, 3), d);
          out.append(buf);
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
