#include "roofline/json.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(Json, ParsesEveryType) {
  auto v = ParseJson(R"( {"a": 1.5e3, "b": [true, false, null], "c": "x\"y\\n\u00e9", "d": {}} )");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_DOUBLE_EQ(v->NumberOr("a", 0), 1500.0);
  const JsonValue* b = v->Find("b");
  ASSERT_TRUE(b && b->is_array());
  ASSERT_EQ(b->items().size(), 3u);
  EXPECT_TRUE(b->items()[0].bool_value());
  EXPECT_FALSE(b->items()[1].bool_value());
  EXPECT_TRUE(b->items()[2].is_null());
  EXPECT_EQ(v->StringOr("c", ""), "x\"y\\n\xc3\xa9");
  EXPECT_TRUE(v->Find("d")->is_object());
  EXPECT_EQ(v->Find("zz"), nullptr);
}

TEST(Json, DecodesSurrogatePairsAndReplacesLoneOnes) {
  auto v = ParseJson(R"(["\ud83d\ude00", "\ud800x"])");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->items()[0].str(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(v->items()[1].str(), "\xef\xbf\xbdx");
}

TEST(Json, ErrorsNameTheOffset) {
  auto v = ParseJson("{\"a\": [1, 2,, 3]}");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "offset 12: unexpected character ','");
  EXPECT_EQ(ParseJson("[1] x").status().message(),
            "offset 4: unexpected data after the JSON value");
  EXPECT_EQ(ParseJson("\"abc").status().message(), "offset 4: unterminated string");
  EXPECT_EQ(ParseJson("01").status().message(), "offset 1: unexpected data after the JSON value");
  EXPECT_EQ(ParseJson("").status().message(), "offset 0: unexpected end of input");
  EXPECT_EQ(ParseJson("1.").status().message(), "offset 2: invalid number: no digits after '.'");
}

TEST(Json, DepthIsLimited) {
  std::string deep(65, '[');
  deep += std::string(65, ']');
  EXPECT_TRUE(ParseJson(deep).ok());
  std::string deeper(70, '[');
  deeper += std::string(70, ']');
  auto v = ParseJson(deeper);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nesting deeper than 64"), std::string::npos);
}

TEST(Json, DumpRoundTripsNumbersExactly) {
  JsonValue o = JsonValue::Object();
  o.Set("big", JsonValue::Number(137438953472.0));
  o.Set("frac", JsonValue::Number(0.1));
  o.Set("third", JsonValue::Number(1.0 / 3.0));
  o.Set("s", JsonValue::String("a\"b"));
  std::string text = o.Dump();
  EXPECT_EQ(text.substr(0, 31), "{\"big\":137438953472,\"frac\":0.1,");
  auto back = ParseJson(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->NumberOr("third", 0), 1.0 / 3.0);
  EXPECT_EQ(back->StringOr("s", ""), "a\"b");
  EXPECT_EQ(JsonNumber(1.0 / 0.0), "null");
}

}  // namespace
}  // namespace stepscope
