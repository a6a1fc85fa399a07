#include "common/bounded_regex.h"

namespace stepscope {

bool BoundedRegexSearch(std::string_view text, const std::regex& re) {
  return !RegexSubjectTooLong(text) && std::regex_search(text.begin(), text.end(), re);
}

}  // namespace stepscope
