// Symbol lookup in an ELF file on disk (64-bit, little-endian), for finding a
// Python runtime in another process: the address of `_PyRuntime` and
// `Py_Version` in libpython or a statically linked python executable.
//
// Reads only the section headers and the .dynsym/.symtab tables it needs
// (pread, no mapping of the whole file). Never throws; a malformed file is an
// error Status.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope::pystack {

struct ElfSymbols {
  // Requested names found, with their st_value (link-time virtual address).
  std::map<std::string, uint64_t> values;
  // p_vaddr of the first PT_LOAD segment with p_offset 0, page-aligned: the
  // load bias is (start of the mapping at file offset 0) - first_load_vaddr.
  uint64_t first_load_vaddr = 0;
  bool position_independent = true;  // ET_DYN
};

// Looks up `names` in .dynsym (and .symtab when present).
StatusOr<ElfSymbols> ReadElfSymbols(const std::string& path, const std::vector<std::string>& names);

// Same, from an in-memory image of the file (tests, fuzzing).
StatusOr<ElfSymbols> ParseElfSymbols(const uint8_t* data, size_t size,
                                     const std::vector<std::string>& names);

}  // namespace stepscope::pystack
