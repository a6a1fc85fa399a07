#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "common/table.h"
#include "ranks/ranks_analysis.h"
#include "ranks/ranks_report.h"
#include "ranks/summarize.h"

namespace stepscope {
namespace {

const char* const kReports[] = {"steps", "ranks", "sections", "collectives", "scores", "verdict"};

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Arguments -> input files: a directory stands for its *.summary.json files.
StatusOr<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    if (!IsDirectory(a)) {
      out.push_back(a);
      continue;
    }
    DIR* d = ::opendir(a.c_str());
    if (!d) return InvalidInput(a + ": cannot open directory: " + std::strerror(errno));
    std::vector<std::string> found;
    while (dirent* e = ::readdir(d)) {
      if (EndsWith(e->d_name, ".summary.json")) found.push_back(a + "/" + e->d_name);
    }
    ::closedir(d);
    if (found.empty())
      return InvalidInput(a +
                          ": directory holds no *.summary.json; run 'stepscope summarize' first");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

// A trace (SQLite) is summarized on the fly; anything else must be a summary.
StatusOr<RankSummary> LoadOne(const std::string& path) {
  char magic[16] = {0};
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) return InvalidInput(path + ": cannot open: " + std::strerror(errno));
    f.read(magic, sizeof(magic));
  }
  if (std::memcmp(magic, "SQLite format 3", 16) == 0) {
    ASSIGN_OR_RETURN(auto reader, TraceReader::Open(path));
    auto s = BuildSummary(*reader);
    if (!s.ok()) return s.status().WithContext(path);
    return s;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && st.st_size > kMaxRankSummaryBytes) {
    return InvalidInput(path + ": " + FormatBytes(static_cast<uint64_t>(st.st_size)) +
                        ", larger than a rank summary can be (" +
                        FormatBytes(static_cast<uint64_t>(kMaxRankSummaryBytes)) +
                        "); pass the rank's trace (.sqlite) instead: ranks summarizes it "
                        "on the fly");
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return SummaryFromJson(text, path);
}

// Loads every input on a small thread pool; the first failure in argument order wins.
StatusOr<std::vector<RankSummary>> LoadAll(const std::vector<std::string>& paths) {
  std::vector<std::optional<StatusOr<RankSummary>>> results(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) results[i] = LoadOne(paths[i]);
  };
  const size_t n =
      std::min<size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<RankSummary> out;
  out.reserve(paths.size());
  for (auto& r : results) {
    if (!r->ok()) return r->status();
    out.push_back(std::move(**r));
  }
  return out;
}

// The analysis options of the command line (bad values: kInvalidInput).
Status ReadRanksOptions(const ArgParser& p, RanksOptions* opt) {
  int64_t window = 0;
  if (!ParseDouble(p.Get("--threshold"), &opt->threshold) || opt->threshold <= 0 ||
      opt->threshold > 1) {
    return InvalidInput("--threshold must be a number in (0, 1], not '" + p.Get("--threshold") +
                        "'");
  }
  if (!ParseInt64(p.Get("--window"), &window) || window < 1 || window > 1000000) {
    return InvalidInput("--window must be a positive number of steps, not '" + p.Get("--window") +
                        "'");
  }
  opt->window_steps = static_cast<int>(window);
  if (p.Has("--min-wait") && !ParseDurationNs(p.Get("--min-wait"), &opt->min_wait_ns)) {
    return InvalidInput("--min-wait must be a duration such as 2ms, not '" + p.Get("--min-wait") +
                        "'");
  }
  const std::string align = p.Get("--align");
  if (align != "meta" && align != "collectives") {
    return InvalidInput("--align must be meta or collectives, not '" + align + "'");
  }
  opt->align_collectives = align == "collectives";
  if (p.Has("--steps")) {
    auto ranges = ParseStepRanges(p.Get("--steps"));
    if (!ranges.ok()) return ranges.status();
    opt->step_ranges = std::move(*ranges);
  }
  return OkStatus();
}

}  // namespace

int RunRanks(int argc, char** argv) {
  ArgParser p(
      "ranks", "[options] TRACE_OR_SUMMARY...",
      "Compare the ranks of a multi-GPU job and name the straggler. Reads one trace or rank "
      "summary "
      "('stepscope summarize') per rank, or directories of summaries. Prints the step times side "
      "by "
      "side, per-rank medians (compute, communication, overlap, launch lateness, NCCL waits) with "
      "the NVIDIA Resiliency Extension's relative and individual performance scores, matches every "
      "NCCL collective across ranks to find who arrived last and how long the others waited for "
      "it with nothing else to run (the exposed wait: compute overlapping the collective does "
      "not count), and "
      "gives the verdict: which rank straggles, from which step, and why (compute: the same "
      "kernels run slower; host: extra work its program launches that the others do not, or late "
      "kernel launches; communication: late collectives). Clocks are aligned "
      "with "
      "each trace's meta.wall_clock_offset_ns. docs/ranks.md defines every number.");
  p.Flag("--threshold", "X", "NVRx score threshold: a score below X flags the rank", "0.75");
  p.Flag("--window", "N", "steps per window for the individual scores (best window vs the last)",
         "5");
  p.Flag("--min-wait", "DUR",
         "per-step exposed wait that counts as straggling (default: max(0.5ms, 10% of the "
         "step))");
  p.Flag("--align", "HOW",
         "clock alignment: meta (wall_clock_offset_ns) or collectives (also correct "
         "per-host skew from collective end times)",
         "meta");
  p.Flag("--steps", "LIST",
         "analyze only these steps: numbers and ranges such as 10-17,26-33 (the others still "
         "align the ranks but count in no median, score or verdict)");
  p.Flag("--report", "NAME",
         "what to print: steps, ranks, sections, collectives, scores, verdict "
         "(repeatable; default: steps,ranks,scores,verdict)",
         "", "", true);
  p.TableOutput();
  p.Epilog(
      "Examples:\n"
      "  stepscope profile -o run_%q{RANK} -- torchrun --nproc-per-node 2 train_gpt.py --ddp\n"
      "  stepscope ranks run_*.sqlite\n"
      "  stepscope summarize run_*.sqlite && stepscope ranks run_*.summary.json\n"
      "  stepscope ranks summaries/ --report collectives --format csv\n"
      "  stepscope ranks --steps 100-199 run_*.sqlite   # one stretch of a long job\n"
      "  stepscope ranks --align collectives node*/run_*.summary.json   # hosts without "
      "synchronized clocks");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;

  RanksOptions opt;
  OutputSpec output;
  if (Status st = p.ParseTableOutput(&output); !st.ok()) return ReportError("ranks", st);
  const OutputFormat format = output.format;
  if (Status st = ReadRanksOptions(p, &opt); !st.ok()) return ReportError("ranks", st);
  std::vector<std::string> reports = p.GetAll("--report");
  if (reports.empty()) reports = {"steps", "ranks", "scores", "verdict"};
  for (const std::string& r : reports) {
    if (std::find(std::begin(kReports), std::end(kReports), r) == std::end(kReports)) {
      return ReportError(
          "ranks",
          InvalidInput("unknown --report '" + r +
                       "'; choose from steps, ranks, sections, collectives, scores, verdict"));
    }
  }
  if (p.positionals().empty()) {
    return ReportError("ranks",
                       InvalidInput("no TRACE_OR_SUMMARY given; see 'stepscope ranks --help'"));
  }

  auto paths = ExpandInputs(p.positionals());
  if (!paths.ok()) return ReportError("ranks", paths.status());
  auto summaries = LoadAll(*paths);
  if (!summaries.ok()) return ReportError("ranks", summaries.status());
  auto analysis = AnalyzeRanks(std::move(*summaries), opt);
  if (!analysis.ok()) return ReportError("ranks", analysis.status());
  const RanksAnalysis& a = *analysis;

  auto table_of = [&](const std::string& r) {
    if (r == "steps") return StepsTable(a, format == OutputFormat::kText);
    if (r == "ranks") return RanksTable(a);
    if (r == "sections") return SectionsTable(a);
    if (r == "collectives") return CollectivesTable(a);
    if (r == "scores") return ScoreFlagsTable(a);
    return VerdictTable(a);
  };
  std::string out;
  if (format == OutputFormat::kText) {
    out = HeaderText(a);
    for (const std::string& r : reports) {
      if (r == "verdict") {
        // Where the scores table is, as printed (it is skipped when empty).
        const auto at = [&](const char* n) { return std::find(reports.begin(), reports.end(), n); };
        const std::string where = at("scores") == reports.end()  ? ""
                                  : at("scores") < at("verdict") ? "above"
                                                                 : "below";
        out += "\n" + VerdictText(a, where);
        continue;
      }
      if (r == "scores" && a.score_flags.empty()) continue;
      static const std::pair<const char*, const char*> kTitles[] = {
          {"steps", "Step times (step window, ms)"},
          {"ranks", "Per rank (medians per step, ms)"},
          {"sections", "NVTX sections (median ms; NVRx relative and individual scores)"},
          {"collectives",
           "NCCL collectives (who arrived last; the others' spin inside the kernel and their "
           "exposed wait)"},
          {"scores", "Scores below the threshold (NVRx)"}};
      for (const auto& [name, title] : kTitles) {
        if (r == name) out += std::string("\n") + title + "\n";
      }
      out += table_of(r).RenderText(output.unit);
    }
    return EmitText("ranks", p, out);
  }
  // CSV and JSON: the asked-for tables; JSON adds the job (world size,
  // missing ranks) and the notes as tables of their own.
  std::vector<NamedTable> tables;
  if (format == OutputFormat::kJson) {
    Table job({{"world_size", "World Size", true}, {"missing_ranks", "Missing Ranks", false}});
    std::string missing;
    for (size_t i = 0; i < a.missing_ranks.size(); ++i)
      missing += (i ? "," : "") + std::to_string(a.missing_ranks[i]);
    job.AddRow({Cell(static_cast<int64_t>(a.world_size)), missing});
    Table notes({{"note", "Note", false}});
    for (const std::string& n : a.notes) notes.AddRow({n});
    tables.push_back({"job", "Job", job, ""});
    tables.push_back({"notes", "Notes", notes, ""});
  }
  for (const std::string& r : reports) tables.push_back({r, r, table_of(r), ""});
  return EmitTables("ranks", p, tables, output);
}

}  // namespace stepscope
