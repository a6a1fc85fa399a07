// Medians: the one definition, and which one to use where.
//
// The median of a set of numbers is its middle value, or the mean of the two
// middle values of an even count, as Nsight Systems' recipes and NVRx report
// it. Every statistic stepscope prints or compares is this median (`Median`,
// and `MedianNs` for whole nanoseconds).
//
// Where the answer must be one of the values themselves (a step to show, a
// measured kernel time, a gap that occurred, a sample period), an even count
// has no middle value and a side is picked: `LowerMedian` or `UpperMedian`.
// Both are in use: the lower one where a step or a measured duration is chosen,
// the upper one for the replay graph's fitted latencies (whatif/graph.cc), the
// straggler wait a collective_wait finding is compared against and the host
// sample period. Moving those to the lower side would move the what-if
// predictions their calibration was measured with; a change of side is a
// change of outputs, not a refactor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace stepscope {

// The median; NaN when `v` is empty.
double Median(std::vector<double> v);
double Median(std::vector<int64_t> v);
// The same on *v in place (reordered, not copied); NaN when empty.
double MedianInPlace(std::vector<int64_t>* v);

// The median in whole nanoseconds: the mean of the two middle values is
// truncated toward zero ((lo + hi) / 2); 0 when `v` is empty.
int64_t MedianNs(std::vector<int64_t> v);

// The lower of the two middle elements of an even count (the middle one of an
// odd count), by `less`; *v is reordered. `v` must not be empty.
template <typename T, typename Less = std::less<T>>
const T& LowerMedian(std::vector<T>* v, Less less = {}) {
  const auto mid = v->begin() + static_cast<std::ptrdiff_t>((v->size() - 1) / 2);
  std::nth_element(v->begin(), mid, v->end(), less);
  return *mid;
}

// The upper of the two middle elements of an even count (the middle one of an
// odd count); *v is reordered. `v` must not be empty.
template <typename T>
const T& UpperMedian(std::vector<T>* v) {
  const auto mid = v->begin() + static_cast<std::ptrdiff_t>(v->size() / 2);
  std::nth_element(v->begin(), mid, v->end());
  return *mid;
}

}  // namespace stepscope
