// Fuzz target: the PyTorch memory file parser and the allocator replay must
// survive any input (errors are fine, crashes and hangs are not).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/memory/torch_allocator_model.h"
#include "analysis/memory/torch_memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::memory;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto f = ParseTorchMemoryFile(text, "fuzz.json");
  if (f.ok()) {
    auto profiles = BuildTorchProfiles(*f, 0);
    for (const auto& p : profiles) {
      if (p.peak_allocated_index != kNever) (void)p.LiveAt(p.peak_allocated_index);
      for (const auto& t : p.tensors) (void)FrameLabel(UserFrame(*f, t.stack));
    }
  }
  return 0;
}
