#include "report/report_roofline.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/json_value.h"
#include "store/sqlite_util.h"

namespace stepscope {
namespace {

// The per-precision FLOP columns of the roofline table and the ceiling key of
// each (the Precision names of roofline_model.h).
constexpr std::pair<const char*, const char*> kPrecisionColumns[] = {
    {"flops_fp64", "fp64"},
    {"flops_fp32", "fp32"},
    {"flops_fp16", "fp16"},
    {"flops_tensor_fp64", "tensor_fp64"},
    {"flops_tensor_tf32", "tensor_tf32"},
    {"flops_tensor_fp16", "tensor_fp16"},
    {"flops_tensor_bf16", "tensor_bf16"},
    {"flops_tensor_fp8", "tensor_fp8"},
    {"flops_tensor_other", "tensor_other"},
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
  std::string sql =
      "SELECT rank, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, step, "
      "instances, duration_ns, flops, dram_read_bytes, dram_write_bytes, "
      "intensity_dram, flops_per_s, dram_bytes_per_s, precision, bound, bound_kind, "
      "pct_of_bound";
  for (const auto& [col, key] : kPrecisionColumns) sql += std::string(", ") + col;
  sql += " FROM roofline ORDER BY rank, id";
  ASSIGN_OR_RETURN(Statement st, reader.Query(sql));
  ReportRoofline r;
  std::set<std::string> used;  // precisions with FLOPs in any row
  while (st.Step()) {
    RooflineKernel k;
    k.rank = st.Int(0);
    k.name = reader.String(static_cast<StringId>(st.Int(1)));
    k.launch = "grid " + Dim3(st.Int(2), st.Int(3), st.Int(4)) + " block " +
               Dim3(st.Int(5), st.Int(6), st.Int(7));
    r.step = st.Int(8);
    k.instances = st.Int(9);
    k.duration_ns = st.Double(10);
    k.flops = st.Double(11);
    k.dram_bytes = st.Double(12) + st.Double(13);
    k.intensity = st.Double(14);
    k.flops_per_s = st.Double(15);
    k.dram_bytes_per_s = st.Double(16);
    k.precision = std::string(st.Text(17));
    k.bound = std::string(st.Text(18));
    k.bound_kind = std::string(st.Text(19));
    k.pct_of_bound = st.Double(20);
    // Plottable() of roofline_svg.h: a log-log chart has no place for 0.
    k.on_chart = k.intensity > 0 && k.flops_per_s > 0;
    int col = 21;
    for (const auto& [name, key] : kPrecisionColumns) {
      if (st.Double(col++) > 0) used.insert(key);
    }
    if (!k.precision.empty()) used.insert(k.precision);
    if (k.bound_kind == "compute" && !k.bound.empty()) used.insert(k.bound);
    r.kernels.push_back(std::move(k));
  }
  RETURN_IF_ERROR(st.status());
  if (r.kernels.empty()) return OkStatus();
  r.device = reader.Meta("roofline_device");
  auto ceilings = StoredCeilings(reader.Meta("roofline_ceilings"), &r.measured_at, &r.notes);
  std::vector<std::string> precisions;  // in the order of kPrecisionColumns
  for (const auto& [col, key] : kPrecisionColumns)
    if (used.count(key)) precisions.push_back(key);
  RooflineGeometry(ceilings, ceilings.empty() ? std::vector<std::string>{} : precisions, &r);
  d->roofline = std::move(r);
  d->has_roofline = true;
  return OkStatus();
}

}  // namespace stepscope
