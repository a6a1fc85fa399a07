// Fuzz target: the parsers of collector/native_stack.h that read bytes from
// outside: the ELF reader (any file mapped executable in the traced process),
// a perf sample record (the kernel's ring, read while it is written) and a
// /proc/PID/maps text. The whole input goes to each. Nothing may crash or
// read out of bounds; what they return must stay inside the input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "collector/native_stack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope;

  // ELF: symbols, segments, lookups and reads at the addresses it names.
  auto elf = ElfSymbols::Parse(data, size);
  if (elf.ok()) {
    uint8_t buf[16];
    for (size_t k = 0; k < elf->size() && k < 64; ++k) {
      const auto& s = elf->symbol(static_cast<int>(k));
      if (std::strlen(elf->name(static_cast<int>(k))) == 0) __builtin_trap();
      for (uint64_t a : {s.addr, s.addr - 1, s.addr + 1, s.addr + s.size}) {
        const int f = elf->Find(a);
        if (f >= static_cast<int>(elf->size())) __builtin_trap();
      }
      (void)elf->ReadVaddr(s.addr, buf, sizeof buf);
    }
    for (const auto& g : elf->segments()) {
      (void)elf->ReadVaddr(g.vaddr, buf, 8);
      (void)elf->ReadVaddr(g.vaddr + g.filesz - 4, buf, 8);
      (void)elf->ReadVaddr(g.vaddr + g.filesz, buf, 1);
      uint64_t v = 0;
      (void)elf->VaddrOfOffset(g.offset, &v);
      (void)elf->VaddrOfOffset(g.offset + g.filesz - 1, &v);
    }
    if (elf->eh_frame_hdr() != 0) (void)elf->ReadVaddr(elf->eh_frame_hdr(), buf, 4);
    if (size >= 8) {
      uint64_t a = 0;
      std::memcpy(&a, data + size - 8, 8);
      (void)elf->Find(a);
      (void)elf->ReadVaddr(a, buf, 1 + data[size - 1] % sizeof buf);
    }
  }

  // One PERF_RECORD_SAMPLE body: its stack copy lies inside the record.
  PerfSample ps;
  if (ParsePerfSample(data, size, &ps) && ps.stack != nullptr) {
    if (ps.stack < data || ps.stack_size > size ||
        static_cast<size_t>(ps.stack - data) > size - ps.stack_size)
      __builtin_trap();
  }

  // A maps text: executable file mappings, non-empty ranges, sorted.
  const auto maps = ParseMaps(std::string(reinterpret_cast<const char*>(data), size));
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].start >= maps[i].end || maps[i].path.empty() || maps[i].path[0] != '/')
      __builtin_trap();
    if (i > 0 && maps[i - 1].start > maps[i].start) __builtin_trap();
  }
  return 0;
}
