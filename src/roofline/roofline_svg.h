// The roofline chart as a self-contained SVG: log-log, arithmetic intensity
// (FLOP per DRAM byte) on x, FLOP/s on y; one horizontal roof per measured
// compute ceiling, one slanted roof per measured memory bandwidth, one
// numbered point per kernel, and a legend with the kernels' names.
//
// The geometry (axis ranges, where a value lands) is exposed so tests can
// check the chart's data without parsing SVG. Output is deterministic: the
// same input gives byte-identical SVG.
#pragma once

#include <string>
#include <vector>

namespace stepscope {

struct ChartRoof {
  std::string label;  // "tensor bf16 790.1 TFLOP/s"
  bool memory = false;
  double value = 0;  // FLOP/s for compute roofs, bytes/s for memory roofs
};

struct ChartPoint {
  std::string label;       // legend text
  double intensity = 0;    // FLOP per byte (x)
  double flops_per_s = 0;  // y
};

struct ChartAxes {
  double x_min = 0, x_max = 0;  // FLOP/byte, powers of ten
  double y_min = 0, y_max = 0;  // FLOP/s, powers of ten
};

// Decade-aligned axes covering every plottable point, every ridge point and
// every roof.
ChartAxes ComputeAxes(const std::vector<ChartRoof>& roofs, const std::vector<ChartPoint>& points);

// Pixel position of a data value inside the plot area (x grows right, y grows
// up in data, down in pixels). Values outside the axes are clamped.
struct ChartFrame {
  double left = 80, top = 40, width = 600, height = 440;
};
double ChartX(const ChartAxes& a, const ChartFrame& f, double intensity);
double ChartY(const ChartAxes& a, const ChartFrame& f, double flops_per_s);

// Points with zero FLOPs or zero intensity cannot sit on a log-log chart;
// they are listed in the legend as "not on chart".
bool Plottable(const ChartPoint& p);

std::string RooflineSvg(const std::string& title, const std::vector<ChartRoof>& roofs,
                        const std::vector<ChartPoint>& points);

}  // namespace stepscope
