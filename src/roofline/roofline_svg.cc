#include "roofline/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stepscope {

namespace {

double Pow10Floor(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double Pow10Ceil(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// 1e12 -> "1T", 1e-2 -> "0.01".
std::string TickLabel(double v, bool si) {
  char buf[32];
  if (si) {
    const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
    int e = static_cast<int>(std::lround(std::log10(v)));
    int k = std::clamp(e / 3, 0, 6);
    std::snprintf(buf, sizeof(buf), "%g%s", v / std::pow(10.0, 3 * k), units[k]);
  } else {
    std::snprintf(buf, sizeof(buf), "%g", v);
  }
  return buf;
}

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                          "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

}  // namespace

bool Plottable(const ChartPoint& p) { return p.intensity > 0 && p.flops_per_s > 0; }

ChartAxes ComputeAxes(const std::vector<ChartRoof>& roofs, const std::vector<ChartPoint>& points) {
  double xs_lo = 1e300, xs_hi = 0, ys_lo = 1e300, ys_hi = 0;
  double max_compute = 0, max_mem = 0, min_mem = 1e300;
  for (const ChartRoof& r : roofs) {
    if (r.value <= 0) continue;
    if (r.memory) {
      max_mem = std::max(max_mem, r.value);
      min_mem = std::min(min_mem, r.value);
    } else {
      max_compute = std::max(max_compute, r.value);
      ys_hi = std::max(ys_hi, r.value);
      ys_lo = std::min(ys_lo, r.value);
    }
  }
  // Ridge points: where each compute roof meets each memory roof.
  for (const ChartRoof& c : roofs) {
    if (c.memory || c.value <= 0) continue;
    for (const ChartRoof& m : roofs) {
      if (!m.memory || m.value <= 0) continue;
      xs_lo = std::min(xs_lo, c.value / m.value);
      xs_hi = std::max(xs_hi, c.value / m.value);
    }
  }
  for (const ChartPoint& p : points) {
    if (!Plottable(p)) continue;
    xs_lo = std::min(xs_lo, p.intensity);
    xs_hi = std::max(xs_hi, p.intensity);
    ys_lo = std::min(ys_lo, p.flops_per_s);
    ys_hi = std::max(ys_hi, p.flops_per_s);
  }
  ChartAxes a;
  if (xs_hi <= 0) {
    xs_lo = 0.1;
    xs_hi = 1000;
  }
  a.x_min = Pow10Floor(xs_lo / 2);
  a.x_max = Pow10Ceil(xs_hi * 2);
  if (a.x_max / a.x_min < 1e3) a.x_max = a.x_min * 1e3;
  // The lowest memory roof at the left edge should be visible too.
  if (min_mem < 1e300) ys_lo = std::min(ys_lo, min_mem * a.x_min);
  if (ys_hi <= 0) {
    ys_lo = 1e9;
    ys_hi = 1e15;
  }
  a.y_max = Pow10Ceil(ys_hi * 1.05);
  a.y_min = Pow10Floor(ys_lo);
  if (a.y_max / a.y_min > 1e7) a.y_min = a.y_max / 1e7;
  if (a.y_max / a.y_min < 1e3) a.y_min = a.y_max / 1e3;
  return a;
}

double ChartX(const ChartAxes& a, const ChartFrame& f, double v) {
  v = std::clamp(v, a.x_min, a.x_max);
  return f.left + f.width * (std::log10(v) - std::log10(a.x_min)) /
                      (std::log10(a.x_max) - std::log10(a.x_min));
}

double ChartY(const ChartAxes& a, const ChartFrame& f, double v) {
  v = std::clamp(v, a.y_min, a.y_max);
  return f.top + f.height -
         f.height * (std::log10(v) - std::log10(a.y_min)) /
             (std::log10(a.y_max) - std::log10(a.y_min));
}

std::string RooflineSvg(const std::string& title, const std::vector<ChartRoof>& roofs,
                        const std::vector<ChartPoint>& points) {
  ChartAxes a = ComputeAxes(roofs, points);
  ChartFrame f;
  const double legend_x = f.left + f.width + 20;
  const double total_w = legend_x + 360;
  const double legend_rows = static_cast<double>(points.size());
  const double total_h = std::max(f.top + f.height + 60, f.top + 20 + 18 * legend_rows + 40);
  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(total_w) + "\" height=\"" +
       Num(total_h) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + Num(f.left) + "\" y=\"24\" font-size=\"15\">" + Escape(title) + "</text>\n";
  // Grid and ticks at every decade.
  for (double x = a.x_min; x <= a.x_max * 1.0001; x *= 10) {
    double px = ChartX(a, f, x);
    s += "<line x1=\"" + Num(px) + "\" y1=\"" + Num(f.top) + "\" x2=\"" + Num(px) + "\" y2=\"" +
         Num(f.top + f.height) + "\" stroke=\"#e6e6e6\"/>\n";
    s += "<text x=\"" + Num(px) + "\" y=\"" + Num(f.top + f.height + 16) +
         "\" text-anchor=\"middle\">" + TickLabel(x, false) + "</text>\n";
  }
  for (double y = a.y_min; y <= a.y_max * 1.0001; y *= 10) {
    double py = ChartY(a, f, y);
    s += "<line x1=\"" + Num(f.left) + "\" y1=\"" + Num(py) + "\" x2=\"" + Num(f.left + f.width) +
         "\" y2=\"" + Num(py) + "\" stroke=\"#e6e6e6\"/>\n";
    s += "<text x=\"" + Num(f.left - 6) + "\" y=\"" + Num(py + 4) + "\" text-anchor=\"end\">" +
         TickLabel(y, true) + "</text>\n";
  }
  s += "<rect x=\"" + Num(f.left) + "\" y=\"" + Num(f.top) + "\" width=\"" + Num(f.width) +
       "\" height=\"" + Num(f.height) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  s += "<text x=\"" + Num(f.left + f.width / 2) + "\" y=\"" + Num(f.top + f.height + 40) +
       "\" text-anchor=\"middle\">arithmetic intensity (FLOP / DRAM byte)</text>\n";
  s += "<text transform=\"translate(20 " + Num(f.top + f.height / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">FLOP/s</text>\n";

  // Roofs. A compute roof starts where the highest memory roof reaches it; a
  // memory roof ends where it reaches the highest compute roof.
  double max_compute = 0, max_mem = 0;
  for (const ChartRoof& r : roofs) {
    if (r.value <= 0) continue;
    (r.memory ? max_mem : max_compute) = std::max(r.memory ? max_mem : max_compute, r.value);
  }
  for (const ChartRoof& r : roofs) {
    if (r.value <= 0) continue;
    double x0, y0, x1, y1;
    if (r.memory) {
      x0 = a.x_min;
      y0 = r.value * a.x_min;
      x1 = max_compute > 0 ? std::min(a.x_max, max_compute / r.value) : a.x_max;
      y1 = r.value * x1;
    } else {
      x0 = max_mem > 0 ? std::max(a.x_min, r.value / max_mem) : a.x_min;
      y0 = r.value;
      x1 = a.x_max;
      y1 = r.value;
    }
    const char* color = r.memory ? "#1a5fb4" : "#a51d2d";
    s += "<line x1=\"" + Num(ChartX(a, f, x0)) + "\" y1=\"" + Num(ChartY(a, f, y0)) + "\" x2=\"" +
         Num(ChartX(a, f, x1)) + "\" y2=\"" + Num(ChartY(a, f, y1)) + "\" stroke=\"" + color +
         "\" stroke-width=\"1.5\"/>\n";
    if (r.memory) {
      s += "<text x=\"" + Num(ChartX(a, f, x0) + 4) + "\" y=\"" + Num(ChartY(a, f, y0) - 6) +
           "\" fill=\"" + color + "\">" + Escape(r.label) + "</text>\n";
    } else {
      s += "<text x=\"" + Num(f.left + f.width - 4) + "\" y=\"" + Num(ChartY(a, f, y0) - 4) +
           "\" text-anchor=\"end\" fill=\"" + color + "\">" + Escape(r.label) + "</text>\n";
    }
  }
  // Points and legend.
  for (size_t i = 0; i < points.size(); ++i) {
    const ChartPoint& p = points[i];
    const char* color = kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
    std::string n = std::to_string(i + 1);
    double ly = f.top + 20 + 18 * static_cast<double>(i);
    if (Plottable(p)) {
      double px = ChartX(a, f, p.intensity), py = ChartY(a, f, p.flops_per_s);
      s += "<circle cx=\"" + Num(px) + "\" cy=\"" + Num(py) + "\" r=\"6\" fill=\"" + color +
           "\" fill-opacity=\"0.85\"/>\n";
      s += "<text x=\"" + Num(px + 8) + "\" y=\"" + Num(py - 6) + "\" fill=\"" + color + "\">" + n +
           "</text>\n";
    }
    std::string text = n + "  " + p.label + (Plottable(p) ? "" : "  (0 FLOPs: not on chart)");
    s += "<text x=\"" + Num(legend_x) + "\" y=\"" + Num(ly) + "\" fill=\"" + color + "\">" +
         Escape(text) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace stepscope
