#include "common/table.h"

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
            "gemm,12,55.500\n"
            "\"a,\"\"b\"\"\",3,4.250\n");
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

}  // namespace
}  // namespace stepscope
