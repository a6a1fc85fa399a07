// Fuzz target: any bytes as a model config (JSON or Megatron arguments) must
// parse or fail with a message, never crash; a config that parses is planned.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plan/model_spec.h"
#include "plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::plan;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto m = ParseModelSpec(text, "fuzz", {});
  if (!m.ok()) return 0;
  PlanOptions o;
  o.micro_batch = 2;
  o.seq_len = 256;
  (void)ComputePlan(*m, o);
  o.recompute = Recompute::kFull;
  o.tp = 2;
  (void)ComputePlan(*m, o);
  return 0;
}
