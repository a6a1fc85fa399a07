// The MFU report as tables (analysis/mfu.h).
#include "analysis/mfu.h"

namespace stepscope {
namespace {

// A number, or an empty cell when there is none.
Cell Maybe(bool known, double v, int decimals) { return known ? Cell(v, decimals) : Cell(""); }

double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

}  // namespace

Table MfuSummaryTable(const MfuReport& r) {
  Table t({{"device", "Device", true},
           {"gpu", "GPU", false},
           {"flop_source", "FLOP Source", false},
           {"flop_detail", "FLOP Detail", false},
           {"tflop_per_step", "TFLOP Per Step", true},
           {"median_step_ns", "Median Step (ns)", true},
           {"peak_key", "Peak", false},
           {"peak_tflops", "Peak TFLOP/s", true},
           {"peak_source", "Peak Source", false},
           {"peak_detail", "Peak Detail", false},
           {"achieved_tflops", "Achieved TFLOP/s", true},
           {"mfu_pct", "MFU (%)", true}});
  const bool timed = r.median_step_ns > 0 && r.flops_per_step > 0;
  const std::string detail =
      r.peak_source + (r.peak_note.empty() || r.peak_source.empty() ? "" : "; ") + r.peak_note;
  t.AddRow({Cell(static_cast<int64_t>(r.device)), r.gpu_name,
            r.flop_source.empty() ? "none" : r.flop_source, r.flop_detail,
            Maybe(r.flops_per_step > 0, r.flops_per_step / 1e12, 4), Cell(r.median_step_ns, 1),
            r.peak_key, Maybe(r.peak.known(), r.peak.value / 1e12, 1),
            r.peak_label.empty() ? "unknown" : r.peak_label, detail,
            Maybe(timed, r.flops_per_step / (r.median_step_ns * 1e-9) / 1e12, 1),
            Maybe(r.has_mfu(), r.mfu_pct, 2)});
  return t;
}

Table MfuStepTable(const MfuReport& r) {
  Table t({{"step", "Step", true},
           {"duration_ns", "Duration (ns)", true},
           {"status", "Status", false},
           {"mfu_pct", "MFU (%)", true}});
  for (const MfuStep& s : r.steps) {
    t.AddRow({Cell(s.number), Cell(s.duration_ns), s.status, Maybe(s.mfu_pct > 0, s.mfu_pct, 2)});
  }
  return t;
}

Table MfuClassTable(const MfuReport& r) {
  Table t({{"class", "Class", false},
           {"gpu_ns", "GPU Time (ns)", true},
           {"kernel_pct", "Of Kernels (%)", true},
           {"launches", "Launches", true},
           {"model_tflop", "Model TFLOP", true},
           {"model_tflops", "Model TFLOP/s", true},
           {"model_peak_pct", "Model Of Peak (%)", true},
           {"measured_tflops", "Measured TFLOP/s", true},
           {"measured_peak_pct", "Measured Of Peak (%)", true},
           {"measured_coverage_pct", "Counters Cover (%)", true}});
  int64_t all = 0;
  for (const MfuClass& c : r.classes) all += c.gpu_ns;
  const double peak = r.peak.value;
  for (const MfuClass& c : r.classes) {
    const bool model = c.model_flops > 0 && c.gpu_ns > 0;
    const double model_rate = model ? c.model_flops / (c.gpu_ns * 1e-9) : 0;
    const bool measured = c.measured_gpu_ns > 0;
    const double rate = measured ? c.measured_flops / (c.measured_gpu_ns * 1e-9) : 0;
    t.AddRow({KernelClassName(c.cls), Cell(c.gpu_ns), Cell(Pct(c.gpu_ns, all), 1), Cell(c.kernels),
              Maybe(c.model_flops > 0, c.model_flops / 1e12, 4), Maybe(model, model_rate / 1e12, 1),
              Maybe(model && peak > 0, Pct(model_rate, peak), 1), Maybe(measured, rate / 1e12, 1),
              Maybe(measured && peak > 0, Pct(rate, peak), 1),
              Maybe(measured && c.gpu_ns > 0, Pct(c.measured_gpu_ns, c.gpu_ns), 1)});
  }
  return t;
}

Table MfuTopTable(const MfuReport& r) {
  Table t({{"rank", "#", true},
           {"total_ns", "Total (ns)", true},
           {"step_pct", "Of Step (%)", true},
           {"count", "Count", true},
           {"class", "Class", false},
           {"tflops", "Measured TFLOP/s", true},
           {"bound", "Bound", false},
           {"bound_pct", "Of Bound (%)", true},
           {"intensity_dram", "FLOP/B DRAM", true},
           {"name", "Name", false, 60}});
  int64_t rank = 0;
  for (const MfuTopKernel& k : r.top) {
    t.AddRow({Cell(++rank), Cell(k.total_ns), Cell(Pct(k.total_ns, r.class_step_ns), 1),
              Cell(k.count), KernelClassName(k.cls),
              Maybe(k.measured && k.flops_per_s > 0, k.flops_per_s / 1e12, 1),
              k.measured ? k.bound : "", Maybe(k.measured, k.pct_of_bound, 1),
              Maybe(k.measured && k.intensity_dram > 0, k.intensity_dram, 2), k.name});
  }
  return t;
}

}  // namespace stepscope
