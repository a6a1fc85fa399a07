#include "common/json_writer.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

// The same text both ways: a control character, HTML specials, DEL, a valid
// two-byte sequence, an ill-formed byte and a cut-short sequence.
const std::string kText("a\x01<b>&\x7f\xc3\xa9\xff\xe2\x82\"\\", 14);

TEST(JsonWriter, HtmlSafeEscapesWhatCouldEndAScriptBlock) {
  EXPECT_EQ(JsonQuote(kText),
            "\"a\\u0001\\u003cb\\u003e\\u0026\\u007f\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
            "\\\"\\\\\"");
}

TEST(JsonWriter, CompactEscapesOnlyWhatJsonRequires) {
  std::string out;
  AppendJsonString(&out, JsonEscaping::kCompact, kText);
  EXPECT_EQ(out, "\"a\\u0001<b>&\x7f\xc3\xa9\\ufffd\\ufffd\\ufffd\\\"\\\\\"");
}

TEST(JsonWriter, LeadBytesPastU10FFFFAreIllFormed) {
  std::string out;
  AppendJsonString(&out, JsonEscaping::kCompact, std::string("\xf5\x80\x80", 3));
  EXPECT_EQ(out, "\"\\ufffd\\ufffd\\ufffd\"");
}

}  // namespace
}  // namespace stepscope
