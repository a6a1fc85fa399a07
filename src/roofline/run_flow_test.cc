// The roofline flow with the program replaced by fakes: the survey's file
// handling (temporary name, failed runs, several processes) and the profile
// runs' environment, files and outcome, without a GPU or a tracer.
#include "roofline/run_flow.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/file_util.h"
#include "common/test_temp_dir.h"
#include "store/trace_reader.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

// A fresh directory, removed when the test binary exits.
std::string MakeDir() {
  const std::string d = TempDirUntilExit("flow", ::testing::TempDir());
  EXPECT_FALSE(d.empty());
  return d;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A trace with `kernels` kernels (and the pid in meta), as the collector
// would leave it.
void WriteTrace(const std::string& path, int kernels, int pid) {
  auto w = TraceWriter::Create(path);
  ASSERT_TRUE(w.ok()) << w.status().message();
  (*w)->SetMeta("pid", std::to_string(pid));
  for (int i = 0; i < kernels; ++i) {
    KernelRecord k{};
    k.start_ns = i * 100;
    k.end_ns = i * 100 + 50;
    k.name = (*w)->Intern("gemm");
    (*w)->AddKernel(k);
  }
  ASSERT_TRUE((*w)->Finalize().ok());
}

int64_t Kernels(const std::string& path) {
  auto r = TraceReader::Open(path);
  if (!r.ok()) return -1;
  auto q = (*r)->Query("SELECT COUNT(*) FROM kernels");
  return q.ok() && q->Step() ? q->Int(0) : -1;
}

// The collector's naming for a pattern without tokens: the name, then
// name-2.sqlite, name-3.sqlite, ... ("%%" is a literal '%').
std::string Expand(std::string pattern, int n) {
  for (size_t i = pattern.find("%%"); i != std::string::npos; i = pattern.find("%%", i + 1)) {
    pattern.erase(i, 1);
  }
  if (n > 1) pattern.insert(pattern.size() - 7, "-" + std::to_string(n));
  return pattern;
}

// A traced run whose processes leave traces with these kernel counts.
TracedRunner FakeTracedRun(std::vector<int> kernels, int exit_code, std::string* seen_pattern,
                           std::string* seen_categories) {
  return [=](const std::string& pattern, const std::string& categories) -> StatusOr<TracedExit> {
    *seen_pattern = pattern;
    *seen_categories = categories;
    TracedExit e;
    e.exit_code = exit_code;
    for (size_t i = 0; i < kernels.size(); ++i) {
      e.traces.push_back(Expand(pattern, static_cast<int>(i) + 1));
      WriteTrace(e.traces.back(), kernels[i], 100 + static_cast<int>(i));
    }
    return e;
  };
}

TEST(RunFlow, SurveyKeepsTheTraceWithTheMostKernelsAndNothingElse) {
  const std::string dir = MakeDir();
  const std::string final_path = dir + "/run 100%.sqlite";  // '%' is no token here
  std::string pattern, categories, note;
  ASSERT_TRUE(
      SurveyTrace(final_path, FakeTracedRun({1, 3, 2}, 0, &pattern, &categories), &note).ok());
  EXPECT_EQ(categories, "cuda,nvtx");
  EXPECT_EQ(pattern.rfind(dir + "/.run 100%%.sqlite.survey-", 0), 0u) << pattern;
  EXPECT_EQ(Kernels(final_path), 3);
  EXPECT_EQ(Files(dir), std::vector<std::string>{"run 100%.sqlite"});
  EXPECT_EQ(note,
            "3 processes recorded; kernels are picked from the one with the most (pid 101, 3 "
            "kernels), the other traces are removed");
}

TEST(RunFlow, SurveyReplacesAnExistingFileAndSaysNothingForOneProcess) {
  const std::string dir = MakeDir();
  ASSERT_TRUE(WriteFileAtomic(dir + "/s.sqlite", "old").ok());
  std::string pattern, categories, note;
  ASSERT_TRUE(
      SurveyTrace(dir + "/s.sqlite", FakeTracedRun({4}, 0, &pattern, &categories), &note).ok());
  EXPECT_EQ(Kernels(dir + "/s.sqlite"), 4);
  EXPECT_EQ(note, "");
  EXPECT_EQ(Files(dir), std::vector<std::string>{"s.sqlite"});
}

TEST(RunFlow, FailedSurveyLeavesTheOldFileAndNoTemporary) {
  const std::string dir = MakeDir();
  ASSERT_TRUE(WriteFileAtomic(dir + "/s.sqlite", "old").ok());
  std::string pattern, categories, note;
  Status st =
      SurveyTrace(dir + "/s.sqlite", FakeTracedRun({4, 1}, 3, &pattern, &categories), &note);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), "the command exited with code 3 during the survey run; fix it and retry");
  EXPECT_EQ(Files(dir), std::vector<std::string>{"s.sqlite"});
  EXPECT_EQ(*ReadFile(dir + "/s.sqlite"), "old");

  st = SurveyTrace(dir + "/s.sqlite", FakeTracedRun({}, 0, &pattern, &categories), &note);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("the survey run wrote no trace"), std::string::npos);
  EXPECT_EQ(Files(dir), std::vector<std::string>{"s.sqlite"});
}

TEST(RunFlow, SurveyIntoAMissingDirectoryIsBadInputAndRunsNothing) {
  bool ran = false;
  TracedRunner run = [&](const std::string&, const std::string&) -> StatusOr<TracedExit> {
    ran = true;
    return TracedExit{};
  };
  std::string note;
  Status st = SurveyTrace(MakeDir() + "/no/such/s.sqlite", run, &note);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_FALSE(ran);
}

Selection OneKernel() {
  Selection sel;
  KernelTarget k;
  k.rank = 1;
  k.name = "gemm";
  k.mangled = "_Z4gemmv";
  k.grid[0] = 132;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 384;
  k.block[1] = k.block[2] = 1;
  sel.targets.push_back(k);
  return sel;
}

std::string EnvValue(const EnvVars& env, const std::string& key) {
  for (const auto& [k, v] : env) {
    if (k == key) return v;
  }
  return "<unset>";
}

// A profiled program: appends what the injected profiler would for the
// group it is run for, and exits with `exit_code`.
struct FakeProfiledProgram {
  std::vector<std::string> groups;
  std::vector<ProfileTargets> targets;
  std::vector<std::string> extra_lines;  // appended by the first run
  int exit_code = 0;
  bool write_instance = true;

  ProgramRunner Runner() {
    return [this](const EnvVars& env) -> StatusOr<int> {
      const std::string group = EnvValue(env, "STEPSCOPE_ROOFLINE_GROUP");
      groups.push_back(group);
      EXPECT_EQ(EnvValue(env, "CUDA_INJECTION64_PATH"), InjectLibraryPath());
      auto t = ReadFile(EnvValue(env, "STEPSCOPE_ROOFLINE_TARGETS"));
      EXPECT_TRUE(t.ok());
      if (t.ok()) targets.push_back(*ParseTargets(*t));
      std::ofstream out(EnvValue(env, "STEPSCOPE_ROOFLINE_RESULTS"), std::ios::app);
      ProfileDevice d{"NVIDIA H200", "GPU-1", "gh100", group == "all" ? 12 : 1, {}, {}};
      out << DeviceLine(d);
      if (write_instance) {
        ProfileInstance i;
        i.target = 0;
        i.launch_index = group == "all" ? 0 : 1;
        i.name = "_Z4gemmv";
        i.group = group;
        i.ranges = 1;
        i.counters["gpu__time_duration.sum"] = 1000;
        out << InstanceLine(i);
      }
      if (groups.size() == 1) {
        for (const std::string& l : extra_lines) out << l;
      }
      return exit_code;
    };
  }
};

TEST(RunFlow, ProfileRunsCountersThenTimeAndBytesAndCleansUp) {
  const std::string dir = MakeDir();
  FakeProfiledProgram prog;
  ProfileOptions opt;
  opt.instances = 2;
  opt.skip = 1;
  opt.cache_control = "none";
  std::vector<std::string> announced;
  auto out = ProfileKernels(OneKernel(), dir + "/t.sqlite", opt, prog.Runner(),
                            [&](const std::string& g) { announced.push_back(g); });
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->error.ok()) << out->error.message();
  EXPECT_EQ(prog.groups, (std::vector<std::string>{"all", "memory"}));
  EXPECT_EQ(announced, prog.groups);
  ASSERT_EQ(prog.targets.size(), 2u);
  EXPECT_EQ(prog.targets[0].instances, 2);
  EXPECT_EQ(prog.targets[0].skip, 1);
  ASSERT_EQ(prog.targets[0].kernels.size(), 1u);
  EXPECT_EQ(prog.targets[0].kernels[0].mangled, "_Z4gemmv");
  EXPECT_EQ(out->results.instances.size(), 2u);
  EXPECT_EQ(out->results.device.run_passes, (std::vector<int>{12, 1}));
  EXPECT_TRUE(out->warnings.empty());
  EXPECT_TRUE(Files(dir).empty());  // targets and results were temporary
}

TEST(RunFlow, ProfileStopsAfterAFailedRunAndKeepsResultsWhenAsked) {
  const std::string dir = MakeDir();
  FakeProfiledProgram prog;
  prog.exit_code = 1;
  prog.extra_lines = {"{\"type\": \"inst\n",
                      MessageLine({false, 0, "kernel 0 was never launched"})};
  ProfileOptions opt;
  opt.results_path = dir + "/raw.jsonl";
  auto out = ProfileKernels(OneKernel(), dir + "/t.sqlite", opt, prog.Runner(), nullptr);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(prog.groups, std::vector<std::string>{"all"});
  EXPECT_TRUE(out->error.ok());
  EXPECT_EQ(out->notes, std::vector<std::string>{"kernel 0 was never launched"});
  EXPECT_EQ(out->warnings,
            (std::vector<std::string>{"the command exited with code 1 in the counter run (the "
                                      "time-and-bytes run was skipped)",
                                      "1 unreadable result line(s) skipped"}));
  EXPECT_EQ(Files(dir), std::vector<std::string>{"raw.jsonl"});
}

TEST(RunFlow, ProfilerErrorOrNoCountersIsTheOutcomesError) {
  const std::string dir = MakeDir();
  FakeProfiledProgram prog;
  prog.extra_lines = {MessageLine({false, 0, "a note"}),
                      MessageLine({true, 35, "insufficient privileges"})};
  ProfileOptions opt;
  opt.one_run = true;
  auto out = ProfileKernels(OneKernel(), dir + "/t.sqlite", opt, prog.Runner(), nullptr);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->error.code(), StatusCode::kUnavailable);
  EXPECT_EQ(out->error.message(), "insufficient privileges");
  EXPECT_EQ(out->notes, std::vector<std::string>{"a note"});

  FakeProfiledProgram none;
  none.write_instance = false;
  out = ProfileKernels(OneKernel(), dir + "/t.sqlite", opt, none.Runner(), nullptr);
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->error.message().find("collected no counters"), std::string::npos);
}

TEST(RunFlow, EvaluateWithoutCeilingsShowsCountersAndWarns) {
  FakeProfiledProgram prog;
  ProfileOptions opt;
  opt.one_run = true;
  const std::string dir = MakeDir();
  auto out = ProfileKernels(OneKernel(), dir + "/t.sqlite", opt, prog.Runner(), nullptr);
  ASSERT_TRUE(out.ok());
  Evaluation e = Evaluate(OneKernel(), out->results, dir + "/no-ceilings.json");
  EXPECT_EQ(e.ceilings_how, "nowhere (none measured)");
  ASSERT_FALSE(e.warnings.empty());
  EXPECT_NE(e.warnings.back().find("; showing counters without ceilings"), std::string::npos);
  EXPECT_EQ(e.report.gpu_name, "NVIDIA H200");
  EXPECT_EQ(e.report.entries.size(), 1u);
}

TEST(RunFlow, DefaultSvgPathSitsBesideTheTrace) {
  EXPECT_EQ(DefaultSvgPath("dir/run.sqlite"), "dir/run.roofline.svg");
  EXPECT_EQ(DefaultSvgPath("run"), "run.roofline.svg");
}

}  // namespace
}  // namespace stepscope
