// make_rank_summaries: writes N synthetic rank summaries of one data-parallel
// job, for the scale benchmark (bench/ranks_scale.sh) and for trying
// `stepscope ranks` on a big job without one.
//
//   make_rank_summaries OUT_DIR RANKS [--steps N] [--kernels N] [--collectives N]
//                       [--ranks-per-host N] [--straggler RANK] [--from-step N] [--late-ms X]
//
// The job: every step each rank runs --kernels kernel names (a few instances
// each, with jitter) and --collectives all-reduces; each collective ends when
// the last rank arrives. Each host's trace clock is shifted by a different
// offset and records it in clock_offset_ns, as captured traces do. With
// --straggler, that rank's host launches its backward kernels --late-ms late
// from --from-step on, so the others wait for it.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/strings.h"
#include "ranks/rank_summary.h"

namespace {

using namespace stepscope;

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  int64_t Jitter(int64_t max) {
    return static_cast<int64_t>(Next() % static_cast<uint64_t>(max + 1));
  }
};

int Usage() {
  std::fprintf(
      stderr,
      "usage: make_rank_summaries OUT_DIR RANKS [--steps N] [--kernels N] [--collectives N]\n"
      "       [--ranks-per-host N] [--straggler RANK] [--from-step N] [--late-ms X]\n");
  return 2;
}

constexpr int64_t kStepNs = 100000000;  // 100 ms
constexpr int64_t kT0 = 1700000000000000000;

struct Options {
  std::string dir;
  int64_t ranks = 0, steps = 50, kernels = 80, collectives = 24, per_host = 8, straggler = -1,
          from_step = 10;
  double late_ms = 5;
};

bool ParseOptions(int argc, char** argv, Options* o) {
  if (argc < 3) return false;
  o->dir = argv[1];
  if (!ParseInt64(argv[2], &o->ranks) || o->ranks < 1) return false;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    bool ok = true;
    if (f == "--steps")
      ok = ParseInt64(argv[i + 1], &o->steps);
    else if (f == "--kernels")
      ok = ParseInt64(argv[i + 1], &o->kernels);
    else if (f == "--collectives")
      ok = ParseInt64(argv[i + 1], &o->collectives);
    else if (f == "--ranks-per-host")
      ok = ParseInt64(argv[i + 1], &o->per_host);
    else if (f == "--straggler")
      ok = ParseInt64(argv[i + 1], &o->straggler);
    else if (f == "--from-step")
      ok = ParseInt64(argv[i + 1], &o->from_step);
    else if (f == "--late-ms")
      ok = ParseDouble(argv[i + 1], &o->late_ms);
    else
      ok = false;
    if (!ok) return false;
  }
  return true;
}

// A named time series with one zero entry per step (count: `count` each).
NamedTimes EmptySeries(std::string name, int64_t steps, int64_t count) {
  NamedTimes n;
  n.name = std::move(name);
  n.total_ns.assign(static_cast<size_t>(steps), 0);
  n.count.assign(static_cast<size_t>(steps), count);
  n.median_ns.assign(static_cast<size_t>(steps), 0);
  return n;
}

// Rank r's identity, host clock and empty kernel and section tables (the
// all-reduce kernel last).
RankSummary EmptyRank(const Options& o, int64_t r) {
  RankSummary s;
  const int64_t host = r / o.per_host;
  s.trace = "synthetic_" + std::to_string(r) + ".sqlite";
  s.rank = r;
  s.local_rank = r % o.per_host;
  s.world_size = o.ranks;
  s.host = "node" + std::to_string(host);
  s.pid = 1000 + r;
  s.clock = "CLOCK_REALTIME";
  s.clock_offset_ns = -host * 1000;  // this host's clock reads host us ahead
  s.step_source = "nvtx";
  s.critical_stream = 7;
  for (int64_t k = 0; k < o.kernels; ++k) {
    s.kernels.push_back(
        EmptySeries("kernel_" + std::to_string(k) + "<float, 128, 4>(Params)", o.steps, 0));
    // The launch size, per step too (summary version 4), as a real summary has it.
    s.kernels.back().threads = 128 * (k + 1);
    s.kernels.back().step_threads.assign(static_cast<size_t>(o.steps), 128 * (k + 1));
  }
  for (const char* name : {"step", "forward", "backward", "optimizer", "data"}) {
    s.sections.push_back(EmptySeries(name, o.steps, 1));
  }
  NamedTimes nccl =
      EmptySeries("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                  o.steps, o.collectives);
  nccl.nccl = true;
  s.kernels.push_back(std::move(nccl));
  return s;
}

// Step st's compute kernels and sections on one rank; returns when the rank
// arrives at the step's first collective.
int64_t ComputeStep(const Options& o, int64_t st, bool slow, Rng* g, RankSummary* s) {
  const int64_t base = kT0 + st * kStepNs;
  const int64_t late = static_cast<int64_t>(o.late_ms * 1e6);
  const int64_t lateness = 2000000 + g->Jitter(200000) + (slow ? late : 0);
  int64_t busy = 0;
  for (int64_t k = 0; k < o.kernels; ++k) {
    NamedTimes& n = s->kernels[static_cast<size_t>(k)];
    const int64_t each = 100000 + (k % 10) * 50000 + g->Jitter(5000);
    n.count[static_cast<size_t>(st)] = 1 + k % 3;
    n.median_ns[static_cast<size_t>(st)] = each;
    n.total_ns[static_cast<size_t>(st)] = each * n.count[static_cast<size_t>(st)];
    busy += n.total_ns[static_cast<size_t>(st)];
  }
  StepSummary step;
  step.step = st;
  step.start_ns = base - s->clock_offset_ns;
  step.end_ns = base + kStepNs - 1000000 - s->clock_offset_ns;
  step.gpu_start_ns = step.start_ns + 500000;
  step.compute_ns = busy;
  step.launch_late_ns = lateness;
  step.kernels = 0;
  s->steps.push_back(step);
  const int64_t sections[] = {step.end_ns - step.start_ns, 30000000 + g->Jitter(300000),
                              50000000 + g->Jitter(300000) + (slow ? late : 0),
                              8000000 + g->Jitter(100000), 2000000 + g->Jitter(100000)};
  for (size_t k = 0; k < 5; ++k) {
    s->sections[k].total_ns[static_cast<size_t>(st)] = sections[k];
    s->sections[k].median_ns[static_cast<size_t>(st)] = sections[k];
  }
  return base + 10000000 + lateness + busy / 2;
}

// Step st's collectives on every rank: each starts when its rank is ready and
// ends 200 us after the last arrival (the next on a stream cannot start before
// the previous one ended). Closes the step: its communication and GPU end.
void CollectivesOfStep(const Options& o, int64_t st, const std::vector<int64_t>& arrive,
                       std::vector<RankSummary>* out) {
  const size_t ranks = out->size();
  std::vector<int64_t> start(ranks), comm(ranks, 0), overlap(ranks, 0);
  int64_t prev_end = 0;
  for (int64_t c = 0; c < o.collectives; ++c) {
    int64_t last = 0;
    for (size_t r = 0; r < ranks; ++r) {
      start[r] = std::max(arrive[r] + c * 300000, prev_end);
      last = std::max(last, start[r]);
    }
    const int64_t end = last + 200000;
    for (size_t r = 0; r < ranks; ++r) {
      RankSummary& s = (*out)[r];
      CollectiveSummary cs;
      cs.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
      cs.stream = 13;
      cs.seq = st * o.collectives + c;
      cs.step = st;
      cs.start_ns = start[r] - s.clock_offset_ns;
      cs.end_ns = end - s.clock_offset_ns;
      // Compute overlaps the first quarter of the 200 us transfer; the wait
      // before it is exposed (the rank has nothing else to run).
      cs.free_ns = (cs.end_ns - cs.start_ns) - std::min<int64_t>(50000, cs.end_ns - cs.start_ns);
      overlap[r] += (cs.end_ns - cs.start_ns) - cs.free_ns;
      s.collectives.push_back(cs);
      comm[r] += end - start[r];
    }
    prev_end = end;
  }
  for (size_t r = 0; r < ranks; ++r) {
    RankSummary& s = (*out)[r];
    StepSummary& step = s.steps.back();
    step.comm_ns = comm[r];
    step.overlap_ns = overlap[r];
    step.gpu_end_ns = s.collectives.back().end_ns;
    s.kernels.back().total_ns[static_cast<size_t>(st)] = comm[r];
    s.kernels.back().median_ns[static_cast<size_t>(st)] = comm[r] / o.collectives;
  }
}

int WriteSummaries(const std::string& dir, const std::vector<RankSummary>& out) {
  for (const RankSummary& s : out) {
    char name[64];
    std::snprintf(name, sizeof(name), "/rank_%05lld.summary.json", static_cast<long long>(s.rank));
    Status st = WriteFileAtomic(dir + name, SummaryToJson(s));
    if (!st.ok()) {
      std::fprintf(stderr, "make_rank_summaries: %s\n", st.message().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, &o)) return Usage();
  ::mkdir(o.dir.c_str(), 0755);
  std::vector<RankSummary> out;
  std::vector<Rng> rng;
  for (int64_t r = 0; r < o.ranks; ++r) {
    out.push_back(EmptyRank(o, r));
    rng.push_back(
        Rng{0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(r + 1) * 0x2545F4914F6CDD1Dull});
  }
  std::vector<int64_t> arrive(static_cast<size_t>(o.ranks));
  for (int64_t st = 0; st < o.steps; ++st) {
    for (int64_t r = 0; r < o.ranks; ++r) {
      const bool slow = r == o.straggler && st >= o.from_step;
      arrive[static_cast<size_t>(r)] =
          ComputeStep(o, st, slow, &rng[static_cast<size_t>(r)], &out[static_cast<size_t>(r)]);
    }
    CollectivesOfStep(o, st, arrive, &out);
  }
  return WriteSummaries(o.dir, out);
}
