#include "analysis/mfu.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "analysis/rules/rules.h"
#include "common/strings.h"

namespace stepscope {
namespace {

constexpr int kClasses = static_cast<int>(KernelClass::kCount);

// The device with the most kernel time, when none was asked for.
int BusiestDevice(const TraceModel& m, int asked) {
  if (asked >= 0) return asked;
  std::map<int, int64_t> busy;
  for (const GpuOp& op : m.gpu_ops()) {
    if (op.kind == GpuOpKind::kKernel) busy[op.device] += op.end_ns - op.start_ns;
  }
  int best = -1;
  int64_t most = -1;
  for (const auto& [d, ns] : busy) {
    if (ns > most) most = ns, best = d;
  }
  return best;
}

std::string Lower(std::string_view s) {
  std::string out(s.substr(0, 256));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// An optimizer step's range: `profile`'s "optimizer.step AdamW(...)" or a
// loop's own "optimizer" / "optimizer_step" / "optimizer.step".
bool IsOptimizerRangeName(const std::string& name) {
  const std::string l = Lower(name);
  return StartsWith(l, "optimizer.step") || l == "optimizer" || l == "optimizer_step" ||
         l == "optimizer step";
}

// Whether the op was launched inside an optimizer range (its api call's
// innermost range or one around it). Memoized per NVTX range.
class OptimizerRanges {
 public:
  explicit OptimizerRanges(const TraceModel& m) : m_(m), memo_(m.nvtx().size(), -1) {}
  bool Inside(const GpuOp& op) {
    if (op.api == kNone || op.api >= m_.api_range().size()) return false;
    return InRange(m_.api_range()[op.api], 0);
  }

 private:
  bool InRange(uint32_t r, int depth) {
    if (r == kNone || r >= memo_.size() || depth > 64) return false;
    if (memo_[r] >= 0) return memo_[r] == 1;
    bool in = IsOptimizerRangeName(m_.String(m_.nvtx()[r].name));
    if (!in && r < m_.nvtx_parent().size()) in = InRange(m_.nvtx_parent()[r], depth + 1);
    memo_[r] = in ? 1 : 0;
    return in;
  }
  const TraceModel& m_;
  std::vector<int8_t> memo_;
};

// The steady step whose duration is nearest the median (the first of equals).
int MedianStepIndex(const StepSet& steps) {
  int best = -1;
  double dist = 0;
  for (size_t i = 0; i < steps.steps.size(); ++i) {
    const Step& s = steps.steps[i];
    if (!s.steady()) continue;
    const double d = std::fabs(static_cast<double>(s.duration()) - steps.stats.median);
    if (best < 0 || d < dist) best = static_cast<int>(i), dist = d;
  }
  return best;
}

// GPU time and launches per class of the kernels launched in step `index`.
void ClassTimes(const TraceModel& m, const StepSet& steps, int index, int device,
                std::vector<MfuClass>* classes) {
  const std::vector<int32_t> op_steps = OpSteps(m, steps);
  OptimizerRanges optimizer(m);
  std::vector<int8_t> by_name(m.strings().size(), -1);
  for (size_t i = 0; i < m.gpu_ops().size(); ++i) {
    const GpuOp& op = m.gpu_ops()[i];
    if (op.kind != GpuOpKind::kKernel || op_steps[i] != index) continue;
    if (device >= 0 && op.device != device) continue;
    const StringId name = m.kernels()[op.index].name;
    int c = name < by_name.size() ? by_name[name] : -1;
    if (c < 0) {
      c = static_cast<int>(ClassifyKernelClass(m.String(name), m.NameInfo(name)));
      if (name < by_name.size()) by_name[name] = static_cast<int8_t>(c);
    }
    if (c == static_cast<int>(KernelClass::kElementwise) && optimizer.Inside(op)) {
      c = static_cast<int>(KernelClass::kOptimizer);
    }
    (*classes)[c].gpu_ns += op.end_ns - op.start_ns;
    (*classes)[c].kernels += 1;
  }
}

// The peak for the dtype, and where it came from.
void Peak(const TraceModel& m, const MfuOptions& o, MfuReport* r) {
  const MachineConstants mc = MachineConstantsOf(m, r->device, o.bench);
  r->gpu_name = mc.gpu_name();
  r->peak_key = PeakKeyOfDtype(o.dtype);
  r->peak = mc.Get(r->peak_key);
  // fp16 tensor cores run at the bf16 rate (the table has one column for both).
  if (!r->peak.known() && r->peak_key == "tensor_fp16") {
    r->peak_key = "tensor_bf16";
    r->peak = mc.Get(r->peak_key);
  }
  if (!r->peak.known()) {
    r->peak_note = mc.Unknown(r->peak_key);
    return;
  }
  r->peak_label = r->peak.bench ? "bench" : "datasheet";
  // "bench results of HOST DATE", or "datasheet: NVIDIA H200 datasheet, H200 SXM".
  r->peak_source =
      r->peak.bench || !mc.model()
          ? r->peak.source
          : std::string("datasheet: ") + mc.model()->compute_source + ", " + mc.model()->model;
  if (r->peak.bench && mc.model()) {
    const double sheet = r->peak_key == "fp32"          ? mc.model()->fp32
                         : r->peak_key == "tensor_tf32" ? mc.model()->tf32
                         : r->peak_key == "tensor_bf16" ? mc.model()->bf16
                                                        : 0;
    if (sheet > 0) r->peak_note = "datasheet " + FormatFixed(sheet / 1e12, 1) + " TFLOP/s";
  }
}

// FLOPs per step from the roofline counters: every measured kernel's rate
// over its GPU time in the roofline run's step.
void CounterFlops(const MfuOptions& o, const StepSet& steps, const TraceModel& m, MfuReport* r) {
  double flops = 0;
  int64_t covered = 0, step = -1;
  for (const MeasuredKernel& k : o.measured) {
    flops += k.step_flops();
    covered += k.step_gpu_ns;
    step = k.step;
  }
  if (!(flops > 0)) return;
  r->flop_source = "roofline counters";
  r->flops_per_step = flops;
  // The share of that step's kernel time the measured kernels cover.
  const int idx = step >= 0 ? steps.Find(step) : -1;
  std::vector<MfuClass> cls(kClasses);
  int64_t all = 0;
  if (idx >= 0) {
    ClassTimes(m, steps, idx, r->device, &cls);
    for (const MfuClass& c : cls) all += c.gpu_ns;
  }
  r->flop_detail = std::to_string(o.measured.size()) + " profiled kernels" +
                   (all > 0 ? ", " + FormatFixed(100.0 * covered / all, 1) + "% of step " +
                                  std::to_string(step) + "'s kernel time"
                            : std::string()) +
                   "; a lower bound";
}

void TopKernels(const TraceModel& m, const Step& s, const MfuOptions& o, MfuReport* r) {
  for (const StepKernel& k : s.top_kernels) {
    MfuTopKernel t;
    t.name = m.String(k.name);
    t.cls = ClassifyKernelClass(t.name, m.NameInfo(k.name));
    t.total_ns = k.total_ns;
    t.count = k.count;
    double flops = 0, dur = 0;
    int64_t most = -1;
    for (const MeasuredKernel& mk : o.measured) {
      if (mk.name != t.name) continue;
      t.measured = true;
      flops += mk.flops;
      dur += mk.duration_ns;
      if (mk.step_gpu_ns > most) {
        most = mk.step_gpu_ns;
        t.bound = mk.bound;
        t.pct_of_bound = mk.pct_of_bound;
        t.intensity_dram = mk.intensity_dram;
      }
    }
    t.flops_per_s = dur > 0 ? flops / dur * 1e9 : 0;
    r->top.push_back(std::move(t));
  }
}

std::string Tflop(double flops, int decimals) { return FormatFixed(flops / 1e12, decimals); }

// "2.923 TFLOP", "346.6 kFLOP": four significant digits in the largest unit below the value.
std::string FormatFlop(double v) {
  static const char* const kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  int u = 0;
  while (u < 5 && v >= 1000) v /= 1000, ++u;
  return FormatFixed(v, v >= 100 ? 1 : v >= 10 ? 2 : 3) + " " + kUnits[u];
}

}  // namespace

std::string PeakKeyOfDtype(const std::string& dtype) {
  if (dtype == "fp32") return "fp32";
  if (dtype == "fp8") return "tensor_fp8";
  if (dtype == "fp16" || dtype == "amp-fp16") return "tensor_fp16";
  return "tensor_bf16";
}

MfuReport ComputeMfu(const TraceModel& m, const StepSet& steps, const MfuOptions& o) {
  MfuReport r;
  r.device = BusiestDevice(m, o.device);
  r.classes.resize(kClasses);
  for (int c = 0; c < kClasses; ++c) r.classes[c].cls = static_cast<KernelClass>(c);
  if (r.device >= 0) Peak(m, o, &r);
  if (o.has_model && o.model.total > 0) {
    r.flop_source = "model";
    r.flop_detail = o.model.what;
    r.flops_per_step = o.model.total;
  } else if (!o.measured.empty()) {
    CounterFlops(o, steps, m, &r);
  }
  const int median = MedianStepIndex(steps);
  const double peak = r.peak.value;
  for (const Step& s : steps.steps) {
    MfuStep ms{s.number, s.duration(), s.status(), 0};
    if (s.steady() && peak > 0 && r.flops_per_step > 0) {
      ms.mfu_pct = 100.0 * r.flops_per_step / (s.duration() * 1e-9 * peak);
    }
    r.steps.push_back(ms);
  }
  if (median < 0) return r;
  const Step& med = steps.steps[median];
  r.median_step = med.number;
  r.class_step_ns = med.duration();
  r.median_step_ns = steps.stats.median > 0 ? steps.stats.median : med.duration();
  if (peak > 0 && r.flops_per_step > 0) {
    r.mfu_pct = 100.0 * r.flops_per_step / (r.median_step_ns * 1e-9 * peak);
  }
  ClassTimes(m, steps, median, r.device, &r.classes);
  if (o.has_model) {
    r.classes[static_cast<int>(KernelClass::kGemm)].model_flops = o.model.gemm;
    r.classes[static_cast<int>(KernelClass::kAttention)].model_flops = o.model.attention;
  }
  for (const MeasuredKernel& k : o.measured) {
    const KernelClass c = ClassifyKernelClass(k.name, ClassifyKernelName(k.name));
    r.classes[static_cast<int>(c)].measured_flops += k.step_flops();
    r.classes[static_cast<int>(c)].measured_gpu_ns += k.step_gpu_ns;
  }
  TopKernels(m, med, o, &r);
  return r;
}

std::string MfuLine(const MfuReport& r) {
  if (r.flop_source.empty()) {
    return "MFU: no FLOP source (give the model: --model CONFIG --micro-batch N --seq-len N; or "
           "measure the step's top kernels with stepscope roofline)";
  }
  const std::string flops = FormatFlop(r.flops_per_step) + " per step (" + r.flop_source +
                            (r.flop_detail.empty() ? "" : ": " + r.flop_detail) + ")";
  if (r.median_step < 0) return "MFU: no steady step to time; " + flops;
  if (!r.peak.known()) {
    return "MFU: no " + r.peak_key + " peak (" + r.peak_note + "); " + flops;
  }
  const std::string peak = Tflop(r.peak.value, 1) + " TFLOP/s " + r.peak_key + " peak (" +
                           r.peak_source + (r.peak_note.empty() ? "" : "; " + r.peak_note) + ")";
  // Over the peak: FLOPs the step cannot have done (another model, batch or dtype; TF32 GEMMs
  // against the fp32 peak).
  const std::string over = r.mfu_pct > 100 ? "; over 100%: the FLOPs do not fit this run (check "
                                             "--model, --micro-batch, --seq-len, --dtype)"
                                           : "";
  return "MFU: " + FormatFixed(r.mfu_pct, 1) + "% = " + flops + " / median step " +
         FormatDuration(static_cast<int64_t>(r.median_step_ns)) + " / " + peak + over;
}

}  // namespace stepscope
