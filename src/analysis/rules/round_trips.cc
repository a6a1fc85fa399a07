// Host round trips (rule.h, RoundTrip; docs/rules.md "Host round trips"):
// found once from the trace's blocking calls (HostBlocks, gaps.h), named
// (the op, the Python line), and told apart: data-dependent ones inside the
// model (data_dependent_sync) and the rest (host_sync).
#include <algorithm>
#include <cctype>
#include <map>

#include "analysis/rules/rule.h"
#include "common/strings.h"

namespace stepscope {
namespace {

std::string Lower(std::string_view s) {
  std::string v(s.substr(0, 4096));
  for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return v;
}

// A file of the torch package itself (site-packages/torch/...), not the model's.
bool IsTorchFile(std::string_view path) {
  const size_t t = path.find("/torch/");
  if (t == std::string_view::npos) return false;
  const std::string_view before = path.substr(0, t);
  return before.find("-packages") != std::string_view::npos ||
         before.find("/lib/python") != std::string_view::npos;
}

// A kernel name cut to about 60 characters around the word that named the op.
std::string Around(const std::string& name, size_t at) {
  if (name.size() <= 60) return name;
  const size_t from = at > 30 ? at - 30 : 0;
  return (from ? "..." : "") + name.substr(from, 60) + (from + 60 < name.size() ? "..." : "");
}

// A frame of a module's forward or backward: `X.forward`, a module call
// (torch/nn/modules/module.py _call_impl), or a custom autograd Function's
// backward (model code; torch's own Tensor.backward is the loop's call).
bool IsModelFrame(const TraceModel& m, const FrameRecord& f) {
  if (f.kind != static_cast<uint8_t>(FrameKind::kPython) || f.function == kNoString) return false;
  const std::string& fn = m.String(f.function);
  const std::string& file = f.file != kNoString ? m.String(f.file) : std::string();
  if (fn == "forward" || EndsWith(fn, ".forward")) return true;
  if (EndsWith(fn, ".backward") && !IsTorchFile(file)) return true;
  return EndsWith(file, "torch/nn/modules/module.py") &&
         (fn == "_call_impl" || fn == "_wrapped_call_impl" || EndsWith(fn, "._call_impl"));
}

// A saved-tensor hook (torch/autograd/graph.py: save_on_cpu's pack/unpack):
// its copies move activations, they read no value for the model.
bool IsSavedTensorHook(const TraceModel& m, const FrameRecord& f) {
  return f.file != kNoString && EndsWith(m.String(f.file), "torch/autograd/graph.py");
}

// The op that needed the value, from the trace's evidence: an operator range
// around the call, the kernel that produced the value, the size read back.
void NameOp(const RuleContext& c, uint32_t range, RoundTrip* t) {
  const TraceModel& m = c.m;
  // The outermost aten:: range: the op the model called (aten::item around
  // aten::_local_scalar_dense).
  std::string aten;
  for (uint32_t r = range; r != kNone && r < m.nvtx().size(); r = m.nvtx_parent()[r]) {
    const std::string& n = m.String(m.nvtx()[r].name);
    if (n.substr(0, 6) == "aten::") aten = n;
  }
  if (!aten.empty()) {
    t->op = aten;
    t->op_evidence = "its NVTX range";
    return;
  }
  if (t->read_back == kNone) {
    t->op = "synchronize";
    t->op_evidence = "no value read back";
    return;
  }
  if (t->producer != kNone) {
    const GpuOp& k = m.gpu_ops()[t->producer];
    const std::string name = m.OpName(k);
    const std::string l = Lower(name);
    struct Known {
      const char* needle;
      const char* op;
    };
    static const Known kKnown[] = {
        {"nonzero", "aten::nonzero"},   {"unique", "aten::unique"},
        {"bincount", "aten::bincount"}, {"histogram", "aten::histc"},
        {"cumsum", "a cumsum's total"}, {"devicescan", "a cumsum's total"},
        {"scan_", "a cumsum's total"},  {"masked_select", "aten::masked_select"},
    };
    for (const Known& x : kKnown) {
      const size_t at = l.find(x.needle);
      if (at == std::string::npos) continue;
      t->op = x.op;
      t->op_evidence = "the kernel before the read-back, `" + Around(name, at) + "`";
      return;
    }
  }
  if (t->bytes <= 16) {
    t->op = "`.item()`";
    t->op_evidence = "a " + std::to_string(t->bytes) + "-byte read-back";
  } else {
    t->op = "`.tolist()` / `.cpu()`";
    t->op_evidence = "a " + FormatBytes(t->bytes) + " read-back";
  }
}

// An op whose output's shape depends on the data: it must read a count back.
bool IsShapeOp(const std::string& op) {
  for (const char* x : {"aten::nonzero", "aten::unique", "aten::masked_select", "aten::bincount",
                        "aten::histc", "a cumsum's total", "aten::index", "aten::repeat_interleave",
                        "aten::_unique2", "aten::unique_consecutive", "aten::unique_dim"}) {
    if (op == x) return true;
  }
  return false;
}

// Where the round trip is and what it is: the Python stack at its last
// blocking call (else at its read-back's launch), the NVTX ranges around it,
// the thread.
void Classify(const RuleContext& c, RoundTrip* t) {
  const TraceModel& m = c.m;
  const uint32_t api = t->calls.empty() ? kNone : t->calls.back();
  uint32_t callsite = api != kNone ? m.ApiCallsite(m.apis()[api].correlation) : 0;
  if (callsite == 0 && t->read_back != kNone && m.gpu_ops()[t->read_back].api != kNone)
    callsite = m.ApiCallsite(m.apis()[m.gpu_ops()[t->read_back].api].correlation);
  // The line: the innermost frame of the model's own code, else the innermost.
  const std::vector<const FrameRecord*> stack = m.Stack(callsite);
  const FrameRecord* leaf = nullptr;
  const FrameRecord* own = nullptr;
  bool hook = false;
  for (const FrameRecord* f : stack) {
    if (f->kind != static_cast<uint8_t>(FrameKind::kPython)) continue;
    leaf = f;
    if (!IsTorchFile(f->file != kNoString ? m.String(f->file) : "")) own = f;
    t->in_model = t->in_model || IsModelFrame(m, *f);
    hook = hook || IsSavedTensorHook(m, *f);
  }
  if (own || leaf) t->line = m.FrameLabel(own ? *own : *leaf);
  // An operator range (torch's emit_nvtx / record_function) puts the call in
  // the model; a `forward` range alone does not tell a read from a copy (an
  // activation offload hook in the forward copies and syncs the same way).
  const uint32_t range = api != kNone ? m.api_range()[api] : m.RangeAt(t->tid, t->start_ns);
  for (uint32_t r = range; r != kNone && r < m.nvtx().size(); r = m.nvtx_parent()[r]) {
    if (m.String(m.nvtx()[r].name).substr(0, 6) == "aten::") t->in_model = true;
  }
  // A thread that launches GPU work but is not the step's (PyTorch's autograd
  // thread) runs the backward pass.
  const uint32_t step_tid =
      t->step >= 0 && c.steps.steps[t->step].tid != 0 ? c.steps.steps[t->step].tid : m.main_tid();
  if (t->tid != step_tid && t->op_before != kNone) t->in_model = true;
  if (hook) t->in_model = false;
  NameOp(c, range, t);
  // An op whose output's size is the data (nonzero and what runs it, unique,
  // ...) is data-dependent wherever it runs (a loss over logits[mask] too);
  // a plain read (.item(), .tolist()) only inside the model: in the training
  // loop it is a per-step read for logging (host_sync's).
  t->reads_value = t->read_back != kNone && t->bytes <= kMaxReadBackBytes;
  t->data_dependent = t->reads_value && !hook && (t->in_model || IsShapeOp(t->op));
}

}  // namespace

void FindRoundTrips(RuleContext* c) {
  const TraceModel& m = c->m;
  // Each thread's launches (GPU ops by their call's start) and blocking calls.
  std::map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>> launches;
  for (uint32_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& o = m.gpu_ops()[i];
    if (o.api != kNone) launches[m.apis()[o.api].tid].push_back({m.apis()[o.api].start_ns, i});
  }
  for (auto& [tid, v] : launches) std::sort(v.begin(), v.end());
  std::map<uint32_t, std::vector<HostBlock>> blocks;
  for (const HostBlock& b : HostBlocks(m, c->opt.gaps.kernel_wait_max_ns)) {
    const int s = c->steps.AtHostTime(b.start_ns);
    if (s >= 0 && c->steps.steps[s].steady()) blocks[b.tid].push_back(b);
  }
  for (auto& [tid, v] : blocks) {
    std::sort(v.begin(), v.end(), [](const HostBlock& a, const HostBlock& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.api < b.api;
    });
    const auto& lv = launches[tid];
    auto launched_before = [&](int64_t t) {  // index into lv of the first launch at or after t
      return static_cast<size_t>(
          std::partition_point(lv.begin(), lv.end(), [&](const auto& x) { return x.first < t; }) -
          lv.begin());
    };
    for (size_t k = 0; k < v.size();) {
      RoundTrip t;
      t.tid = tid;
      t.start_ns = v[k].start_ns;
      t.end_ns = v[k].end_ns;
      t.step = c->steps.AtHostTime(t.start_ns);
      // The blocking calls with no launch between them (the read-back copy's
      // own call is one when it blocks: a pageable or synchronous copy, whose
      // launch is at its start).
      const size_t first = launched_before(t.start_ns + 1);
      size_t j = k;
      for (; j < v.size() && (j == k || launched_before(v[j].start_ns) <= first); ++j) {
        t.end_ns = std::max(t.end_ns, v[j].end_ns);
        if (v[j].api != kNone &&
            std::find(t.calls.begin(), t.calls.end(), v[j].api) == t.calls.end())
          t.calls.push_back(v[j].api);
        if (v[j].sync != kNone) t.syncs.push_back(v[j].sync);
      }
      // The thread's launches around it: the one before (the read-back copy
      // when the value is read, issued by a blocking copy's own call too).
      const size_t before = first;
      if (before > 0) t.op_before = lv[before - 1].second;
      const size_t after = launched_before(t.end_ns);
      if (after < lv.size()) t.op_after = lv[after].second;
      if (t.op_before != kNone) {
        const GpuOp& o = m.gpu_ops()[t.op_before];
        if (o.kind == GpuOpKind::kMemcpy &&
            m.memcpys()[o.index].copy_kind == CopyKind::kDeviceToHost) {
          t.read_back = t.op_before;
          t.bytes = m.memcpys()[o.index].bytes;
        }
      }
      for (size_t b = before; b-- > 0 && t.read_back != kNone;) {
        const GpuOp& o = m.gpu_ops()[lv[b].second];
        if (o.kind == GpuOpKind::kKernel) {
          t.producer = lv[b].second;
          break;
        }
      }
      Classify(*c, &t);
      c->round_trips.push_back(std::move(t));
      k = j;
    }
  }
  std::sort(c->round_trips.begin(), c->round_trips.end(),
            [](const RoundTrip& a, const RoundTrip& b) { return a.start_ns < b.start_ns; });
  for (size_t i = 0; i < c->round_trips.size(); ++i) {
    for (uint32_t a : c->round_trips[i].calls) c->round_trip_of_api[a] = static_cast<int32_t>(i);
    for (uint32_t s : c->round_trips[i].syncs) c->round_trip_of_sync[s] = static_cast<int32_t>(i);
  }
  c->round_trip_loops = FindRoundTripLoops(*c);
}

const RoundTrip* RuleContext::RoundTripOf(const GpuGap& g) const {
  auto a = round_trip_of_api.find(g.blocking_api);
  if (g.blocking_api != kNone && a != round_trip_of_api.end()) return &round_trips[a->second];
  auto s = round_trip_of_sync.find(g.blocking_sync);
  if (g.blocking_sync != kNone && s != round_trip_of_sync.end()) return &round_trips[s->second];
  return nullptr;
}

std::string RoundTripSites(const RuleContext& c, const std::vector<int32_t>& trips) {
  std::map<std::string, int64_t> sites;
  for (int32_t i : trips) {
    const RoundTrip& t = c.round_trips[i];
    ++sites[t.op + (t.line.empty() ? "" : " at " + t.line)];
  }
  std::vector<std::pair<int64_t, std::string>> v;
  for (const auto& [k, count] : sites) v.push_back({-count, k});
  std::sort(v.begin(), v.end());
  std::string s;
  for (size_t i = 0; i < v.size() && i < 2; ++i) s += (i ? ", " : "") + v[i].second;
  if (v.size() > 2) s += ", ...";
  return s;
}

std::string DataDependentRoundTrips(const RuleContext& c) {
  std::vector<int32_t> trips;
  for (size_t i = 0; i < c.round_trips.size(); ++i) {
    if (c.round_trips[i].data_dependent) trips.push_back(static_cast<int32_t>(i));
  }
  if (trips.empty()) return "";
  const int64_t n = static_cast<int64_t>(trips.size());
  const int64_t steps = std::max<int64_t>(c.nsteps, 1);
  return FormatFixed(static_cast<double>(n) / steps, n % steps ? 1 : 0) +
         " data-dependent host round trips per step (" + RoundTripSites(c, trips) + ")";
}

}  // namespace stepscope
