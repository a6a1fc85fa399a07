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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string dir = argv[1];
  int64_t ranks = 0, steps = 50, kernels = 80, collectives = 24, per_host = 8, straggler = -1,
          from_step = 10;
  double late_ms = 5;
  if (!ParseInt64(argv[2], &ranks) || ranks < 1) return Usage();
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    bool ok = true;
    if (f == "--steps")
      ok = ParseInt64(argv[i + 1], &steps);
    else if (f == "--kernels")
      ok = ParseInt64(argv[i + 1], &kernels);
    else if (f == "--collectives")
      ok = ParseInt64(argv[i + 1], &collectives);
    else if (f == "--ranks-per-host")
      ok = ParseInt64(argv[i + 1], &per_host);
    else if (f == "--straggler")
      ok = ParseInt64(argv[i + 1], &straggler);
    else if (f == "--from-step")
      ok = ParseInt64(argv[i + 1], &from_step);
    else if (f == "--late-ms")
      ok = ParseDouble(argv[i + 1], &late_ms);
    else
      ok = false;
    if (!ok) return Usage();
  }
  ::mkdir(dir.c_str(), 0755);
  const int64_t step_ns = 100000000;  // 100 ms
  const int64_t t0 = 1700000000000000000;
  const int64_t late = static_cast<int64_t>(late_ms * 1e6);

  std::vector<RankSummary> out(static_cast<size_t>(ranks));
  std::vector<Rng> rng;
  for (int64_t r = 0; r < ranks; ++r) {
    RankSummary& s = out[static_cast<size_t>(r)];
    const int64_t host = r / per_host;
    s.trace = "synthetic_" + std::to_string(r) + ".sqlite";
    s.rank = r;
    s.local_rank = r % per_host;
    s.world_size = ranks;
    s.host = "node" + std::to_string(host);
    s.pid = 1000 + r;
    s.clock = "CLOCK_REALTIME";
    s.clock_offset_ns = -host * 1000;  // this host's clock reads host us ahead
    s.step_source = "nvtx";
    s.critical_stream = 7;
    rng.push_back(
        Rng{0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(r + 1) * 0x2545F4914F6CDD1Dull});
    for (int64_t k = 0; k < kernels; ++k) {
      NamedTimes n;
      n.name = "kernel_" + std::to_string(k) + "<float, 128, 4>(Params)";
      n.total_ns.assign(static_cast<size_t>(steps), 0);
      n.count.assign(static_cast<size_t>(steps), 0);
      n.median_ns.assign(static_cast<size_t>(steps), 0);
      s.kernels.push_back(std::move(n));
    }
    for (const char* name : {"step", "forward", "backward", "optimizer", "data"}) {
      NamedTimes n;
      n.name = name;
      n.total_ns.assign(static_cast<size_t>(steps), 0);
      n.count.assign(static_cast<size_t>(steps), 1);
      n.median_ns.assign(static_cast<size_t>(steps), 0);
      s.sections.push_back(std::move(n));
    }
    NamedTimes nccl;
    nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    nccl.nccl = true;
    nccl.total_ns.assign(static_cast<size_t>(steps), 0);
    nccl.count.assign(static_cast<size_t>(steps), collectives);
    nccl.median_ns.assign(static_cast<size_t>(steps), 0);
    s.kernels.push_back(std::move(nccl));
  }

  std::vector<int64_t> arrive(static_cast<size_t>(ranks)), start(static_cast<size_t>(ranks));
  for (int64_t st = 0; st < steps; ++st) {
    const int64_t base = t0 + st * step_ns;
    for (int64_t r = 0; r < ranks; ++r) {
      RankSummary& s = out[static_cast<size_t>(r)];
      Rng& g = rng[static_cast<size_t>(r)];
      const bool slow = r == straggler && st >= from_step;
      const int64_t lateness = 2000000 + g.Jitter(200000) + (slow ? late : 0);
      int64_t busy = 0;
      for (int64_t k = 0; k < kernels; ++k) {
        NamedTimes& n = s.kernels[static_cast<size_t>(k)];
        const int64_t each = 100000 + (k % 10) * 50000 + g.Jitter(5000);
        n.count[static_cast<size_t>(st)] = 1 + k % 3;
        n.median_ns[static_cast<size_t>(st)] = each;
        n.total_ns[static_cast<size_t>(st)] = each * n.count[static_cast<size_t>(st)];
        busy += n.total_ns[static_cast<size_t>(st)];
      }
      arrive[static_cast<size_t>(r)] = base + 10000000 + lateness + busy / 2;
      StepSummary step;
      step.step = st;
      step.start_ns = base - s.clock_offset_ns;
      step.end_ns = base + step_ns - 1000000 - s.clock_offset_ns;
      step.gpu_start_ns = step.start_ns + 500000;
      step.compute_ns = busy;
      step.launch_late_ns = lateness;
      step.kernels = 0;
      s.steps.push_back(step);
      const int64_t sections[] = {step.end_ns - step.start_ns, 30000000 + g.Jitter(300000),
                                  50000000 + g.Jitter(300000) + (slow ? late : 0),
                                  8000000 + g.Jitter(100000), 2000000 + g.Jitter(100000)};
      for (size_t k = 0; k < 5; ++k) {
        s.sections[k].total_ns[static_cast<size_t>(st)] = sections[k];
        s.sections[k].median_ns[static_cast<size_t>(st)] = sections[k];
      }
    }
    // Collectives: each starts when its rank is ready and ends 200 us after the last arrival.
    // (the next on a stream cannot start before the previous one ended).
    std::vector<int64_t> comm(static_cast<size_t>(ranks), 0), overlap(comm);
    int64_t prev_end = 0;
    for (int64_t c = 0; c < collectives; ++c) {
      int64_t last = 0;
      for (int64_t r = 0; r < ranks; ++r) {
        start[static_cast<size_t>(r)] =
            std::max(arrive[static_cast<size_t>(r)] + c * 300000, prev_end);
        last = std::max(last, start[static_cast<size_t>(r)]);
      }
      const int64_t end = last + 200000;
      for (int64_t r = 0; r < ranks; ++r) {
        RankSummary& s = out[static_cast<size_t>(r)];
        CollectiveSummary cs;
        cs.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
        cs.stream = 13;
        cs.seq = st * collectives + c;
        cs.step = st;
        cs.start_ns = start[static_cast<size_t>(r)] - s.clock_offset_ns;
        cs.end_ns = end - s.clock_offset_ns;
        // Compute overlaps the first quarter of the 200 us transfer; the wait
        // before it is exposed (the rank has nothing else to run).
        cs.free_ns = (cs.end_ns - cs.start_ns) - std::min<int64_t>(50000, cs.end_ns - cs.start_ns);
        overlap[static_cast<size_t>(r)] += (cs.end_ns - cs.start_ns) - cs.free_ns;
        s.collectives.push_back(cs);
        comm[static_cast<size_t>(r)] += end - start[static_cast<size_t>(r)];
      }
      prev_end = end;
    }
    for (int64_t r = 0; r < ranks; ++r) {
      RankSummary& s = out[static_cast<size_t>(r)];
      StepSummary& step = s.steps.back();
      step.comm_ns = comm[static_cast<size_t>(r)];
      step.overlap_ns = overlap[static_cast<size_t>(r)];
      step.gpu_end_ns = s.collectives.back().end_ns;
      s.kernels.back().total_ns[static_cast<size_t>(st)] = comm[static_cast<size_t>(r)];
      s.kernels.back().median_ns[static_cast<size_t>(st)] =
          comm[static_cast<size_t>(r)] / collectives;
    }
  }
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
