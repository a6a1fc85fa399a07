#include "report/report_roofline.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/json_value.h"
#include "store/roofline_rows.h"

namespace stepscope {
namespace {

// The ceiling key of each per-precision FLOP column of the roofline table
// (RooflineRow::precision_flops; the Precision names of roofline_model.h).
constexpr const char* kPrecisionKeys[kRooflinePrecisionColumns] = {
    "fp64",        "fp32",        "fp16",       "tensor_fp64",  "tensor_tf32",
    "tensor_fp16", "tensor_bf16", "tensor_fp8", "tensor_other",
};
constexpr const char* kDram = "dram_bw";

double Pow10Floor(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double Pow10Ceil(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

std::string Dim3(int64_t x, int64_t y, int64_t z) {
  return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
}

// meta.roofline_ceilings (CeilingsJson of roofline/ceilings.cc): the values
// of its "ceilings" object, in document order.
std::vector<std::pair<std::string, double>> StoredCeilings(const std::string& json,
                                                           std::string* measured_at,
                                                           std::vector<std::string>* notes) {
  std::vector<std::pair<std::string, double>> out;
  if (json.empty()) {
    notes->push_back(
        "The trace holds no ceilings (meta.roofline_ceilings): the kernels are shown without "
        "roofs.");
    return out;
  }
  auto v = ParseJson(json);
  const JsonValue* c = v.ok() && v->is_object() ? v->Get("ceilings") : nullptr;
  if (!c || !c->is_object()) {
    notes->push_back("meta.roofline_ceilings is not a ceilings object" +
                     (v.ok() ? std::string() : " (" + v.status().message() + ")") +
                     ": the kernels are shown without roofs.");
    return out;
  }
  *measured_at = v->StringOr("measured_at", "");
  for (const auto& [key, one] : c->members()) {
    double value = one.is_object() ? one.NumberOr("value", 0) : 0;
    if (value > 0 && std::isfinite(value)) out.emplace_back(key, value);
  }
  return out;
}

}  // namespace

void RooflineGeometry(const std::vector<std::pair<std::string, double>>& ceilings,
                      const std::vector<std::string>& precisions, ReportRoofline* r) {
  auto find = [&](const std::string& key) {
    for (const auto& [k, v] : ceilings)
      if (k == key) return v;
    return 0.0;
  };
  const double bw = find(kDram);
  std::vector<RooflineRoof> compute;
  for (const std::string& p : precisions) {
    double peak = find(p);
    if (peak > 0) {
      compute.push_back({p, false, peak});
    } else {
      r->notes.push_back("No " + p +
                         " ceiling was stored with the results: its roof is not drawn.");
    }
  }
  std::sort(compute.begin(), compute.end(),
            [](const RooflineRoof& a, const RooflineRoof& b) { return a.value > b.value; });
  if (bw <= 0 && !ceilings.empty())
    r->notes.push_back("No DRAM bandwidth ceiling was stored: no memory roof.");

  // Axes: decades covering every point, ridge point and roof (ComputeAxes).
  double xs_lo = 1e300, xs_hi = 0, ys_lo = 1e300, ys_hi = 0;
  for (const RooflineRoof& c : compute) {
    ys_lo = std::min(ys_lo, c.value);
    ys_hi = std::max(ys_hi, c.value);
    if (bw > 0) {
      r->ridges.push_back({c.key, c.value / bw, c.value});
      xs_lo = std::min(xs_lo, c.value / bw);
      xs_hi = std::max(xs_hi, c.value / bw);
    }
  }
  for (const RooflineKernel& k : r->kernels) {
    if (!k.on_chart) continue;
    xs_lo = std::min(xs_lo, k.intensity);
    xs_hi = std::max(xs_hi, k.intensity);
    ys_lo = std::min(ys_lo, k.flops_per_s);
    ys_hi = std::max(ys_hi, k.flops_per_s);
  }
  if (xs_hi <= 0) {
    xs_lo = 0.1;
    xs_hi = 1000;
  }
  r->x_min = Pow10Floor(xs_lo / 2);
  r->x_max = Pow10Ceil(xs_hi * 2);
  if (r->x_max / r->x_min < 1e3) r->x_max = r->x_min * 1e3;
  if (bw > 0) ys_lo = std::min(ys_lo, bw * r->x_min);  // the DRAM roof's left end
  if (ys_hi <= 0) {
    ys_lo = 1e9;
    ys_hi = 1e15;
  }
  r->y_max = Pow10Ceil(ys_hi * 1.05);
  r->y_min = Pow10Floor(ys_lo);
  if (r->y_max / r->y_min > 1e7) r->y_min = r->y_max / 1e7;
  if (r->y_max / r->y_min < 1e3) r->y_min = r->y_max / 1e3;

  // Segments: the DRAM roof ends where it meets the highest compute roof; a
  // compute roof starts there where the DRAM roof reaches it.
  const double top = compute.empty() ? 0 : compute.front().value;
  if (bw > 0) {
    RooflineRoof m{kDram, true, bw};
    m.x0 = r->x_min;
    m.y0 = bw * m.x0;
    m.x1 = top > 0 ? std::min(r->x_max, top / bw) : r->x_max;
    m.y1 = bw * m.x1;
    r->roofs.push_back(m);
  }
  for (RooflineRoof& c : compute) {
    c.x0 = bw > 0 ? std::max(r->x_min, c.value / bw) : r->x_min;
    c.x1 = r->x_max;
    c.y0 = c.y1 = c.value;
    r->roofs.push_back(c);
  }
}

Status CollectRoofline(const TraceReader& reader, ReportData* d) {
  if (!TableExists(reader.db(), "roofline")) return OkStatus();
  ASSIGN_OR_RETURN(std::vector<RooflineRow> rows, LoadRooflineTable(reader));
  ReportRoofline r;
  std::set<std::string> used;  // precisions with FLOPs in any row
  for (RooflineRow& row : rows) {
    RooflineKernel k;
    k.rank = row.rank;
    k.name = std::move(row.name);
    k.launch = "grid " + Dim3(row.grid[0], row.grid[1], row.grid[2]) + " block " +
               Dim3(row.block[0], row.block[1], row.block[2]);
    r.step = row.step;
    k.instances = row.instances;
    k.duration_ns = row.duration_ns;
    k.flops = row.flops;
    k.dram_bytes = row.dram_read_bytes + row.dram_write_bytes;
    k.intensity = row.intensity_dram;
    k.flops_per_s = row.flops_per_s;
    k.dram_bytes_per_s = row.dram_bytes_per_s;
    k.precision = std::move(row.precision);
    k.bound = std::move(row.bound);
    k.bound_kind = std::move(row.bound_kind);
    k.pct_of_bound = row.pct_of_bound;
    // Plottable() of roofline_svg.h: a log-log chart has no place for 0.
    k.on_chart = k.intensity > 0 && k.flops_per_s > 0;
    for (int p = 0; p < kRooflinePrecisionColumns; ++p) {
      if (row.precision_flops[p] > 0) used.insert(kPrecisionKeys[p]);
    }
    if (!k.precision.empty()) used.insert(k.precision);
    if (k.bound_kind == "compute" && !k.bound.empty()) used.insert(k.bound);
    r.kernels.push_back(std::move(k));
  }
  if (r.kernels.empty()) return OkStatus();
  r.device = reader.Meta("roofline_device");
  auto ceilings = StoredCeilings(reader.Meta("roofline_ceilings"), &r.measured_at, &r.notes);
  std::vector<std::string> precisions;  // in the order of kPrecisionKeys
  for (const char* key : kPrecisionKeys)
    if (used.count(key)) precisions.push_back(key);
  RooflineGeometry(ceilings, ceilings.empty() ? std::vector<std::string>{} : precisions, &r);
  d->roofline = std::move(r);
  d->has_roofline = true;
  return OkStatus();
}

}  // namespace stepscope
