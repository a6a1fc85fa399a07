#include "roofline/roofline_svg.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

std::vector<ChartRoof> Roofs() {
  return {{"dram 3 TB/s", true, 3e12},
          {"l2 8 TB/s", true, 8e12},
          {"bf16 790 TF", false, 790e12},
          {"fp32 60 TF", false, 60e12}};
}

TEST(Svg, AxesCoverRidgePointsAndPoints) {
  // Ridges: 790e12/3e12 = 263, 790e12/8e12 = 98.75, 60e12/3e12 = 20, 60e12/8e12 = 7.5.
  // Points at intensity 5.5 and 1374.
  std::vector<ChartPoint> pts = {{"gelu", 5.5, 12e12}, {"gemm", 1374.4, 687e12}, {"copy", 0, 0}};
  ChartAxes a = ComputeAxes(Roofs(), pts);
  EXPECT_DOUBLE_EQ(a.x_min, 1);      // floor(5.5 / 2) decade
  EXPECT_DOUBLE_EQ(a.x_max, 10000);  // ceil(1374.4 * 2) decade
  EXPECT_DOUBLE_EQ(a.y_max, 1e15);   // decade above 790e12 (with 5% headroom)
  EXPECT_DOUBLE_EQ(a.y_min, 1e12);   // lowest memory roof at x_min: 3e12 -> 1e12
  EXPECT_FALSE(Plottable(pts[2]));
  EXPECT_TRUE(Plottable(pts[0]));
}

TEST(Svg, PositionsAreLogLinear) {
  ChartAxes a{1, 10000, 1e12, 1e15};
  ChartFrame f;  // left 80, top 40, 600 x 440
  EXPECT_DOUBLE_EQ(ChartX(a, f, 1), 80);
  EXPECT_DOUBLE_EQ(ChartX(a, f, 100), 380);   // 2 of 4 decades
  EXPECT_DOUBLE_EQ(ChartX(a, f, 1e6), 680);   // clamped to the right edge
  EXPECT_DOUBLE_EQ(ChartY(a, f, 1e15), 40);   // top
  EXPECT_DOUBLE_EQ(ChartY(a, f, 1e12), 480);  // bottom
  EXPECT_NEAR(ChartY(a, f, 1e13), 480 - 440.0 / 3, 1e-9);
}

TEST(Svg, EveryRoofPointAndLegendIsDrawn) {
  std::vector<ChartPoint> pts = {
      {"gelu <bf16>", 5.5, 12e12}, {"gemm", 1374.4, 687e12}, {"copy", 0, 0}};
  std::string svg = RooflineSvg("Roofline: H100 & co", Roofs(), pts);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("Roofline: H100 &amp; co"), std::string::npos);
  EXPECT_NE(svg.find("gelu &lt;bf16&gt;"), std::string::npos);
  EXPECT_NE(svg.find("copy  (0 FLOPs: not on chart)"), std::string::npos);
  size_t circles = 0, pos = 0;
  while ((pos = svg.find("<circle", pos)) != std::string::npos) ++circles, ++pos;
  EXPECT_EQ(circles, 2u);  // only the plottable points
  for (const char* label : {"dram 3 TB/s", "l2 8 TB/s", "bf16 790 TF", "fp32 60 TF"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  // Axes as in AxesCoverRidgePointsAndPoints: x 1..1e4, y 1e12..1e15.
  // The first point: x = 80 + 600 * log10(5.5)/4 = 191.1; y = 480 - 440 * log10(12)/3 = 321.7.
  EXPECT_NE(svg.find("<circle cx=\"191.1\" cy=\"321.7\""), std::string::npos) << svg;
  EXPECT_EQ(RooflineSvg("Roofline: H100 & co", Roofs(), pts), svg);  // deterministic
}

}  // namespace
}  // namespace stepscope
