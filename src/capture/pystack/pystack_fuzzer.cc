// Fuzz target: the two parsers of capture/pystack that read bytes from
// another process or file: the ELF symbol reader (a damaged or hostile
// libpython on disk) and the 3.11+ location table (co_linetable read from a
// process whose memory changed under the reader). Nothing may crash, hang or
// read out of bounds, and the location table decoded once into runs must
// give every code unit the line the decoder gives it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "capture/pystack/elf_symbols.h"
#include "capture/pystack/py_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::pystack;
  (void)ParseElfSymbols(data, size, {"_PyRuntime", "Py_Version", "PyCode_Type"});
  if (size >= 2) {
    const int firstlineno = data[0];
    std::vector<LineSpan> spans;
    DecodeLineTable(data + 1, size - 1, firstlineno, &spans);
    for (int index = -1; index < 64; ++index) {
      // The decoded runs must say what the decoder says.
      if (LineForInstruction(data + 1, size - 1, firstlineno, index) != LineInSpans(spans, index)) {
        std::abort();
      }
    }
  }
  return 0;
}
