// std::regex on untrusted names, bounded.
//
// libstdc++'s std::regex executor recurses once per character it consumes:
// a pattern such as 'gemm.*' searched in a kernel or NVTX name of 20,000
// characters overflows the stack (SIGSEGV). Names come from the traced
// program, so every regex a user gives (--step-range, roofline --kernel) is
// searched only in names up to kMaxRegexSubject characters; a longer name
// never matches, and callers that can count such names say so.
#pragma once

#include <cstddef>
#include <regex>
#include <string_view>

namespace stepscope {

inline constexpr size_t kMaxRegexSubject = 1024;

// Whether `re` matches somewhere in `text`; false when `text` is longer than
// kMaxRegexSubject (RegexSubjectTooLong).
bool BoundedRegexSearch(std::string_view text, const std::regex& re);
inline bool RegexSubjectTooLong(std::string_view text) { return text.size() > kMaxRegexSubject; }

}  // namespace stepscope
