#include "importers/json_value.h"

#include <gtest/gtest.h>

#include <string>

namespace stepscope {
namespace {

JsonParseOutcome ParseAll(JsonValueParser* p, const std::string& s, size_t* consumed = nullptr) {
  size_t c = 0;
  JsonParseOutcome r = p->Parse(s.data(), s.data() + s.size(), &c);
  if (consumed) *consumed = c;
  return r;
}

TEST(JsonValue, ParsesAnEventIntoNodes) {
  JsonValueParser p;
  std::string s =
      R"( {"ph": "X", "ts": 1.5, "args": {"grid": [1, 2, 3], "ok": true, "n": null}} ,)";
  size_t consumed;
  ASSERT_EQ(ParseAll(&p, s, &consumed), JsonParseOutcome::kOk);
  EXPECT_EQ(s[consumed - 1], '}');
  const JsonNode& root = p.root();
  ASSERT_EQ(root.type, JsonType::kObject);
  EXPECT_EQ(p.Find(root, "ph")->text, "X");
  EXPECT_EQ(p.Find(root, "ts")->type, JsonType::kNumber);
  EXPECT_EQ(p.Find(root, "ts")->text, "1.5");
  const JsonNode* args = p.Find(root, "args");
  ASSERT_NE(args, nullptr);
  EXPECT_EQ(args->text, R"({"grid": [1, 2, 3], "ok": true, "n": null})");
  const JsonNode* grid = p.Find(*args, "grid");
  ASSERT_EQ(grid->type, JsonType::kArray);
  std::vector<int64_t> v;
  for (uint32_t i = grid->first_child; i != 0; i = p.node(i).next) {
    int64_t x;
    ASSERT_TRUE(JsonToInt64(&p.node(i), &x));
    v.push_back(x);
  }
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(p.Find(*args, "ok")->type, JsonType::kTrue);
  EXPECT_EQ(p.Find(*args, "n")->type, JsonType::kNull);
  EXPECT_EQ(p.Find(root, "missing"), nullptr);
}

TEST(JsonValue, DecodesEscapesAndSurrogatePairs) {
  JsonValueParser p;
  const std::string s = R"(["a\"b\\c\/\n\t", "\u00e9\ud83d\ude00", "\ud800x", "plain"])";
  ASSERT_EQ(ParseAll(&p, s), JsonParseOutcome::kOk);  // views point into s
  uint32_t i = p.root().first_child;
  EXPECT_EQ(p.node(i).text, "a\"b\\c/\n\t");
  i = p.node(i).next;
  EXPECT_EQ(p.node(i).text, "\xc3\xa9\xf0\x9f\x98\x80");
  i = p.node(i).next;
  EXPECT_EQ(p.node(i).text, "\xef\xbf\xbdx");  // lone surrogate -> U+FFFD
  i = p.node(i).next;
  EXPECT_EQ(p.node(i).text, "plain");
}

TEST(JsonValue, EveryPrefixOfAValidValueIsIncompleteNeverAnError) {
  const std::string s =
      R"({"name": "k\u00e9\"x", "ts": -12.5e+3, "a": [true, false, null, {}, []], "z": 0})";
  JsonValueParser p;
  for (size_t n = 0; n < s.size(); ++n) {
    EXPECT_EQ(ParseAll(&p, s.substr(0, n)), JsonParseOutcome::kIncomplete) << n;
  }
  EXPECT_EQ(ParseAll(&p, s), JsonParseOutcome::kOk);
}

TEST(JsonValue, SyntaxErrorsCarryTheirOffset) {
  struct Case {
    const char* text;
    size_t offset;
  } cases[] = {
      {R"({"a": 1,})", 8},   {R"({"a" 1})", 5},          {R"({a: 1})", 1},
      {R"([1 2])", 3},       {R"({"a": tru,})", 6},      {R"({"a": -x})", 7},
      {R"({"a": 01})", 7},   {R"({"a": 1.e5})", 8},      {"{\"a\": \"x\ty\"}", 8},
      {R"({"a": "\q"})", 8}, {R"({"a": "\u12G4"})", 11}, {R"(})", 0},
  };
  JsonValueParser p;
  for (const Case& c : cases) {
    EXPECT_EQ(ParseAll(&p, c.text), JsonParseOutcome::kError) << c.text;
    EXPECT_EQ(p.error_offset(), c.offset) << c.text << ": " << p.error();
  }
}

TEST(JsonValue, DeepNestingIsAnErrorNotACrash) {
  JsonValueParser p;
  std::string deep(100000, '[');
  EXPECT_EQ(ParseAll(&p, deep), JsonParseOutcome::kError);
  EXPECT_EQ(p.error(), "nesting too deep");
}

TEST(JsonValue, IntegerConversion) {
  JsonValueParser p;
  const std::string s = R"([7, -3, 12.0, 1.5, 1e3, "42", "x", 9223372036854775808])";
  ASSERT_EQ(ParseAll(&p, s), JsonParseOutcome::kOk);  // views point into s
  std::vector<const JsonNode*> n;
  for (uint32_t i = p.root().first_child; i != 0; i = p.node(i).next) n.push_back(&p.node(i));
  int64_t v;
  EXPECT_TRUE(JsonToInt64(n[0], &v) && v == 7);
  EXPECT_TRUE(JsonToInt64(n[1], &v) && v == -3);
  EXPECT_TRUE(JsonToInt64(n[2], &v) && v == 12);
  EXPECT_FALSE(JsonToInt64(n[3], &v));
  EXPECT_FALSE(JsonToInt64(n[4], &v));
  EXPECT_FALSE(JsonToInt64(n[5], &v));
  EXPECT_TRUE(JsonToInt64Lenient(n[5], &v) && v == 42);
  EXPECT_FALSE(JsonToInt64Lenient(n[6], &v));
  EXPECT_FALSE(JsonToInt64(n[7], &v));
}

}  // namespace
}  // namespace stepscope
