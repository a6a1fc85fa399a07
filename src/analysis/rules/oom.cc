// oom: the process ran out of device memory (rules/oom.h: the finding, which
// `memory` shows too). It leads the findings, costing the whole analyzed time.
#include "analysis/rules/oom.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/model/trace_model.h"
#include "analysis/rules/rule.h"
#include "common/strings.h"
#include "plan/select.h"
#include "store/memory_rows.h"
#include "store/trace_reader.h"

namespace stepscope {
namespace {

bool AllocationApi(const std::string& n) {
  return (n.find("Malloc") != std::string::npos || n.find("MemAlloc") != std::string::npos ||
          n.find("MemCreate") != std::string::npos) &&
         n.find("Host") == std::string::npos;
}

std::string Pct(double v) { return "+" + FormatFixed(100.0 * v, 0) + "%"; }

std::string Bytes(int64_t b) { return FormatBytes(static_cast<uint64_t>(std::max<int64_t>(b, 0))); }

}  // namespace

// The innermost NVTX range of `tid` covering `t`: closed ranges that end at or
// after t, and ranges never closed (end -1: the process died inside them).
uint32_t InnermostRangeAt(const TraceModel& m, uint32_t tid, int64_t t) {
  uint32_t best = kNone;
  for (uint32_t i = 0; i < m.nvtx().size(); ++i) {
    const NvtxRecord& r = m.nvtx()[i];
    if (r.tid != tid || r.start_ns > t || r.kind == NvtxKind::kMark) continue;
    if (r.end_ns >= r.start_ns && r.end_ns < t) continue;
    if (best == kNone || r.depth > m.nvtx()[best].depth ||
        (r.depth == m.nvtx()[best].depth && r.start_ns > m.nvtx()[best].start_ns)) {
      best = i;
    }
  }
  return best;
}

namespace {

// The NVTX ranges open on `tid` at `t`, outermost first.
std::string OpenRanges(const TraceModel& m, uint32_t tid, int64_t t, bool* never_closed) {
  uint32_t r = InnermostRangeAt(m, tid, t);
  if (r == kNone && tid != m.main_tid()) r = InnermostRangeAt(m, m.main_tid(), t);
  std::vector<std::string> chain;
  *never_closed = r != kNone && m.nvtx()[r].end_ns < m.nvtx()[r].start_ns;
  for (int guard = 0; r != kNone && guard < 64; ++guard) {
    chain.push_back("`" + m.String(m.nvtx()[r].name) + "`");
    r = m.nvtx_parent()[r];
  }
  std::reverse(chain.begin(), chain.end());
  return Join(chain, " > ");
}

struct LiveSet {
  int64_t total = 0, before_step = 0, count = 0;
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> holders;  // name, bytes, count
};

// Device allocations live at `t` on `device` (-1: any), grouped by the NVTX
// range their allocation call ran in.
LiveSet LiveAt(const TraceModel& m, int64_t t, int32_t device, int64_t step_start) {
  struct Alloc {
    int64_t bytes, ts;
    uint32_t range;
  };
  std::unordered_map<uint64_t, Alloc> live;
  for (const MemoryRecord& r : m.memory()) {
    if (r.ts_ns > t) break;
    if (r.memory_kind != MemoryKind::kDevice && r.memory_kind != MemoryKind::kUnknown) continue;
    if (device >= 0 && r.device != static_cast<uint32_t>(device)) continue;
    if (r.op == MemoryOp::kAlloc) {
      uint32_t api = r.correlation ? m.ApiByCorrelation(r.correlation) : kNone;
      uint32_t range = api != kNone ? m.api_range()[api] : kNone;
      live[r.address] = {static_cast<int64_t>(r.bytes), r.ts_ns, range};
    } else if (r.op == MemoryOp::kFree) {
      live.erase(r.address);
    }
  }
  LiveSet s;
  std::map<std::string, std::pair<int64_t, int64_t>> groups;
  for (const auto& [addr, a] : live) {
    s.total += a.bytes;
    ++s.count;
    if (step_start >= 0 && a.ts < step_start) s.before_step += a.bytes;
    std::string name =
        a.range == kNone ? "no NVTX range" : "`" + m.String(m.nvtx()[a.range].name) + "`";
    groups[name].first += a.bytes;
    ++groups[name].second;
  }
  s.holders.assign(groups.begin(), groups.end());
  std::sort(s.holders.begin(), s.holders.end(), [](const auto& x, const auto& y) {
    return x.second.first != y.second.first ? x.second.first > y.second.first : x.first < y.first;
  });
  return s;
}

// Fixes from the planner: settings that fit, with savings and costs.
std::string PlannedFixes(const OomModel& om, int64_t had, int64_t observed_need,
                         std::string* detail) {
  auto base = plan::ComputePlan(om.model, om.options);
  if (!base.ok())
    return "The model given with --model could not be planned: " + base.status().message();
  int64_t without_context = base->total_bytes - base->cuda_context;
  int64_t extra = std::max<int64_t>(0, observed_need - without_context);
  *detail += "; the plan for " + om.model.model_type + " (" + om.model.source + ", micro-batch " +
             FormatCount(om.options.micro_batch) + " x seq " + FormatCount(om.options.seq_len) +
             ") needs " + Bytes(base->total_bytes) + " per GPU (peak allocated " +
             Bytes(base->peak_allocated) + " at the " + base->peak_moment + ")";
  if (extra > 0) {
    *detail += "; the trace held " + Bytes(extra) +
               " more than planned (other allocations, fragmentation), kept in the fixes";
  }
  int64_t capacity = had - extra;
  auto cands = plan::FittingCandidates(om.model, om.options, capacity, 12);
  std::vector<std::string> lines;
  for (const plan::Candidate& c : cands) {
    if (c.changes.empty()) continue;
    lines.push_back(c.changes + ": saves " + Bytes(base->total_bytes - c.total_bytes) +
                    ", step time " + Pct(c.relative_time - 1));
    if (lines.size() == 5) break;
  }
  if (lines.empty()) {
    return "None of the planner's changes (micro-batch, recompute, ZeRO, TP, offload) fits " +
           Bytes(capacity) +
           "; a GPU with more memory or more GPUs (--dp with --zero 3) is needed.";
  }
  return "Changes that fit " + Bytes(had) +
         " (planned saving, estimated step-time cost; "
         "`stepscope plan` for the breakdown): " +
         Join(lines, "; ") + ".";
}

// Fixes from the live set's composition when the model is not known.
std::string GenericFixes(const LiveSet& live, int64_t shortfall, bool step_known) {
  int64_t during = live.total - live.before_step;
  std::vector<std::string> lines;
  auto line = [&](const std::string& what, int64_t saves, const char* cost, bool upper) {
    lines.push_back(what + ": frees " + (upper ? "up to " : "about ") + Bytes(saves) +
                    ", step time " + cost +
                    (saves >= shortfall ? " (fits)" : " (not enough alone)"));
  };
  if (step_known && during > 0) {
    line("halve the micro-batch (2x gradient accumulation)", during / 2, "+4%", false);
    line("activation checkpointing (torch.utils.checkpoint per layer)", during * 9 / 10, "+33%",
         true);
  }
  if (step_known && live.before_step > 0) {
    // With Adam, gradients and optimizer state are 3/4 of the model state.
    line("shard gradients and optimizer state over 8 GPUs (ZeRO-2 / FSDP)",
         live.before_step * 3 / 4 * 7 / 8, "+0-15%", true);
  }
  if (!step_known) {
    line("halve the micro-batch (2x gradient accumulation)", live.total / 4, "+4%", true);
  }
  std::string s = "Short by " + Bytes(shortfall) + "; changes (memory freed, step-time cost): ";
  s += Join(lines, "; ") + ". ";
  s += "For exact savings describe the run: stepscope analyze --model config.json --micro-batch N "
       "--seq-len N TRACE (docs/plan.md).";
  return s;
}

}  // namespace

std::vector<OomRow> LoadOomRows(const TraceModel& m) {
  std::vector<OomRow> rows;
  std::set<uint32_t> seen;
  if (!m.path().empty()) {
    auto reader = TraceReader::Open(m.path());
    std::vector<OomTableRow> table;
    if (reader.ok()) {
      if (auto loaded = LoadOomTable((*reader)->db()); loaded.ok()) table = std::move(*loaded);
    }
    for (const OomTableRow& row : table) {
      OomRow o;
      o.ts_ns = row.ts_ns;
      o.tid = static_cast<uint32_t>(row.tid);
      o.device = static_cast<int32_t>(row.device);
      if (uint32_t corr = static_cast<uint32_t>(row.correlation)) seen.insert(corr);
      o.api = (*reader)->String(static_cast<StringId>(row.name_id));
      o.requested_bytes = row.requested_bytes;
      o.free_bytes = row.free_bytes;
      o.total_bytes = row.total_bytes;
      o.from_oom_table = true;
      rows.push_back(o);
    }
  }
  // 2: cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY.
  for (const ApiRecord& a : m.apis()) {
    if (a.return_code != 2 || (a.correlation && seen.count(a.correlation))) continue;
    if (!AllocationApi(m.String(a.name))) continue;
    OomRow o;
    o.ts_ns = a.end_ns;
    o.tid = a.tid;
    o.api = m.String(a.name);
    rows.push_back(o);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OomRow& x, const OomRow& y) { return x.ts_ns < y.ts_ns; });
  return rows;
}

Finding OomFinding(const TraceModel& m, const std::vector<OomRow>& rows, int64_t step_start_ns,
                   int64_t step_number, const OomModel* model) {
  size_t pick = rows.size() - 1;
  for (size_t i = rows.size(); i-- > 0;) {
    if (rows[i].from_oom_table) {
      pick = i;
      break;
    }
  }
  const OomRow& o = rows[pick];
  Finding f;
  f.rule = "oom";
  f.count = static_cast<int64_t>(rows.size());
  int64_t had = o.total_bytes;
  if (had <= 0 && o.device >= 0) {
    if (const DeviceRecord* d = m.Device(static_cast<uint32_t>(o.device))) {
      had = static_cast<int64_t>(d->global_memory_bytes);
    }
  }
  std::string dev = o.device >= 0 ? "device " + std::to_string(o.device) : "the device";
  f.title = "Out of memory on " + dev + ": " + (o.api.empty() ? "an allocation" : o.api) + " of " +
            (o.requested_bytes >= 0 ? Bytes(o.requested_bytes) : "unknown size") + " failed" +
            (o.free_bytes >= 0 ? " with " + Bytes(o.free_bytes) + " free" : "") +
            (had > 0 ? " of " + Bytes(had) : "");
  bool never_closed = false;
  std::string ranges = OpenRanges(m, o.tid, o.ts_ns, &never_closed);
  char rel[48];
  std::snprintf(rel, sizeof(rel), "+%.6f s", (o.ts_ns - m.origin_ns()) / 1e9);
  f.where =
      dev + " at " + rel + (step_number >= 0 ? " (step " + std::to_string(step_number) + ")" : "") +
      (ranges.empty() ? ", outside NVTX ranges"
                      : ", inside " + ranges +
                            (never_closed ? " (never closed: the process died inside it)" : ""));
  LiveSet live = LiveAt(m, o.ts_ns, o.device, step_start_ns);
  int64_t requested = std::max<int64_t>(o.requested_bytes, 0);
  int64_t shortfall =
      o.free_bytes >= 0 ? std::max<int64_t>(requested - o.free_bytes, 0) : requested;
  int64_t need = live.total + requested;
  f.detail = "needed at least " + Bytes(need) + " (" + Bytes(live.total) + " live in " +
             FormatCount(live.count) + " device allocations + the " + Bytes(requested) +
             " requested)" + (had > 0 ? ", had " + Bytes(had) : "");
  if (step_start_ns >= 0) {
    f.detail += "; " + Bytes(live.before_step) +
                " allocated before the step (parameters, "
                "gradients, optimizer state), " +
                Bytes(live.total - live.before_step) + " during it (activations, temporaries)";
  }
  std::vector<std::string> top;
  for (size_t i = 0; i < live.holders.size() && i < 5; ++i) {
    const auto& [name, v] = live.holders[i];
    top.push_back(name + " " + Bytes(v.first) + " (" + FormatCount(v.second) + ")");
  }
  if (!top.empty()) f.detail += "; largest holders by NVTX range: " + Join(top, ", ");
  if (pick > 0)
    f.detail += "; " + FormatCount(static_cast<int64_t>(pick)) + " failed allocation(s) before it";
  if (pick + 1 < rows.size()) {
    f.detail += "; " + FormatCount(static_cast<int64_t>(rows.size() - pick - 1)) +
                " failed allocation(s) after it without an oom record";
  }
  if (model) {
    f.fix = PlannedFixes(*model, had > 0 ? had : need, need, &f.detail);
  } else {
    f.fix = GenericFixes(live, shortfall > 0 ? shortfall : requested, step_start_ns >= 0);
  }
  uint32_t inner = InnermostRangeAt(m, o.tid, o.ts_ns);
  f.examples.push_back(
      {step_number, o.ts_ns, o.ts_ns, inner == kNone ? "" : m.String(m.nvtx()[inner].name), 0});
  return f;
}

std::vector<Finding> OomFindings(const TraceModel& m, const StepSet& steps, const OomModel* model) {
  std::vector<OomRow> rows = LoadOomRows(m);
  if (rows.empty()) return {};
  const OomRow* last = &rows.back();
  for (const OomRow& r : rows) {
    if (r.from_oom_table) last = &r;
  }
  int64_t step_start = -1, step_number = -1;
  int st = steps.AtHostTime(last->ts_ns);
  if (st >= 0) {
    step_start = steps.steps[st].start_ns;
    step_number = steps.steps[st].number;
  } else if (uint32_t r = InnermostRangeAt(m, last->tid, last->ts_ns); r != kNone) {
    // The failing step's range may never have closed: take the outermost open range.
    while (m.nvtx_parent()[r] != kNone) r = m.nvtx_parent()[r];
    step_start = m.nvtx()[r].start_ns;
    const std::string& name = m.String(m.nvtx()[r].name);
    int64_t n = -1;
    if (StartsWith(name, "step ") && ParseInt64(name.substr(5), &n)) step_number = n;
  }
  return {OomFinding(m, rows, step_start, step_number, model)};
}

namespace {

void Detect(const RuleContext& c, std::vector<Finding>* out) {
  for (Finding& f : OomFindings(c.m, c.steps, c.opt.oom_model.get())) {
    // The process died: the run's whole analyzed time is at stake.
    f.cost_ns = c.analyzed_ns;
    c.Finish(&f, true);
    out->push_back(std::move(f));
  }
}

}  // namespace

extern const Rule kOomRule{
    .id = "oom",
    .summary = "the process ran out of device memory: where, the holders, the changes that fit",
    .detect = Detect,
    .leads = true,  // a dead run leads the findings
};

}  // namespace stepscope
