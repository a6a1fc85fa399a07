#include "importers/exact_decimal.h"

namespace stepscope {
namespace {
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

// The literal is DIGITS * 10^shift, where DIGITS is the integer and fraction
// digits run together and shift = exponent - fraction_length + scale. A
// positive shift appends zeros; a negative one drops the last -shift digits,
// rounding on the first dropped digit.
DecimalStatus DecimalToScaledInt(std::string_view t, int scale, int64_t* out) {
  size_t i = 0, n = t.size();
  bool neg = false;
  if (i < n && t[i] == '-') {
    neg = true;
    ++i;
  }
  size_t int_begin = i;
  while (i < n && IsDigit(t[i])) ++i;
  size_t int_end = i;
  if (int_end == int_begin) return DecimalStatus::kInvalid;
  size_t frac_begin = i, frac_end = i;
  if (i < n && t[i] == '.') {
    frac_begin = ++i;
    while (i < n && IsDigit(t[i])) ++i;
    frac_end = i;
    if (frac_end == frac_begin) return DecimalStatus::kInvalid;
  }
  int64_t exponent = 0;
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < n && (t[i] == '+' || t[i] == '-')) eneg = t[i++] == '-';
    if (i == n) return DecimalStatus::kInvalid;
    for (; i < n && IsDigit(t[i]); ++i) {
      if (exponent < 100000) exponent = exponent * 10 + (t[i] - '0');
    }
    if (eneg) exponent = -exponent;
  }
  if (i != n) return DecimalStatus::kInvalid;

  const int64_t ndigits = static_cast<int64_t>((int_end - int_begin) + (frac_end - frac_begin));
  const int64_t shift = exponent - static_cast<int64_t>(frac_end - frac_begin) + scale;
  auto digit_at = [&](int64_t k) -> int {
    size_t ilen = int_end - int_begin;
    return static_cast<size_t>(k) < ilen ? t[int_begin + k] - '0'
                                         : t[frac_begin + (k - ilen)] - '0';
  };
  const uint64_t limit =
      neg ? static_cast<uint64_t>(INT64_MAX) + 1 : static_cast<uint64_t>(INT64_MAX);
  const int64_t keep = shift < 0 ? ndigits + shift : ndigits;
  uint64_t v = 0;
  for (int64_t k = 0; k < keep; ++k) {
    uint64_t d = static_cast<uint64_t>(digit_at(k));
    if (v > (limit - d) / 10) return DecimalStatus::kOverflow;
    v = v * 10 + d;
  }
  bool rounded = false;
  if (shift > 0 && v != 0) {
    for (int64_t k = 0; k < shift; ++k) {
      if (v > limit / 10) return DecimalStatus::kOverflow;
      v *= 10;
    }
  } else if (shift < 0) {
    int64_t first_dropped = keep;  // may be negative: every digit is dropped
    for (int64_t k = first_dropped < 0 ? 0 : first_dropped; k < ndigits; ++k) {
      if (digit_at(k) != 0) rounded = true;
    }
    if (first_dropped >= 0 && first_dropped < ndigits && digit_at(first_dropped) >= 5) {
      if (v == limit) return DecimalStatus::kOverflow;
      ++v;
    }
  }
  if (neg) {
    *out = v == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(v);
  } else {
    *out = static_cast<int64_t>(v);
  }
  return rounded ? DecimalStatus::kRounded : DecimalStatus::kOk;
}

}  // namespace stepscope
