#include "common/strings.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(Strings, FormatDuration) {
  EXPECT_EQ(FormatDuration(812), "812 ns");
  EXPECT_EQ(FormatDuration(3410), "3.41 us");
  EXPECT_EQ(FormatDuration(16'800'000), "16.80 ms");
  EXPECT_EQ(FormatDuration(2'100'000'000), "2.10 s");
}

TEST(Strings, FormatBytesAndCount) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(-1000), "-1,000");
  EXPECT_EQ(FormatCount(12), "12");
}

TEST(Strings, ParseDuration) {
  int64_t ns = 0;
  ASSERT_TRUE(ParseDurationNs("1.5s", &ns));
  EXPECT_EQ(ns, 1'500'000'000);
  ASSERT_TRUE(ParseDurationNs("250ms", &ns));
  EXPECT_EQ(ns, 250'000'000);
  ASSERT_TRUE(ParseDurationNs("3us", &ns));
  EXPECT_EQ(ns, 3000);
  ASSERT_TRUE(ParseDurationNs("10", &ns));
  EXPECT_EQ(ns, 10'000'000'000);
  EXPECT_FALSE(ParseDurationNs("abc", &ns));
  EXPECT_FALSE(ParseDurationNs("-1s", &ns));
}

TEST(Strings, SplitJoinTrim) {
  auto parts = Split("a,b,,c", ',');
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[2], "");
  EXPECT_EQ(Join(parts, "|"), "a|b||c");
  EXPECT_EQ(Trim("  x y \n"), "x y");
}

TEST(Strings, Demangle) {
  EXPECT_EQ(Demangle("_Z3fooi"), "foo(int)");
  EXPECT_EQ(Demangle("plain_kernel"), "plain_kernel");
  EXPECT_EQ(Demangle("_Zbogus"), "_Zbogus");
}

TEST(Strings, HexDigitAndUtf8) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  EXPECT_EQ(HexDigitValue('g'), -1);
  EXPECT_EQ(HexDigitValue('"'), -1);
  std::string s;
  for (uint32_t cp : {0x41u, 0xE9u, 0x20ACu, 0x1F600u}) AppendUtf8(&s, cp);
  // A, e-acute (C3 A9), euro sign (E2 82 AC), grinning face (F0 9F 98 80).
  EXPECT_EQ(s, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

TEST(Strings, ValidUtf8ReplacesIllFormedSequences) {
  const std::string ok = "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\x1b[31m";
  EXPECT_EQ(ValidUtf8(ok), ok);  // valid, controls kept
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(ValidUtf8("a\xFF"
                      "b"),
            "a" + fffd + "b");
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), fffd + fffd);                        // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), fffd + fffd + fffd);             // surrogate D800
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // > U+10FFFF
  EXPECT_EQ(ValidUtf8("x\xE2\x82"), "x" + fffd + fffd);                 // cut short
}

TEST(Strings, PrintableTextHasNoControlCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(PrintableText("gemm_kernel<float>"), "gemm_kernel<float>");
  EXPECT_EQ(PrintableText("k\x1b]0;owned\x07"), "k" + fffd + "]0;owned" + fffd);
  EXPECT_EQ(PrintableText("a\tb\nc\r"), "a b c ");
  EXPECT_EQ(PrintableText("del\x7F c1\xC2\x9B"), "del" + fffd + " c1" + fffd);
  EXPECT_EQ(PrintableText("\xC3\xA9t\xC3\xA9 \xFF"), "\xC3\xA9t\xC3\xA9 " + fffd);
}

// Issue 36: U+202E (RIGHT-TO-LEFT OVERRIDE) in a kernel name reached the
// terminal and the HTML report, showing the name reversed.
TEST(Strings, PrintableTextEscapesBidiControls) {
  EXPECT_EQ(PrintableText("gemm\xE2\x80\xAE"
                          "lanruoj"),
            "gemm<U+202E>lanruoj");
  EXPECT_EQ(PrintableText("\xE2\x81\xA6x\xE2\x81\xA9 \xE2\x80\x8F \xD8\x9C"),
            "<U+2066>x<U+2069> <U+200F> <U+061C>");
  EXPECT_TRUE(IsBidiControl(0x202A));
  EXPECT_FALSE(IsBidiControl(0x2029));
  EXPECT_EQ(PrintableText("\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D"),
            "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D");  // Hebrew kept
}

}  // namespace
}  // namespace stepscope
