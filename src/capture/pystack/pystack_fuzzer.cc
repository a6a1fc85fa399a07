// Fuzz target: the two parsers of capture/pystack that read bytes from
// another process or file: the ELF symbol reader (a damaged or hostile
// libpython on disk) and the 3.11+ location table (co_linetable read from a
// process whose memory changed under the reader). Nothing may crash, hang or
// read out of bounds.
#include <cstddef>
#include <cstdint>

#include "capture/pystack/elf_symbols.h"
#include "capture/pystack/py_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::pystack;
  (void)ParseElfSymbols(data, size, {"_PyRuntime", "Py_Version", "PyCode_Type"});
  if (size >= 2) {
    const int firstlineno = data[0];
    for (int index = -1; index < 64; ++index) {
      (void)LineForInstruction(data + 1, size - 1, firstlineno, index);
    }
  }
  return 0;
}
