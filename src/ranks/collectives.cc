// Collective matching across ranks.
//
// Every rank runs the same sequence of collectives on a communicator, so the
// k-th AllReduce on a rank's first NCCL stream in step 12 is the same
// collective on every rank. The key is (kernel name, NCCL stream ordinal,
// step, occurrence within the step); collectives outside any step fall back
// to their sequence number in the trace. Keying by step rather than by a
// global sequence keeps ranks whose traces start at different steps aligned.
//
// For each collective the rank with the latest (clock-aligned) kernel start
// arrived last; an NCCL kernel spins until every rank has arrived, so each
// other rank's kernel duration minus the last rank's is the time it spun
// waiting for it. That spin costs nothing while the rank's own compute
// kernels run beside it (DDP overlaps bucket all-reduces with backward), so
// the wait that counts is the *exposed* wait: the rank's compute-free time
// in the collective (CollectiveSummary::free_ns) minus the last arrival's,
// not below 0, and 0 when it did not spin at all. Subtracting the last
// arrival's compute-free time removes the transfer time every rank exposes;
// what remains includes the transfers that an earlier wait pushed past the
// rank's own compute (collectives on one stream queue behind the one that
// waits), which is what the wait costs the rank's step (docs/ranks.md).
// Summaries without free times (version 1) fall back to the spin. Ranks finish a collective at
// nearly the same moment, which gives a clock check for free: a host whose end times sit
// consistently apart from the others' has a skewed clock.
#include <algorithm>
#include <unordered_map>

#include "common/stats.h"
#include "ranks/ranks_internal.h"

namespace stepscope {

int StepPosition(const RanksAnalysis& a, int64_t step) {
  auto it = std::lower_bound(a.steps.begin(), a.steps.end(), step);
  return it != a.steps.end() && *it == step ? static_cast<int>(it - a.steps.begin()) : -1;
}

namespace {

struct Key {
  int32_t name;
  int32_t stream;
  int64_t step;
  int64_t seq;
  bool operator==(const Key& o) const {
    return name == o.name && stream == o.stream && step == o.step && seq == o.seq;
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = static_cast<uint64_t>(static_cast<uint32_t>(k.name)) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<uint64_t>(static_cast<uint32_t>(k.stream)) + 0x632BE59BD9B4E019ull + (h << 6) +
         (h >> 2);
    h ^= static_cast<uint64_t>(k.step) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.seq) * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

struct Member {
  uint32_t rank;
  int64_t start, end;  // aligned
  int64_t free;        // compute-free ns, -1 unknown
};

}  // namespace

std::vector<int64_t> MatchCollectives(RanksAnalysis* a, std::vector<bool>* steps_with_collectives) {
  const size_t nranks = a->ranks.size();
  const size_t nsteps = a->steps.size();
  a->collectives.clear();
  a->waited.assign(nranks, std::vector<int64_t>(nsteps, 0));
  a->caused.assign(nranks, std::vector<int64_t>(nsteps, 0));
  a->held.assign(nranks, std::vector<int64_t>(nsteps, 0));
  steps_with_collectives->assign(nsteps, false);
  for (RankResult& r : a->ranks) r.collectives = r.last_arrivals = 0;

  std::unordered_map<std::string, int32_t> name_ids;
  std::vector<const std::string*> names;
  std::unordered_map<Key, uint32_t, KeyHash> index;
  std::vector<Key> keys;
  std::vector<std::vector<Member>> members;
  std::unordered_map<Key, int64_t, KeyHash> in_step;  // occurrences so far, per rank
  for (size_t r = 0; r < nranks; ++r) {
    const RankSummary& s = a->summaries[r];
    const int64_t offset = a->ranks[r].offset_ns;
    in_step.clear();
    for (const CollectiveSummary& c : s.collectives) {
      auto [nit, new_name] = name_ids.emplace(c.name, static_cast<int32_t>(names.size()));
      if (new_name) names.push_back(&nit->first);
      Key key{nit->second, c.stream_index, c.step, c.seq};
      if (c.step != kNoStep) key.seq = in_step[Key{key.name, key.stream, c.step, 0}]++;
      auto [it, inserted] = index.emplace(key, static_cast<uint32_t>(members.size()));
      if (inserted) {
        members.emplace_back();
        keys.push_back(key);
      }
      members[it->second].push_back(
          {static_cast<uint32_t>(r), c.start_ns + offset, c.end_ns + offset, c.free_ns});
    }
  }

  std::vector<std::vector<int64_t>> end_dev(nranks);
  std::vector<int64_t> waits, ends;
  bool unknown_free = false;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::vector<Member>& m = members[i];
    if (m.size() < 2) continue;
    const Key& key = keys[i];
    // Last arrival: latest aligned start; on a tie the shorter kernel (it waited least).
    size_t last = 0;
    int64_t first_start = m[0].start;
    for (size_t j = 1; j < m.size(); ++j) {
      first_start = std::min(first_start, m[j].start);
      const int64_t dj = m[j].end - m[j].start, dl = m[last].end - m[last].start;
      if (m[j].start > m[last].start || (m[j].start == m[last].start && dj < dl)) last = j;
    }
    const int64_t last_dur = m[last].end - m[last].start;
    const int pos = key.step == kNoStep ? -1 : StepPosition(*a, key.step);
    waits.clear();
    int64_t max_spin = 0, held = -1;
    int next_last = -1;
    for (size_t j = 0; j < m.size(); ++j) {
      a->ranks[m[j].rank].collectives++;
      if (j == last) continue;
      const int64_t spin = std::max<int64_t>(0, (m[j].end - m[j].start) - last_dur);
      max_spin = std::max(max_spin, spin);
      int64_t w = 0;
      if (spin > 0 && (m[j].free < 0 || m[last].free < 0)) {
        w = spin;
        unknown_free = true;
      } else if (spin > 0) {
        w = std::max<int64_t>(0, m[j].free - m[last].free);
      }
      waits.push_back(w);
      if (held < 0 || w < held) held = w, next_last = static_cast<int>(m[j].rank);
      if (pos >= 0) a->waited[m[j].rank][static_cast<size_t>(pos)] += w;
    }
    MatchedCollective mc;
    mc.name = *names[static_cast<size_t>(key.name)];
    mc.stream_index = key.stream;
    mc.step = key.step;
    mc.seq = key.seq;
    mc.ranks = static_cast<int>(m.size());
    mc.last = static_cast<int>(m[last].rank);
    mc.start_ns = first_start;
    mc.spread_ns = m[last].start - first_start;
    mc.max_spin_ns = max_spin;
    mc.max_wait_ns = *std::max_element(waits.begin(), waits.end());
    mc.median_wait_ns = static_cast<int64_t>(Median(waits));
    mc.held_ns = held;
    mc.next_last = next_last;
    if (mc.spread_ns > 0) a->ranks[m[last].rank].last_arrivals++;  // a tie has no last arrival
    if (pos >= 0) {
      a->caused[m[last].rank][static_cast<size_t>(pos)] += mc.median_wait_ns;
      a->held[m[last].rank][static_cast<size_t>(pos)] += mc.held_ns;
      (*steps_with_collectives)[static_cast<size_t>(pos)] = true;
    }
    a->collectives.push_back(std::move(mc));
    // Clock check: each end's distance from the collective's median end.
    ends.clear();
    for (const Member& x : m) ends.push_back(x.end);
    const int64_t median_end = static_cast<int64_t>(Median(ends));
    for (const Member& x : m) end_dev[x.rank].push_back(x.end - median_end);
  }
  if (unknown_free) {
    const std::string note =
        "some summaries have no compute-free times (version 1): their waits are the whole spin "
        "inside the NCCL kernel, overlapped or not; re-create them with 'stepscope summarize'";
    if (std::find(a->notes.begin(), a->notes.end(), note) == a->notes.end())
      a->notes.push_back(note);
  }
  std::stable_sort(a->collectives.begin(), a->collectives.end(),
                   [](const MatchedCollective& x, const MatchedCollective& y) {
                     return x.start_ns < y.start_ns;
                   });
  std::vector<int64_t> skew(nranks, 0);
  for (size_t r = 0; r < nranks; ++r) {
    if (!end_dev[r].empty()) skew[r] = static_cast<int64_t>(Median(end_dev[r]));
  }
  return skew;
}

}  // namespace stepscope
