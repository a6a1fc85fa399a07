#include "collector/run_summary.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "store/trace_writer.h"

namespace stepscope {
namespace {

std::string SummaryOf(const std::string& path) {
  char* buf = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buf, &size);
  PrintTraceSummary(path, out);
  std::fclose(out);
  std::string s(buf, size);
  std::free(buf);
  return s;
}

std::string NewTrace(const char* name, bool finalize) {
  const std::string path =
      ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid()) + ".sqlite";
  ::unlink(path.c_str());
  auto w = TraceWriter::Create(path);
  EXPECT_TRUE(w.ok());
  (*w)->SetMeta("pid", "7");
  EXPECT_TRUE((*w)->Commit().ok());
  if (finalize) EXPECT_TRUE((*w)->Finalize().ok());
  return path;
}

// The drop counters are written at finalization: a trace cut off (killed,
// disk full) has none, and its summary must not claim "0 dropped records".
TEST(RunSummary, DropsOfATraceNotFinalizedAreUnknown) {
  const std::string cut = SummaryOf(NewTrace("run-summary-cut", false));
  EXPECT_NE(cut.find("NOT finalized"), std::string::npos) << cut;
  EXPECT_NE(cut.find("dropped records unknown"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("0 dropped records"), std::string::npos) << cut;
  const std::string whole = SummaryOf(NewTrace("run-summary-whole", true));
  EXPECT_NE(whole.find("0 dropped records"), std::string::npos) << whole;
}

}  // namespace
}  // namespace stepscope
