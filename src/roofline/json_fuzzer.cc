// Fuzz target for the roofline stage's parsers: the JSON reader and the
// profiler's result-line, target and ceilings formats built on it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "roofline/ceilings.h"
#include "roofline/json.h"
#include "roofline/profile_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  auto v = stepscope::ParseJson(s);
  if (v.ok()) {
    auto again = stepscope::ParseJson(v->Dump());
    if (!again.ok()) __builtin_trap();  // what we write we must read back
  }
  (void)stepscope::ParseResults(s);
  (void)stepscope::ParseTargets(s);
  (void)stepscope::ParseCeilingsStore(s, "fuzz");
  return 0;
}
