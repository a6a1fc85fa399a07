#include "common/file_util.h"
#include "common/test_temp_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace stepscope {
namespace {

// A fresh directory, removed when the test binary exits.
std::string TempDir() {
  const std::string d = TempDirUntilExit("stepscope-file-util");
  return d.empty() ? "/tmp" : d;
}

std::string Slurp(const std::string& path) { return ReadFile(path).ok() ? *ReadFile(path) : "?"; }

TEST(AtomicOutput, TemporaryFileIsCreatedExclusively) {
  const std::string dir = TempDir();
  const std::string out = dir + "/out.json";
  const std::string predictable = out + ".tmp-" + std::to_string(::getpid());
  // Someone else's file, and a planted symlink, at the predictable name.
  { std::ofstream(predictable) << "theirs"; }
  ASSERT_EQ(::symlink((dir + "/victim").c_str(), (predictable + "-1").c_str()), 0);
  {
    AtomicOutput a(out);
    EXPECT_NE(a.temp_path(), predictable);
    EXPECT_NE(a.temp_path(), predictable + "-1");
    EXPECT_TRUE(FileExists(a.temp_path()));  // created, empty, ours
    EXPECT_EQ(Slurp(a.temp_path()), "");
  }
  EXPECT_EQ(Slurp(predictable), "theirs");  // neither opened nor removed
  EXPECT_FALSE(FileExists(dir + "/victim"));
  {
    AtomicOutput b(out);
    std::ofstream(b.temp_path()) << "data";
    ASSERT_TRUE(b.Commit().ok());
  }
  EXPECT_EQ(Slurp(out), "data");
  EXPECT_EQ(Slurp(predictable), "theirs");
}

TEST(AtomicOutput, UncommittedTemporaryFileIsRemoved) {
  const std::string dir = TempDir();
  std::string temp;
  {
    AtomicOutput a(dir + "/x.sqlite");
    temp = a.temp_path();
    EXPECT_TRUE(FileExists(temp));
  }
  EXPECT_FALSE(FileExists(temp));
  EXPECT_FALSE(FileExists(dir + "/x.sqlite"));
}

TEST(FileUtil, SameFileByDeviceAndInode) {
  const std::string dir = TempDir();
  const std::string a = dir + "/a.sqlite";
  { std::ofstream(a) << "x"; }
  ASSERT_EQ(::link(a.c_str(), (dir + "/hard").c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), (dir + "/soft").c_str()), 0);
  EXPECT_TRUE(SameFile(a, a));
  EXPECT_TRUE(SameFile(a, dir + "/./a.sqlite"));
  EXPECT_TRUE(SameFile(a, dir + "/hard"));
  EXPECT_TRUE(SameFile(dir + "/soft", a));
  EXPECT_FALSE(SameFile(a, dir + "/missing"));
  { std::ofstream(dir + "/b") << "x"; }
  EXPECT_FALSE(SameFile(a, dir + "/b"));
}

}  // namespace
}  // namespace stepscope
