// data_loading: the GPU idles waiting for the next batch (host-wait gaps at a
// step's first GPU op, between steps, or in a data-loading NVTX range).
// Fix: the loading overlapped with the previous step (DataLoader workers), and
// the batch's upload pinned and non-blocking (pin_memory=True, non_blocking=True),
// as the finding advises.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "analysis/rules/rule.h"
#include "analysis/whatif/pricing.h"
#include "common/intervals.h"
#include "common/strings.h"

namespace stepscope {
namespace {

// The program's DataLoader.__next__ calls in the steps (profile
// --loader-ranges), each exactly the host work a prefetch removes; the
// finding's host_spans then hold only the waits of threads without them,
// whose host time goes whole.
struct LoaderCalls : FindingData {
  std::vector<Finding::Span> spans;
  // gpu_ops rows of the batches' uploads from pageable memory (BatchUploads).
  std::vector<uint32_t> uploads;
};

// stepscope profile's DataLoader ranges per thread (kLoaderRangeName around each batch's
// next(), python/stepscope/_loader_ranges.py). A program's own data ranges are not used
// so: they may hold only part of the loading (train_gpt's "data" range is the batch's copy
// to the GPU).
std::map<uint32_t, std::vector<Interval>> LoaderRanges(const TraceModel& m) {
  std::map<uint32_t, std::vector<Interval>> loader;
  for (const NvtxRecord& r : m.nvtx()) {
    if (r.end_ns > r.start_ns && r.kind == NvtxKind::kPushPop &&
        m.String(r.name) == kLoaderRangeName)
      loader[r.tid].push_back({r.start_ns, r.end_ns});
  }
  for (auto& [tid, v] : loader) MergeIntervals(&v);  // a next() inside another's counts once
  return loader;
}

// The batches' uploads: pageable host->device copies that a thread issues inside one
// of its DataLoader.__next__ calls `spans` or after one, before its next kernel launch
// (`batch.to("cuda")` of an unpinned batch). A blocking upload waits for the GPU's queue
// to drain, so the host cannot run ahead into the next step even once the batch is
// ready; pinned and non_blocking it can.
std::vector<uint32_t> BatchUploads(const TraceModel& m, const std::vector<Finding::Span>& spans) {
  std::map<uint32_t, std::vector<Interval>> calls;  // per thread, sorted by start
  for (const Finding::Span& s : spans) calls[s.tid].push_back({s.start_ns, s.end_ns});
  std::map<uint32_t, std::vector<int64_t>> launches;  // their kernel launch calls
  for (const GpuOp& o : m.gpu_ops()) {
    if (o.kind != GpuOpKind::kKernel || o.api == kNone) continue;
    const ApiRecord& a = m.apis()[o.api];
    if (calls.count(a.tid)) launches[a.tid].push_back(a.start_ns);
  }
  for (auto& [tid, v] : calls)
    std::sort(v.begin(), v.end(),
              [](const Interval& x, const Interval& y) { return x.start < y.start; });
  for (auto& [tid, v] : launches) std::sort(v.begin(), v.end());
  std::vector<uint32_t> rows;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.kind != GpuOpKind::kMemcpy || o.api == kNone) continue;
    const MemcpyRecord& r = m.memcpys()[o.index];
    if (r.is_async != 1 || r.copy_kind != CopyKind::kHostToDevice || !IsPageableCopy(r)) continue;
    const ApiRecord& a = m.apis()[o.api];
    const auto mine = calls.find(a.tid);
    if (mine == calls.end()) continue;
    // The last next() that began before the copy's call.
    const std::vector<Interval>& v = mine->second;
    auto k = std::upper_bound(v.begin(), v.end(), a.start_ns,
                              [](int64_t t, const Interval& iv) { return t < iv.start; });
    if (k == v.begin()) continue;
    --k;
    const std::vector<int64_t>& l = launches[a.tid];
    const auto next_launch = std::lower_bound(l.begin(), l.end(), k->end);
    if (a.start_ns < k->end || next_launch == l.end() || *next_launch >= a.start_ns)
      rows.push_back(i);
  }
  return rows;
}

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  // Gaps at step starts that are no evidence of a wait for a batch, and why.
  const std::pair<int64_t, const char*> not_data[] = {
      {c.owners.undecided_data_ns,
       " of host-wait gaps at the starts of kernel-sequence steps: without step ranges (NVTX "
       "'step N' / ProfilerStep#N) or a data-loading range there is no evidence they waited for "
       "a batch"},
      {c.owners.no_loader_data_ns,
       " of host-wait gaps at step starts or between steps: the program took no batch from a "
       "torch DataLoader (profile's DataLoader ranges were on and recorded none), so they are "
       "other host work"}};
  for (const auto& [ns, why] : not_data) {
    if (ns > 0 && c.undecided) {
      c.undecided->push_back("data_loading: " + FormatDuration(ns) + why +
                             "; left to host_wait / launch_bound");
    }
  }
  const std::vector<size_t> mine = c.GapsOf(GapOwner::kDataLoading);
  if (mine.empty()) return;
  const std::map<uint32_t, std::vector<Interval>> loader = LoaderRanges(c.m);
  GapGroup data;
  int64_t host_between = 0, host_in_data = 0, data_wait_ns = 0;
  int64_t by_cause[4] = {0, 0, 0, 0};  // the gaps' idle time by cause (gaps.h), as the header
  std::set<uint32_t> loader_tids;      // threads of the loading waits that have DataLoader ranges
  for (size_t i : mine) {
    const GpuGap& g = c.gaps[i];
    const OwnedGap& o = c.owners.gaps[i];
    if (o.between_steps) {
      host_between += g.length();
    } else if (o.in_data) {
      host_in_data += g.length();
    }
    data.Add(c, g, o.host_range);
    by_cause[static_cast<int>(g.cause)] += g.length();
    const int64_t w0 = g.start_ns, w1 = std::max(g.launch_ns, g.start_ns);
    data_wait_ns += w1 - w0;
    if (loader.count(o.tid)) {
      loader_tids.insert(o.tid);  // priced by its next() calls (below), wherever they fall
    } else {
      data.f.host_spans.push_back({o.tid, w0, w1});
    }
  }
  Finding& f = data.f;
  const int64_t data_first = f.cost_ns;
  f.rule = "data_loading";
  f.title = "GPU idle waiting for the next batch at the start of steps (data loading)";
  const std::string host = host_between >= host_in_data
                               ? "the host was between steps (outside every step range)"
                               : "the host was in a data-loading NVTX range";
  f.where = "before the first launch of " + c.StepsText(data.steps) + " (device " +
            std::to_string(c.device) + "); " + host;
  // The gaps named by the cause the header counts them under (host-wait, or
  // sync-wait when the host blocked on the GPU first).
  std::string causes;
  int kinds = 0, only = 0;
  for (int k = 0; k < 4; ++k) {
    if (by_cause[k] == 0) continue;
    causes += std::string(kinds++ ? ", " : "") + GapCauseName(static_cast<GapCause>(k)) + " " +
              FormatDuration(by_cause[k]);
    only = k;
  }
  const std::string what =
      kinds == 1 ? std::string(" ") + GapCauseName(static_cast<GapCause>(only)) + " gaps: "
                 : " gaps (" + causes + "): ";
  f.detail = std::to_string(f.count) + what + FormatDuration(data_first) +
             " before the steps' first GPU work";
  if (!loader_tids.empty()) {
    // Every next() of those threads in the steps: what a prefetch hides. In a Hugging
    // Face Trainer it falls after the step's first GPU work (accelerate's
    // DataLoaderShard copies the batch it holds to the GPU, then fetches the next),
    // so it is priced wherever it is, the waits themselves left as they are (the rest
    // of the wait is the host's other work between steps, a Trainer's bookkeeping).
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (const Step& st : c.steps.steps) {
      t0 = std::min(t0, st.range_start_ns);
      t1 = std::max(t1, st.range_end_ns);
    }
    auto calls = std::make_shared<LoaderCalls>();
    int64_t ns = 0;
    for (uint32_t tid : loader_tids) {
      for (const Interval& iv : loader.at(tid)) {
        if (iv.start < t0 || iv.start >= t1) continue;
        calls->spans.push_back({tid, iv.start, iv.end});
        ns += iv.end - iv.start;
      }
    }
    calls->uploads = BatchUploads(c.m, calls->spans);
    f.detail += "; the host spent " + FormatDuration(data_wait_ns) + " in them, and " +
                FormatDuration(ns) + " in " + std::to_string(calls->spans.size()) + " " +
                std::string(kLoaderRangeName) +
                " calls in these steps: getting the batches, what a prefetch hides (the rest "
                "of the waits is other host work between steps and stays)";
    if (!calls->uploads.empty()) {
      f.detail += "; " + std::to_string(calls->uploads.size()) +
                  " uploads of the batches from pageable memory block the host until the GPU's "
                  "queue drains (`.to(\"cuda\")` of an unpinned batch), so it cannot run ahead "
                  "into the next step";
    }
    f.data = std::move(calls);
  }
  f.fix =
      "Feed the GPU faster: DataLoader(num_workers>0, pin_memory=True, persistent_workers=True, "
      "prefetch_factor=2..4); move tokenisation/augmentation out of the training loop; prefetch "
      "the next batch to the GPU while the current step runs.";
  c.FinishAtThreshold(&f);
  out->push_back(f);
}

// Waits of threads without DataLoader ranges go whole; the DataLoader.__next__
// calls of the others go exactly. Each keeps a worker-fed batch's fetch.
Fix Prefetch(const PricingContext& p, Finding* f) {
  const std::vector<whatif::HostSpan> waits = HostSpansOf(f->host_spans);
  std::vector<whatif::HostSpan> calls;
  std::vector<whatif::PinnedCopy> uploads;
  if (const auto* d = dynamic_cast<const LoaderCalls*>(f->data.get())) {
    for (const Finding::Span& s : d->spans) calls.push_back({s.tid, s.start_ns, s.end_ns});
    uploads = PinnedCopiesOf(p.c.m, p.g, d->uploads, p.c.machine, p.c.upload_sync, nullptr);
  }
  const int64_t fetch = std::max<int64_t>(0, p.c.opt.worker_fetch_ns);
  std::string what;
  if (!waits.empty()) what = std::to_string(waits.size()) + " waits";
  if (!calls.empty()) {
    what += (what.empty() ? "" : " and ") + std::to_string(calls.size()) + " " +
            std::string(kLoaderRangeName) + " calls";
  }
  return {[=](whatif::Graph* x) {
            return whatif::CutHostTime(x, waits, fetch) + whatif::CutHostOverlap(x, calls, fetch) +
                   whatif::PinCopies(x, uploads);
          },
          "data loading overlapped with the previous step (" + what + " cut to " +
              FormatFixed(fetch / 1e6, 2) + " ms, a worker-fed batch's fetch" +
              (uploads.empty() ? std::string()
                               : "; the " + std::to_string(uploads.size()) +
                                     " batch uploads pinned and non-blocking") +
              ")"};
}

}  // namespace

extern const Rule kDataLoadingRule{
    .id = "data_loading",
    .summary = "GPU idle waiting for the next batch at the start of steps (host-wait)",
    .detect = Detect,
    .fix = Prefetch,
};

}  // namespace stepscope
