#include "common/table.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace stepscope {
namespace {

Table Sample() {
  Table t({{"name", "Name"}, {"count", "Count", true}, {"pct", "Time (%)", true}});
  t.AddRow({"gemm", int64_t{12}, Cell(55.5, 1)});
  t.AddRow({"a,\"b\"", int64_t{3}, Cell(4.25, 1)});
  return t;
}

TEST(Table, TextIsAligned) {
  EXPECT_EQ(Sample().RenderText(),
            "Name   Count  Time (%)\n"
            "-----  -----  --------\n"
            "gemm      12      55.5\n"
            "a,\"b\"      3       4.2\n");
}

TEST(Table, CsvQuotesAndKeepsPrecision) {
  EXPECT_EQ(Sample().RenderCsv(),
            "name,count,pct\n"
            "gemm,12,55.5\n"
            "\"a,\"\"b\"\"\",3,4.25\n");
}

TEST(Table, NumbersAreShortestRoundTrip) {
  EXPECT_EQ(ShortestNumber(0.1), "0.1");
  EXPECT_EQ(ShortestNumber(200000.0), "200000");
  EXPECT_EQ(ShortestNumber(1e-7), "1e-07");
  EXPECT_EQ(ShortestNumber(0.0), "0");
  EXPECT_EQ(ShortestNumber(std::nan("")), "");
  for (double v : {1.0 / 3, 9167.924796747968, 2.5e-6, 123456789.123, 1e22}) {
    EXPECT_EQ(std::stod(ShortestNumber(v)), v) << ShortestNumber(v);
  }
  // Few decimals for the text view never reach CSV/JSON: 868 memsets of
  // 40 bytes are 0.0000381 MB on average, not 0.000.
  Table t({{"avg_mb"}});
  t.AddRow({Cell(40.0 / 1048576, 3)});
  EXPECT_EQ(t.RenderCsv(), "avg_mb\n0.00003814697265625\n");
  EXPECT_EQ(t.RenderJson(), "[\n {\"avg_mb\": 0.00003814697265625}\n]\n");
}

TEST(Table, TimeUnitConvertsNanosecondColumnsInTextOnly) {
  Table t({{"total_ns", "Total (ns)", true}, {"avg_ns", "", true}, {"count", "Count", true}});
  t.AddRow({int64_t{1500000}, Cell(2500.5, 1), int64_t{3}});
  EXPECT_EQ(t.RenderText(TimeUnit::kMs),
            "Total (ms)  avg_ns (ms)  Count\n"
            "----------  -----------  -----\n"
            "     1.500        0.003      3\n");
  EXPECT_EQ(t.RenderText(),
            "Total (ns)  avg_ns  Count\n"
            "----------  ------  -----\n"
            "   1500000  2500.5      3\n");
  EXPECT_EQ(t.Render(OutputFormat::kCsv, TimeUnit::kS),
            "total_ns,avg_ns,count\n1500000,2500.5,3\n");
  TimeUnit u;
  EXPECT_TRUE(ParseTimeUnit("us", &u));
  EXPECT_EQ(u, TimeUnit::kUs);
  EXPECT_FALSE(ParseTimeUnit("h", &u));
}

TEST(Table, LongNamesAreCutInTextOnly) {
  Table t({{"name", "Name", false, 8}});
  t.AddRow({"abcdefghijkl"});
  EXPECT_EQ(t.RenderText(), "Name\n--------\nabcde...\n");
  EXPECT_EQ(t.RenderCsv(), "name\nabcdefghijkl\n");
}

TEST(Table, JsonEscapesHtml) {
  Table t({{"k"}});
  t.AddRow({"<script>"});
  EXPECT_EQ(t.RenderJson(), "[\n {\"k\": \"\\u003cscript\\u003e\"}\n]\n");
  EXPECT_EQ(Table({{"k"}}).RenderJson(), "[]\n");
}

TEST(Table, HostileNamesAreSafeInEveryFormat) {
  Table t({{"name"}});
  t.AddRow({std::string("k\x1b[2J\xFF,x")});
  EXPECT_EQ(t.RenderText(), "name\n" + std::string(12, '-') + "\nk\xEF\xBF\xBD[2J\xEF\xBF\xBD,x\n");
  EXPECT_EQ(t.RenderCsv(), "name\n\"k?[2J\xEF\xBF\xBD,x\"\n");
  EXPECT_EQ(t.RenderJson(), "[\n {\"name\": \"k\\u001b[2J\xEF\xBF\xBD,x\"}\n]\n");
}

TEST(Table, PrependColumn) {
  Table t = Sample();
  t.PrependColumn({"rank"}, int64_t{3});
  EXPECT_EQ(t.columns()[0].name, "rank");
  EXPECT_EQ(t.rows()[1][0].Text(), "3");
}

// One long name on many rows is held once; the text view shows its head,
// CSV and JSON the whole name.
TEST(Table, SharedTextIsHeldOnceAndCutInText) {
  const SharedText name = std::make_shared<const std::string>(std::string(1000, 'n'));
  Table t({{"i", "I", true}, {"range", "Range", false, kNameTextMaxWidth}});
  for (int i = 0; i < 3; ++i) t.AddRow({Cell(i), name});
  EXPECT_EQ(name.use_count(), 4);
  const std::string text = t.RenderText();
  EXPECT_NE(text.find(std::string(kNameTextMaxWidth - 3, 'n') + "...\n"), std::string::npos);
  EXPECT_EQ(text.find(std::string(kNameTextMaxWidth - 2, 'n')), std::string::npos);
  EXPECT_NE(t.RenderCsv().find("2," + *name + "\n"), std::string::npos);
  EXPECT_NE(t.RenderJson().find("\"" + *name + "\""), std::string::npos);
  EXPECT_EQ(t.rows()[0][1].Text(), *name);
}

}  // namespace
}  // namespace stepscope
