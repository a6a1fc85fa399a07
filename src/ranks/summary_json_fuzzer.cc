// Fuzz target: the rank-summary reader (JSON parser + summary validation)
// must reject any bytes without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ranks/rank_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = stepscope::SummaryFromJson(text, "fuzz");
  if (s.ok()) (void)stepscope::SummaryToJson(*s);
  return 0;
}
