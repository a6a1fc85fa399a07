#include "common/json_scan.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

struct Scan {
  JsonScan r;
  size_t stop;  // offset of *stop
  std::string text;
  std::string error;
};

Scan Str(std::string_view in, std::string* scratch) {
  const char* stop = nullptr;
  const char* error = "";
  std::string_view out;
  JsonScan r = ScanJsonString(in.data(), in.data() + in.size(), scratch, &out, &stop, &error);
  return {r, static_cast<size_t>(stop - in.data()), r == JsonScan::kOk ? std::string(out) : "",
          r == JsonScan::kOk ? "" : error};
}

Scan Num(std::string_view in) {
  const char* stop = nullptr;
  const char* error = "";
  JsonScan r = ScanJsonNumber(in.data(), in.data() + in.size(), &stop, &error);
  size_t at = static_cast<size_t>(stop - in.data());
  return {r, at, std::string(in.substr(0, at)), r == JsonScan::kOk ? "" : error};
}

TEST(JsonScan, StringsWithoutEscapesAreViewsIntoTheInput) {
  std::string scratch;
  std::string_view in = "\"abc\" rest";
  const char* stop = nullptr;
  const char* error = "";
  std::string_view out;
  ASSERT_EQ(ScanJsonString(in.data(), in.data() + in.size(), &scratch, &out, &stop, &error),
            JsonScan::kOk);
  EXPECT_EQ(out, "abc");
  EXPECT_EQ(out.data(), in.data() + 1);
  EXPECT_EQ(stop, in.data() + 5);
  EXPECT_TRUE(scratch.empty());
}

TEST(JsonScan, StringsWithEscapesAreDecodedIntoScratch) {
  std::string scratch = "kept";
  scratch.reserve(64);
  Scan s = Str("\"a\\nb\\u00e9c\"x", &scratch);
  EXPECT_EQ(s.r, JsonScan::kOk);
  EXPECT_EQ(s.text,
            "a\nb\xc3\xa9"
            "c");
  EXPECT_EQ(s.stop, 13u);
  EXPECT_EQ(scratch,
            "kepta\nb\xc3\xa9"
            "c");
}

TEST(JsonScan, StringsCutShortAreIncompleteAndBadOnesSayWhere) {
  std::string scratch = "kept";
  for (std::string_view cut : {"\"abc", "\"a\\", "\"a\\u00", "\"a\\ud83d", "\""}) {
    Scan s = Str(cut, &scratch);
    EXPECT_EQ(s.r, JsonScan::kIncomplete) << cut;
    EXPECT_EQ(s.error, "unterminated string") << cut;
    EXPECT_EQ(scratch, "kept") << cut;  // left as it was
  }
  Scan ctl = Str("\"ab\x01\"", &scratch);
  EXPECT_EQ(ctl.r, JsonScan::kBad);
  EXPECT_EQ(ctl.stop, 3u);
  EXPECT_EQ(ctl.error, "control character inside a string");
  Scan esc = Str("\"a\\x\"", &scratch);
  EXPECT_EQ(esc.r, JsonScan::kBad);
  EXPECT_EQ(esc.stop, 3u);
  EXPECT_EQ(esc.error, "unknown escape in a string");
  EXPECT_EQ(scratch, "kept");
}

TEST(JsonScan, NumbersFollowTheGrammar) {
  for (std::string_view ok : {"0", "-0", "12", "-3.25", "1e9", "1.5E-3", "2e+10"}) {
    Scan s = Num(std::string(ok) + ",");
    EXPECT_EQ(s.r, JsonScan::kOk) << ok;
    EXPECT_EQ(s.text, ok);
  }
  // "01" stops after the 0: the reader on top sees the 1 where ',' belongs.
  EXPECT_EQ(Num("01").text, "0");
  for (std::string_view cut : {"-", "1.", "1e", "1e+"}) {
    EXPECT_EQ(Num(cut).r, JsonScan::kIncomplete) << cut;
  }
  Scan dot = Num("1.x");
  EXPECT_EQ(dot.r, JsonScan::kBad);
  EXPECT_EQ(dot.stop, 2u);
  EXPECT_EQ(dot.error, "invalid number: expected a digit after '.'");
  EXPECT_EQ(Num("-x").error, "invalid number: expected a digit");
  EXPECT_EQ(Num("1ex").error, "invalid number: expected a digit in the exponent");
}

TEST(JsonScan, Literals) {
  auto lit = [](std::string_view in, std::string_view* word) {
    const char* stop = nullptr;
    const char* error = "";
    return ScanJsonLiteral(in.data(), in.data() + in.size(), word, &stop, &error);
  };
  std::string_view w;
  EXPECT_EQ(lit("true,", &w), JsonScan::kOk);
  EXPECT_EQ(w, "true");
  EXPECT_EQ(lit("null", &w), JsonScan::kOk);
  EXPECT_EQ(w, "null");
  EXPECT_EQ(lit("fal", &w), JsonScan::kIncomplete);
  EXPECT_EQ(lit("nul1", &w), JsonScan::kBad);
  EXPECT_EQ(lit("tx", &w), JsonScan::kBad);
}

TEST(JsonScan, Whitespace) {
  std::string_view in = " \t\r\n x";
  EXPECT_EQ(SkipJsonWs(in.data(), in.data() + in.size()), in.data() + 5);
  EXPECT_TRUE(IsJsonWs('\n'));
  EXPECT_FALSE(IsJsonWs('\v'));
}

}  // namespace
}  // namespace stepscope
