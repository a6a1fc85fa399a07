#include "common/json_value.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(JsonValue, ParsesScalarsExactly) {
  auto v = ParseJson(
      R"({"a": 1700000000123456789, "b": -5, "c": 2.5, "d": "x\"y\u00e9", "e": [true, null]})");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->Get("a")->AsInt(), 1700000000123456789);  // beyond double precision
  EXPECT_EQ(v->Get("a")->type(), JsonValue::Type::kInt);
  EXPECT_EQ(v->Get("b")->AsInt(), -5);
  EXPECT_DOUBLE_EQ(v->Get("c")->AsDouble(), 2.5);
  EXPECT_EQ(v->Get("d")->AsString(), "x\"y\xc3\xa9");
  ASSERT_EQ(v->Get("e")->items().size(), 2u);
  EXPECT_TRUE(v->Get("e")->items()[0].AsBool());
  EXPECT_TRUE(v->Get("e")->items()[1].is_null());
  EXPECT_EQ(v->Get("missing"), nullptr);
}

TEST(JsonValue, ExtremeIntegers) {
  auto v = ParseJson("[9223372036854775807, -9223372036854775808, 9223372036854775808]");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->items()[0].AsInt(), INT64_MAX);
  EXPECT_EQ(v->items()[1].AsInt(), INT64_MIN);
  EXPECT_EQ(v->items()[2].type(), JsonValue::Type::kDouble);  // out of range: a double
}

TEST(JsonValue, ErrorsNameTheOffset) {
  auto v = ParseJson("{\"a\": [1, 2,, 3]}");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "byte 12: unexpected character, expected a value");
  EXPECT_EQ(ParseJson("").status().message(), "byte 0: unexpected end of input, expected a value");
  EXPECT_EQ(ParseJson("[1] x").status().message(), "byte 4: trailing data after the JSON value");
  EXPECT_EQ(ParseJson("\"abc").status().message(), "byte 4: unterminated string");
  EXPECT_FALSE(ParseJson("01").ok());
  EXPECT_FALSE(ParseJson("-").ok());
  EXPECT_FALSE(ParseJson("1.").ok());
  EXPECT_FALSE(ParseJson("tru").ok());
}

TEST(JsonValue, DepthIsBounded) {
  std::string deep(kMaxJsonDepth + 2, '[');
  deep += std::string(kMaxJsonDepth + 2, ']');
  auto v = ParseJson(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nesting deeper than 64"), std::string::npos);
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(ok).ok());
}

}  // namespace

TEST(JsonEscape, DecodesEveryKindAndSaysWhenMoreInputIsNeeded) {
  auto dec = [](std::string_view in, std::string* out, size_t* used) {
    const char* error = "";
    return DecodeJsonEscape(in, out, used, &error);
  };
  std::string out;
  size_t used = 0;
  EXPECT_EQ(dec("\\n rest", &out, &used), JsonEscape::kOk);
  EXPECT_EQ(out, "\n");
  EXPECT_EQ(used, 2u);
  out.clear();
  EXPECT_EQ(dec("\\u00e9", &out, &used), JsonEscape::kOk);
  EXPECT_EQ(out, "\xc3\xa9");
  EXPECT_EQ(used, 6u);
  out.clear();  // a surrogate pair: U+1F600
  EXPECT_EQ(dec("\\ud83d\\ude00\"", &out, &used), JsonEscape::kOk);
  EXPECT_EQ(out, "\xf0\x9f\x98\x80");
  EXPECT_EQ(used, 12u);
  out.clear();  // lone surrogates: U+FFFD
  EXPECT_EQ(dec("\\ud83dx", &out, &used), JsonEscape::kOk);
  EXPECT_EQ(dec("\\ude00", &out, &used), JsonEscape::kOk);
  EXPECT_EQ(out, "\xef\xbf\xbd\xef\xbf\xbd");
  // Cut short: inside the escape, or after a high surrogate a low one may follow.
  EXPECT_EQ(dec("\\", &out, &used), JsonEscape::kIncomplete);
  EXPECT_EQ(dec("\\u00", &out, &used), JsonEscape::kIncomplete);
  EXPECT_EQ(dec("\\ud83d", &out, &used), JsonEscape::kIncomplete);
  EXPECT_EQ(dec("\\ud83d\\u", &out, &used), JsonEscape::kIncomplete);
  EXPECT_EQ(dec("\\x", &out, &used), JsonEscape::kBad);
  EXPECT_EQ(used, 1u);
  EXPECT_EQ(dec("\\u12g4", &out, &used), JsonEscape::kBad);
  // The DOM parser uses it: the same string either way.
  auto v = ParseJson("\"a\\u00e9\\ud83d\\ude00\\t\"");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->AsString(), "a\xc3\xa9\xf0\x9f\x98\x80\t");
  EXPECT_FALSE(ParseJson("\"\\q\"").ok());
}

}  // namespace stepscope
