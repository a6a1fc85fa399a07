#include "common/json_writer.h"

#include <cstdint>
#include <cstdio>

#include "common/strings.h"

namespace stepscope {
namespace {

void AppendAscii(std::string* out, bool html, unsigned char c) {
  switch (c) {
    case '"':
      out->append("\\\"");
      return;
    case '\\':
      out->append("\\\\");
      return;
    case '\n':
      out->append("\\n");
      return;
    case '\r':
      out->append("\\r");
      return;
    case '\t':
      out->append("\\t");
      return;
    default:
      break;
  }
  const bool html_special = c == '<' || c == '>' || c == '&' || c == 0x7F;
  if (c < 0x20 || (html && html_special)) {
    char b[8];
    std::snprintf(b, sizeof(b), "\\u%04x", c);
    out->append(b);
  } else {
    out->push_back(static_cast<char>(c));
  }
}

}  // namespace

void AppendJsonString(std::string* out, JsonEscaping escaping, std::string_view s) {
  const bool html = escaping == JsonEscaping::kHtmlSafe;
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(s, i, &cp);
    if (n == 0) {
      if (html) {
        AppendUtf8(out, 0xFFFD);
      } else {
        out->append("\\ufffd");
      }
      ++i;
    } else if (n == 1) {
      AppendAscii(out, html, static_cast<unsigned char>(s[i]));
      ++i;
    } else {
      out->append(s.substr(i, n));
      i += n;
    }
  }
  out->push_back('"');
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonString(&out, JsonEscaping::kHtmlSafe, s);
  return out;
}

}  // namespace stepscope
