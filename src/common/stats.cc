#include "common/stats.h"

#include <limits>

namespace stepscope {
namespace {

// The two middle values of *v (equal for an odd count); *v reordered, not empty.
template <typename T>
void MiddleValues(std::vector<T>* v, T* lo, T* hi) {
  const auto mid = v->begin() + static_cast<std::ptrdiff_t>(v->size() / 2);
  std::nth_element(v->begin(), mid, v->end());
  *hi = *mid;
  *lo = v->size() % 2 ? *hi : *std::max_element(v->begin(), mid);
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double lo, hi;
  MiddleValues(&v, &lo, &hi);
  return v.size() % 2 ? hi : (lo + hi) / 2;
}

double MedianInPlace(std::vector<int64_t>* v) {
  if (v->empty()) return std::numeric_limits<double>::quiet_NaN();
  int64_t lo, hi;
  MiddleValues(v, &lo, &hi);
  return v->size() % 2 ? static_cast<double>(hi)
                       : (static_cast<double>(lo) + static_cast<double>(hi)) / 2;
}

double Median(std::vector<int64_t> v) { return MedianInPlace(&v); }

int64_t MedianNs(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  int64_t lo, hi;
  MiddleValues(&v, &lo, &hi);
  return v.size() % 2 ? hi : (lo + hi) / 2;
}

}  // namespace stepscope
