#include "capture/pystack/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <functional>

namespace stepscope::pystack {
namespace {

// Reads [off, off+n) of the file into `out`; false past the end.
using ReadFn = std::function<bool(uint64_t off, size_t n, void* out)>;

StatusOr<ElfSymbols> Parse(const ReadFn& read, const std::vector<std::string>& names) {
  Elf64_Ehdr eh;
  if (!read(0, sizeof(eh), &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return InvalidInput("not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    return InvalidInput("not a 64-bit little-endian ELF file");
  }
  ElfSymbols out;
  out.position_independent = eh.e_type == ET_DYN;
  bool have_load = false;
  for (uint16_t i = 0; i < eh.e_phnum && i < 256; ++i) {
    Elf64_Phdr ph;
    if (eh.e_phentsize != sizeof(ph) ||
        !read(eh.e_phoff + uint64_t{i} * sizeof(ph), sizeof(ph), &ph))
      break;
    if (ph.p_type == PT_LOAD && !have_load) {
      out.first_load_vaddr = (ph.p_vaddr - ph.p_offset) & ~uint64_t{0xfff};
      have_load = true;
    }
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096) {
    return InvalidInput("no section headers");
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!read(eh.e_shoff, sh.size() * sizeof(Elf64_Shdr), sh.data())) {
    return InvalidInput("section headers past the end of the file");
  }
  std::map<std::string, bool> wanted;
  for (const std::string& n : names) wanted[n] = true;
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_type != SHT_DYNSYM && s.sh_type != SHT_SYMTAB) continue;
    if (s.sh_link >= sh.size() || s.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr& strtab = sh[s.sh_link];
    if (s.sh_size > (uint64_t{256} << 20) || strtab.sh_size > (uint64_t{256} << 20)) continue;
    std::vector<char> strings(strtab.sh_size + 1, '\0');
    if (!read(strtab.sh_offset, strtab.sh_size, strings.data())) continue;
    const size_t count = s.sh_size / sizeof(Elf64_Sym);
    std::vector<Elf64_Sym> syms(count);
    if (!read(s.sh_offset, count * sizeof(Elf64_Sym), syms.data())) continue;
    for (const Elf64_Sym& sym : syms) {
      if (sym.st_name >= strtab.sh_size || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* name = strings.data() + sym.st_name;
      auto it = wanted.find(name);
      if (it != wanted.end() && !out.values.count(it->first)) out.values[it->first] = sym.st_value;
    }
  }
  return out;
}

}  // namespace

StatusOr<ElfSymbols> ParseElfSymbols(const uint8_t* data, size_t size,
                                     const std::vector<std::string>& names) {
  return Parse(
      [data, size](uint64_t off, size_t n, void* out) {
        if (off > size || n > size - off) return false;
        std::memcpy(out, data + off, n);
        return true;
      },
      names);
}

StatusOr<ElfSymbols> ReadElfSymbols(const std::string& path,
                                    const std::vector<std::string>& names) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open " + path + ": " + std::strerror(errno));
  auto result = Parse(
      [fd](uint64_t off, size_t n, void* out) {
        size_t done = 0;
        while (done < n) {
          ssize_t r =
              ::pread(fd, static_cast<char*>(out) + done, n - done, static_cast<off_t>(off + done));
          if (r <= 0) return false;
          done += static_cast<size_t>(r);
        }
        return true;
      },
      names);
  ::close(fd);
  if (!result.ok()) return result.status().WithContext(path);
  return result;
}

}  // namespace stepscope::pystack
