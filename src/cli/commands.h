// Entry points of the stepscope subcommands. Each takes the arguments after
// the subcommand name and returns the process exit code (0 ok, 2 bad input,
// 1 other failure; `profile` returns the traced command's exit code).
#pragma once

namespace stepscope {

struct CommandInfo {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

int RunSchema(int argc, char** argv);
int RunProfile(int argc, char** argv);
int RunCollect(int argc, char** argv);  // hidden: `stepscope _collect`
int RunGuard(int argc, char** argv);    // hidden: `stepscope _guard` (the journal keeper)
int RunImport(int argc, char** argv);
int RunMemory(int argc, char** argv);
int RunBench(int argc, char** argv);
int RunRoofline(int argc, char** argv);
int RunSummarize(int argc, char** argv);
int RunRanks(int argc, char** argv);
int RunExport(int argc, char** argv);
int RunReport(int argc, char** argv);
int RunStats(int argc, char** argv);
int RunSteps(int argc, char** argv);
int RunAnalyze(int argc, char** argv);
int RunDiff(int argc, char** argv);
int RunWhatif(int argc, char** argv);
int RunPlan(int argc, char** argv);
int RunMfu(int argc, char** argv);

}  // namespace stepscope
