// Exact conversion of decimal number literals to scaled integers.
//
// Kineto writes "ts"/"dur" in microseconds with the nanoseconds as decimal
// digits ("ts": 7253021563398.373). Going through a double loses the last
// digits of such a 13-digit value, so the importer converts the literal text
// itself: value * 10^scale, computed digit by digit on integers. Digits beyond
// the scale are rounded half away from zero (and reported, so a trace written
// with sub-nanosecond digits is visible in the stats).
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope {

enum class DecimalStatus { kOk, kRounded, kInvalid, kOverflow };

// Parses a JSON number literal (-?digits[.digits][e[+-]digits]) and returns
// literal * 10^scale in *out. kRounded: *out is valid but digits were dropped.
DecimalStatus DecimalToScaledInt(std::string_view literal, int scale, int64_t* out);

}  // namespace stepscope
