#include "capture/output_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "common/test_temp_dir.h"

namespace stepscope {
namespace {

PatternContext Ctx() {
  PatternContext c;
  c.pid = 4242;
  c.host = "node7";
  c.getenv = [](const std::string& v) -> const char* { return v == "RANK" ? "3" : nullptr; };
  return c;
}

TEST(OutputPattern, ExpandsTokens) {
  EXPECT_EQ(*ExpandOutputPattern("run_%p", Ctx(), 0), "run_4242.sqlite");
  EXPECT_EQ(*ExpandOutputPattern("%h/run_%q{RANK}", Ctx(), 0), "node7/run_3.sqlite");
  EXPECT_EQ(*ExpandOutputPattern("t%n.sqlite", Ctx(), 2), "t2.sqlite");
  EXPECT_EQ(*ExpandOutputPattern("100%%_%q{UNSET}x", Ctx(), 0), "100%_x.sqlite");
}

TEST(OutputPattern, RejectsMalformed) {
  EXPECT_FALSE(ExpandOutputPattern("x%", Ctx(), 0).ok());
  EXPECT_FALSE(ExpandOutputPattern("x%z", Ctx(), 0).ok());
  EXPECT_FALSE(ExpandOutputPattern("x%q{RANK", Ctx(), 0).ok());
  EXPECT_FALSE(ExpandOutputPattern("x%qRANK", Ctx(), 0).ok());
  auto st = ExpandOutputPattern("x%z", Ctx(), 0).status();
  EXPECT_NE(st.message().find("%z"), std::string::npos);
}

TEST(OutputPattern, PerProcess) {
  EXPECT_TRUE(PatternIsPerProcess("a_%p"));
  EXPECT_TRUE(PatternIsPerProcess("a_%q{RANK}"));
  EXPECT_TRUE(PatternIsPerProcess("a_%n"));
  EXPECT_FALSE(PatternIsPerProcess("a_%h"));
  EXPECT_FALSE(PatternIsPerProcess("a_%%p"));
}

TEST(OutputPattern, PathLengths) {
  // 247 bytes + "-journal" = 255: the longest file name SQLite can journal next to.
  EXPECT_TRUE(CheckTracePathLength(std::string(240, 'a') + ".sqlite").ok());
  EXPECT_FALSE(CheckTracePathLength(std::string(241, 'a') + ".sqlite").ok());
  EXPECT_TRUE(CheckTracePathLength(std::string(255, 'd') + "/t.sqlite").ok());
  auto st = CheckTracePathLength("/tmp/" + std::string(256, 'd') + "/t.sqlite");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("directory name (256 bytes)"), std::string::npos) << st.message();
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += std::string(250, 'x') + "/";
  EXPECT_FALSE(CheckTracePathLength(deep + "t.sqlite").ok());
  // CreateTraceFile says so too (a self-started collector), naming the path.
  auto made = CreateTraceFile(std::string(300, 'n'), Ctx(), 0);
  EXPECT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("longer than 255 bytes"), std::string::npos);
}

TEST(OutputPattern, CreateNeverCollides) {
  // A fresh directory each run (mkdtemp): a left-over one of an earlier process with the
  // same pid would already hold t.sqlite, s1.sqlite, ...
  const ScopedTempDir tmp("outpat", ::testing::TempDir());
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path();
  auto a = CreateTraceFile(dir + "/t", Ctx(), 0);
  auto b = CreateTraceFile(dir + "/t", Ctx(), 0);
  auto c = CreateTraceFile(dir + "/s%n", Ctx(), 0);
  auto d = CreateTraceFile(dir + "/s%n", Ctx(), 0);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(*a, dir + "/t.sqlite");
  EXPECT_EQ(*b, dir + "/t-2.sqlite");
  EXPECT_EQ(*c, dir + "/s1.sqlite");
  EXPECT_EQ(*d, dir + "/s2.sqlite");
  // --force-overwrite replaces files older than the run, never files of this run.
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t now = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec + 1000000000;
  auto e = CreateTraceFile(dir + "/t", Ctx(), now);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, dir + "/t.sqlite");
  auto f = CreateTraceFile(dir + "/x", Ctx(), 1);  // run started at epoch+1ns: x is new
  auto g = CreateTraceFile(dir + "/x", Ctx(), 1);
  EXPECT_EQ(*f, dir + "/x.sqlite");
  EXPECT_EQ(*g, dir + "/x-2.sqlite");
  EXPECT_FALSE(CreateTraceFile("/nonexistent-dir/t", Ctx(), 0).ok());
}

}  // namespace
}  // namespace stepscope
