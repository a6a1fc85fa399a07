// JSON text out: the one JSON string escaper. Every writer of JSON (tables,
// JsonValue, rank summaries, the Chrome trace export, the HTML report's data)
// writes its strings through it. The reading side is json_reader.h.
//
// Both escapings write JSON that every reader decodes to the same string:
// invalid UTF-8 replaced by U+FFFD, '"', '\\' and the control characters
// escaped. They differ only in the bytes:
//  * kHtmlSafe also writes '<', '>', '&' and DEL as \u escapes, so that the
//    text may sit inside an HTML <script> block (a kernel name cannot end it),
//    and writes U+FFFD as its UTF-8 bytes. stepscope's own JSON output.
//  * kCompact escapes only what JSON requires and writes U+FFFD as "\ufffd":
//    Chrome trace files, whose kernel names are full of '<' and '>'.
#pragma once

#include <string>
#include <string_view>

namespace stepscope {

enum class JsonEscaping { kHtmlSafe, kCompact };

// Appends `s` as a JSON string literal, quotes included.
void AppendJsonString(std::string* out, JsonEscaping escaping, std::string_view s);

// `s` as a JSON string literal (kHtmlSafe).
std::string JsonQuote(std::string_view s);

}  // namespace stepscope
