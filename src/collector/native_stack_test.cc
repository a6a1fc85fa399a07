// The native-stack pieces: ElfSymbols on this test binary and on hand-built
// images, ParsePerfSample on hand-built records, ParseMaps on a maps text,
// and NativeSampler end to end on this process (skipped where perf events
// are not allowed, as in most containers).
#include "collector/native_stack.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

// GCC may clone a function (constprop, isra) and call the clone, whose symbol
// is not the name the tests look for; noipa forbids that.
#if defined(__clang__)
#define STEPSCOPE_TEST_NOINLINE __attribute__((noinline))
#else
#define STEPSCOPE_TEST_NOINLINE __attribute__((noipa))
#endif

extern "C" STEPSCOPE_TEST_NOINLINE int stepscope_test_marker(int x) {
  asm volatile("");
  return x * 3 + 1;
}

// Two frames of CPU work for the sampler: the outer one loops, the inner one
// does nearly all the work.
extern "C" STEPSCOPE_TEST_NOINLINE uint64_t stepscope_test_spin_inner(uint64_t n) {
  volatile uint64_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) acc = acc + i * 2654435761u;
  return acc;
}

namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

extern "C" STEPSCOPE_TEST_NOINLINE uint64_t stepscope_test_spin(int64_t cpu_ns) {
  volatile uint64_t acc = 0;
  const int64_t until = ThreadCpuNs() + cpu_ns;
  while (ThreadCpuNs() < until) acc = acc + stepscope_test_spin_inner(20000);
  return acc;
}

namespace stepscope {
namespace {

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// ---- ElfSymbols on this binary ----

TEST(ElfSymbols, FindsAFunctionOfThisBinary) {
  const std::string image = ReadFile("/proc/self/exe");
  ASSERT_GT(image.size(), sizeof(Elf64_Ehdr));
  auto elf = ElfSymbols::Parse(Bytes(image), image.size());
  ASSERT_TRUE(elf.ok()) << elf.status().message();
#if defined(__x86_64__)
  EXPECT_EQ(elf->machine(), EM_X86_64);
#elif defined(__aarch64__)
  EXPECT_EQ(elf->machine(), EM_AARCH64);
#endif
  EXPECT_NE(elf->eh_frame_hdr(), 0u);
  bool exec = false;
  for (const auto& g : elf->segments()) exec = exec || g.exec;
  EXPECT_TRUE(exec);

  int marker = -1;
  for (size_t i = 0; i < elf->size(); ++i)
    if (std::strcmp(elf->name(static_cast<int>(i)), "stepscope_test_marker") == 0)
      marker = static_cast<int>(i);
  ASSERT_GE(marker, 0);
  const uint64_t addr = elf->symbol(marker).addr;
  EXPECT_EQ(elf->Find(addr), marker);
  EXPECT_EQ(elf->Find(addr + 1), marker);
  if (elf->symbol(marker).size != 0) {
    EXPECT_NE(elf->Find(addr + elf->symbol(marker).size), marker);
  }

  // The running code at the marker's address, placed with the load bias of
  // this binary's executable mapping, is the file's bytes at its link-time
  // address.
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  const std::string exe_path(exe, static_cast<size_t>(n));
  const auto runtime = reinterpret_cast<uint64_t>(&stepscope_test_marker);
  bool placed = false;
  for (const Mapping& m : ParseMaps(ReadFile("/proc/self/maps"))) {
    if (m.path != exe_path || runtime < m.start || runtime >= m.end) continue;
    uint64_t link = 0;
    ASSERT_TRUE(elf->VaddrOfOffset(m.offset + (runtime - m.start), &link));
    EXPECT_EQ(link, addr);
    EXPECT_EQ(elf->Find(link), marker);
    uint8_t code[16];
    ASSERT_TRUE(elf->ReadVaddr(link, code, sizeof code));
    EXPECT_EQ(std::memcmp(code, reinterpret_cast<const void*>(runtime), sizeof code), 0);
    placed = true;
  }
  EXPECT_TRUE(placed) << "no executable mapping of " << exe_path << " holds the marker";
  EXPECT_EQ(stepscope_test_marker(2), 7);
}

// ---- ElfSymbols on hand-built images ----

struct TestSym {
  std::string name;
  uint64_t addr, size;
  uint8_t type = STT_FUNC;
  uint16_t shndx = 1;
};

// An ELF64 image: header, a PT_LOAD (R E) of the whole file at 0x400000 and a
// PT_GNU_EH_FRAME, then .strtab (its last name unterminated when asked),
// .symtab, and the section headers [null, .symtab, .strtab].
std::vector<uint8_t> BuildElf(const std::vector<TestSym>& syms, const std::string& unterminated) {
  std::string strtab(1, '\0');
  std::vector<Elf64_Sym> table(1);
  std::memset(table.data(), 0, sizeof(Elf64_Sym));
  for (const TestSym& s : syms) {
    Elf64_Sym e;
    std::memset(&e, 0, sizeof e);
    e.st_name = static_cast<uint32_t>(strtab.size());
    e.st_info = ELF64_ST_INFO(STB_GLOBAL, s.type);
    e.st_shndx = s.shndx;
    e.st_value = s.addr;
    e.st_size = s.size;
    table.push_back(e);
    strtab += s.name;
    strtab.push_back('\0');
  }
  if (!unterminated.empty()) {
    Elf64_Sym e;
    std::memset(&e, 0, sizeof e);
    e.st_name = static_cast<uint32_t>(strtab.size());
    e.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    e.st_shndx = 1;
    e.st_value = 0x403000;
    table.push_back(e);
    strtab += unterminated;  // no NUL: the section ends here
  }
  const size_t ph_off = sizeof(Elf64_Ehdr);
  const size_t str_off = ph_off + 2 * sizeof(Elf64_Phdr);
  const size_t sym_off = (str_off + strtab.size() + 7) & ~size_t{7};
  const size_t sh_off = sym_off + table.size() * sizeof(Elf64_Sym);
  const size_t total = sh_off + 3 * sizeof(Elf64_Shdr);
  std::vector<uint8_t> out(total, 0);

  Elf64_Ehdr eh;
  std::memset(&eh, 0, sizeof eh);
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = ph_off;
  eh.e_shoff = sh_off;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 2;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  std::memcpy(out.data(), &eh, sizeof eh);

  Elf64_Phdr ph[2];
  std::memset(ph, 0, sizeof ph);
  ph[0].p_type = PT_LOAD;
  ph[0].p_flags = PF_R | PF_X;
  ph[0].p_vaddr = 0x400000;
  ph[0].p_filesz = total;
  ph[0].p_memsz = total + 0x1000;
  ph[1].p_type = PT_GNU_EH_FRAME;
  ph[1].p_vaddr = 0x400100;
  std::memcpy(out.data() + ph_off, ph, sizeof ph);

  std::memcpy(out.data() + str_off, strtab.data(), strtab.size());
  std::memcpy(out.data() + sym_off, table.data(), table.size() * sizeof(Elf64_Sym));

  Elf64_Shdr sh[3];
  std::memset(sh, 0, sizeof sh);
  sh[1].sh_type = SHT_SYMTAB;
  sh[1].sh_offset = sym_off;
  sh[1].sh_size = table.size() * sizeof(Elf64_Sym);
  sh[1].sh_link = 2;
  sh[1].sh_entsize = sizeof(Elf64_Sym);
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = str_off;
  sh[2].sh_size = strtab.size();
  std::memcpy(out.data() + sh_off, sh, sizeof sh);
  return out;
}

size_t ShdrOffset(const std::vector<uint8_t>& img, int i) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, img.data(), sizeof eh);
  return eh.e_shoff + static_cast<size_t>(i) * sizeof(Elf64_Shdr);
}

std::vector<TestSym> SampleSyms() {
  return {
      {"f_alias", 0x401000, 0},     // listed first, unsized: its name, the sized size
      {"f_sized", 0x401000, 0x20},  // the same address
      {"f_unsized", 0x401040, 0},   // up to the next function
      {"an_object", 0x401080, 8, STT_OBJECT},
      {"f_undefined", 0x401090, 0, STT_FUNC, SHN_UNDEF},
      {"f_last", 0x401100, 0},  // 4096 bytes
      {"f_zero", 0, 0x10},      // address 0: dropped
  };
}

TEST(ElfSymbols, SymbolsOfAHandBuiltImage) {
  const auto img = BuildElf(SampleSyms(), "f_unterminated");
  auto elf = ElfSymbols::Parse(img.data(), img.size());
  ASSERT_TRUE(elf.ok()) << elf.status().message();
  EXPECT_EQ(elf->machine(), EM_X86_64);
  EXPECT_EQ(elf->eh_frame_hdr(), 0x400100u);
  ASSERT_EQ(elf->segments().size(), 1u);
  EXPECT_TRUE(elf->segments()[0].exec);
  ASSERT_EQ(elf->size(), 3u);
  EXPECT_STREQ(elf->name(0), "f_alias");
  EXPECT_EQ(elf->symbol(0).size, 0x20u);
  EXPECT_STREQ(elf->name(1), "f_unsized");
  EXPECT_STREQ(elf->name(2), "f_last");

  EXPECT_EQ(elf->Find(0x400fff), -1);
  EXPECT_EQ(elf->Find(0x401000), 0);
  EXPECT_EQ(elf->Find(0x40101f), 0);
  EXPECT_EQ(elf->Find(0x401020), -1);  // past the sized function
  EXPECT_EQ(elf->Find(0x401040), 1);
  EXPECT_EQ(elf->Find(0x4010ff), 1);  // the object is no function
  EXPECT_EQ(elf->Find(0x401100), 2);
  EXPECT_EQ(elf->Find(0x401100 + 4095), 2);
  EXPECT_EQ(elf->Find(0x401100 + 4096), -1);
  EXPECT_EQ(elf->Find(0x403000), -1);  // the unterminated name
  EXPECT_EQ(elf->Find(UINT64_MAX), -1);

  uint8_t magic[4];
  ASSERT_TRUE(elf->ReadVaddr(0x400000, magic, 4));
  EXPECT_EQ(std::memcmp(magic, ELFMAG, 4), 0);
  uint8_t last[8];
  EXPECT_TRUE(elf->ReadVaddr(0x400000 + img.size() - 8, last, 8));
  EXPECT_FALSE(elf->ReadVaddr(0x400000 + img.size() - 7, last, 8));  // past the file
  EXPECT_FALSE(elf->ReadVaddr(0x3fffff, last, 1));
  EXPECT_FALSE(elf->ReadVaddr(UINT64_MAX - 3, last, 8));
  uint64_t v = 0;
  EXPECT_TRUE(elf->VaddrOfOffset(0x10, &v));
  EXPECT_EQ(v, 0x400010u);
  EXPECT_FALSE(elf->VaddrOfOffset(img.size(), &v));
}

TEST(ElfSymbols, RefusesWhatIsNoElf64) {
  std::string text(256, 'x');
  auto r = ElfSymbols::Parse(Bytes(text), text.size());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);

  EXPECT_EQ(ElfSymbols::Parse(nullptr, 0).status().code(), StatusCode::kInvalidInput);

  const auto img = BuildElf(SampleSyms(), "");
  for (size_t len = 0; len < sizeof(Elf64_Ehdr); ++len) {
    auto t = ElfSymbols::Parse(img.data(), len);
    EXPECT_FALSE(t.ok()) << len;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput) << len;
  }

  // An ELF32 header (padded to an ELF64 header's size).
  std::vector<uint8_t> e32(sizeof(Elf64_Ehdr), 0);
  Elf32_Ehdr eh32;
  std::memset(&eh32, 0, sizeof eh32);
  std::memcpy(eh32.e_ident, ELFMAG, SELFMAG);
  eh32.e_ident[EI_CLASS] = ELFCLASS32;
  eh32.e_ident[EI_DATA] = ELFDATA2LSB;
  eh32.e_machine = EM_386;
  std::memcpy(e32.data(), &eh32, sizeof eh32);
  auto r32 = ElfSymbols::Parse(e32.data(), e32.size());
  EXPECT_FALSE(r32.ok());
  EXPECT_EQ(r32.status().code(), StatusCode::kInvalidInput);

  // Big-endian.
  auto be = img;
  be[EI_DATA] = ELFDATA2MSB;
  EXPECT_EQ(ElfSymbols::Parse(be.data(), be.size()).status().code(), StatusCode::kInvalidInput);
}

TEST(ElfSymbols, SurvivesHeadersPointingPastTheEnd) {
  const auto good = BuildElf(SampleSyms(), "");
  auto set_u64 = [](std::vector<uint8_t>* img, size_t off, uint64_t v) {
    std::memcpy(img->data() + off, &v, 8);
  };
  auto set_u16 = [](std::vector<uint8_t>* img, size_t off, uint16_t v) {
    std::memcpy(img->data() + off, &v, 2);
  };
  std::vector<std::vector<uint8_t>> bad;
  for (uint64_t shoff : {uint64_t{good.size()}, uint64_t{good.size()} + 4096,
                         UINT64_MAX - sizeof(Elf64_Shdr) + 1, UINT64_MAX}) {
    auto img = good;
    set_u64(&img, offsetof(Elf64_Ehdr, e_shoff), shoff);
    bad.push_back(img);
  }
  {  // many section headers, the rest past the end
    auto img = good;
    set_u16(&img, offsetof(Elf64_Ehdr, e_shnum), 0xffff);
    bad.push_back(img);
  }
  {  // program headers past the end
    auto img = good;
    set_u64(&img, offsetof(Elf64_Ehdr, e_phoff), UINT64_MAX - 8);
    set_u16(&img, offsetof(Elf64_Ehdr, e_phnum), 0xffff);
    bad.push_back(img);
  }
  const size_t sym = ShdrOffset(good, 1), str = ShdrOffset(good, 2);
  for (uint64_t v : {uint64_t{good.size()}, uint64_t{good.size()} + 1, UINT64_MAX}) {
    for (size_t field :
         {sym + offsetof(Elf64_Shdr, sh_offset), sym + offsetof(Elf64_Shdr, sh_size),
          str + offsetof(Elf64_Shdr, sh_offset), str + offsetof(Elf64_Shdr, sh_size)}) {
      auto img = good;
      set_u64(&img, field, v);
      bad.push_back(img);
    }
  }
  {  // the symbol table's string table out of range
    auto img = good;
    const uint32_t link = 7;
    std::memcpy(img.data() + sym + offsetof(Elf64_Shdr, sh_link), &link, 4);
    bad.push_back(img);
  }
  {  // a symbol name offset past its string table
    auto img = good;
    Elf64_Shdr s;
    std::memcpy(&s, img.data() + sym, sizeof s);
    const uint32_t name = 0xfffffff0;
    std::memcpy(img.data() + s.sh_offset + sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_name), &name,
                4);
    bad.push_back(img);
  }
  for (size_t i = 0; i < bad.size(); ++i) {
    // A copy of exactly its size, so that a read past the end is ASan's to see.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bad[i].size()]);
    std::memcpy(copy.get(), bad[i].data(), bad[i].size());
    auto elf = ElfSymbols::Parse(copy.get(), bad[i].size());
    ASSERT_TRUE(elf.ok()) << i << ": " << elf.status().message();
    for (size_t k = 0; k < elf->size(); ++k) {
      EXPECT_EQ(elf->Find(elf->symbol(static_cast<int>(k)).addr), static_cast<int>(k));
      EXPECT_GT(std::strlen(elf->name(static_cast<int>(k))), 0u);
    }
    uint8_t b[8];
    (void)elf->ReadVaddr(0x400000, b, sizeof b);
  }
  // The whole image, truncated anywhere past the ELF header, parses.
  for (size_t len = sizeof(Elf64_Ehdr); len <= good.size(); ++len) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[len]);
    std::memcpy(copy.get(), good.data(), len);
    auto elf = ElfSymbols::Parse(copy.get(), len);
    ASSERT_TRUE(elf.ok()) << len;
    uint8_t b[8];
    EXPECT_FALSE(elf->ReadVaddr(0x400000 + len - 4, b, 8)) << len;
  }
}

// ---- ParsePerfSample ----

void Put(std::vector<uint8_t>* b, uint64_t v) {
  const size_t at = b->size();
  b->resize(at + 8);
  std::memcpy(b->data() + at, &v, 8);
}

// The body of a sample record (after perf_event_header).
std::vector<uint8_t> SampleBody(uint64_t abi, uint64_t stack_size, uint64_t dyn_size) {
  std::vector<uint8_t> b;
  Put(&b, 0x401234);                       // ip
  Put(&b, (uint64_t{4321} << 32) | 1234);  // pid, tid
  Put(&b, 987654321);                      // time
  Put(&b, abi);                            // regs abi
  if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
    Put(&b, 0x7ffd0100);  // fp
    Put(&b, 0x7ffd0000);  // sp
    Put(&b, 0x401234);    // pc
  }
  Put(&b, stack_size);
  for (uint64_t i = 0; i < stack_size; ++i) b.push_back(static_cast<uint8_t>(i));
  if (stack_size != 0) Put(&b, dyn_size);
  return b;
}

TEST(ParsePerfSample, AFullRecord) {
  const auto b = SampleBody(PERF_SAMPLE_REGS_ABI_64, 64, 40);
  EXPECT_EQ(b.size(), 32u + 24u + 8u + 64u + 8u);
  PerfSample s;
  ASSERT_TRUE(ParsePerfSample(b.data(), b.size(), &s));
  EXPECT_EQ(s.ip, 0x401234u);
  EXPECT_EQ(s.pid, 1234u);
  EXPECT_EQ(s.tid, 4321u);
  EXPECT_EQ(s.time, 987654321u);
  EXPECT_EQ(s.regs_abi, uint64_t{PERF_SAMPLE_REGS_ABI_64});
  EXPECT_EQ(s.fp, 0x7ffd0100u);
  EXPECT_EQ(s.sp, 0x7ffd0000u);
  EXPECT_EQ(s.pc, 0x401234u);
  EXPECT_EQ(s.stack, b.data() + 64);
  EXPECT_EQ(s.stack_size, 40u);
  EXPECT_EQ(s.stack[5], 5);

  // dyn_size larger than the copy: the copy.
  const auto big = SampleBody(PERF_SAMPLE_REGS_ABI_64, 64, 1000);
  ASSERT_TRUE(ParsePerfSample(big.data(), big.size(), &s));
  EXPECT_EQ(s.stack_size, 64u);
}

TEST(ParsePerfSample, NoRegisters) {
  const auto b = SampleBody(PERF_SAMPLE_REGS_ABI_NONE, 16, 16);
  PerfSample s;
  s.fp = s.sp = s.pc = 99;
  ASSERT_TRUE(ParsePerfSample(b.data(), b.size(), &s));
  EXPECT_EQ(s.regs_abi, uint64_t{PERF_SAMPLE_REGS_ABI_NONE});
  EXPECT_EQ(s.fp, 0u);
  EXPECT_EQ(s.sp, 0u);
  EXPECT_EQ(s.pc, 0u);
  EXPECT_EQ(s.stack, b.data() + 40);
  EXPECT_EQ(s.stack_size, 16u);
}

TEST(ParsePerfSample, NoStack) {
  const auto b = SampleBody(PERF_SAMPLE_REGS_ABI_64, 0, 0);
  EXPECT_EQ(b.size(), 64u);  // no dyn_size after an empty stack
  PerfSample s;
  s.stack = b.data();
  s.stack_size = 5;
  ASSERT_TRUE(ParsePerfSample(b.data(), b.size(), &s));
  EXPECT_EQ(s.stack, nullptr);
  EXPECT_EQ(s.stack_size, 0u);
  EXPECT_EQ(s.sp, 0x7ffd0000u);
}

TEST(ParsePerfSample, EveryTruncationFails) {
  for (const auto& b :
       {SampleBody(PERF_SAMPLE_REGS_ABI_64, 64, 40), SampleBody(PERF_SAMPLE_REGS_ABI_NONE, 16, 16),
        SampleBody(PERF_SAMPLE_REGS_ABI_64, 0, 0)}) {
    PerfSample s;
    ASSERT_TRUE(ParsePerfSample(b.data(), b.size(), &s));
    for (size_t len = 0; len < b.size(); ++len) {
      // An exact-size copy, so that a read past `len` is ASan's to see.
      std::unique_ptr<uint8_t[]> copy(new uint8_t[len]);
      std::memcpy(copy.get(), b.data(), len);
      EXPECT_FALSE(ParsePerfSample(copy.get(), len, &s)) << "len " << len << " of " << b.size();
    }
  }
}

TEST(ParsePerfSample, StackSizeLargerThanTheRecord) {
  auto b = SampleBody(PERF_SAMPLE_REGS_ABI_64, 64, 40);
  const uint64_t huge = UINT64_MAX - 4;
  std::memcpy(b.data() + 56, &huge, 8);
  PerfSample s;
  EXPECT_FALSE(ParsePerfSample(b.data(), b.size(), &s));
}

// ---- ParseMaps ----

TEST(ParseMaps, KeepsExecutableFileMappings) {
  const std::string text =
      "00400000-00408000 r--p 00000000 08:01 1234                               /opt/app/bin/app\n"
      "7f0000001000-7f0000005000 r-xp 00001000 08:01 99 /usr/lib/libz.so.1\n"
      "00408000-005c8000 r-xp 00008000 08:01 1234                               /opt/app/bin/app\n"
      "005c8000-0063c000 r--p 001c8000 08:01 1234                               /opt/app/bin/app\n"
      "0063c000-00648000 rw-p 0023c000 08:01 1234                               /opt/app/bin/app\n"
      "01000000-01200000 rw-p 00000000 00:00 0                                  [heap]\n"
      "7f0000010000-7f0000020000 r-xp 00000000 00:00 0 \n"
      "7f0000020000-7f0000030000 r-xp 00000000 00:00 0\n"
      "7f0000030000-7f0000040000 r-xp 00002000 08:01 77  /tmp/gone.so (deleted)\n"
      "7f0000040000-7f0000050000 r-xp 00000000 08:01 78  /data/my lib.so\n"
      "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
      "7f0000060000-7f0000050000 r-xp 00000000 08:01 79  /backwards.so\n"
      "garbage line\n"
      "\n"
      "7f0000070000-7f0000080000 r-xp";
  const auto maps = ParseMaps(text);
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].start, 0x408000u);
  EXPECT_EQ(maps[0].end, 0x5c8000u);
  EXPECT_EQ(maps[0].offset, 0x8000u);
  EXPECT_EQ(maps[0].path, "/opt/app/bin/app");
  EXPECT_EQ(maps[1].start, 0x7f0000001000u);
  EXPECT_EQ(maps[1].end, 0x7f0000005000u);
  EXPECT_EQ(maps[1].offset, 0x1000u);
  EXPECT_EQ(maps[1].path, "/usr/lib/libz.so.1");
  EXPECT_EQ(maps[2].start, 0x7f0000040000u);
  EXPECT_EQ(maps[2].path, "/data/my lib.so");
}

TEST(ParseMaps, ThisProcess) {
  const auto maps = ParseMaps(ReadFile("/proc/self/maps"));
  ASSERT_FALSE(maps.empty());
  for (size_t i = 0; i < maps.size(); ++i) {
    EXPECT_EQ(maps[i].path[0], '/');
    EXPECT_LT(maps[i].start, maps[i].end);
    if (i > 0) {
      EXPECT_LE(maps[i - 1].start, maps[i].start);
    }
  }
  const auto self = reinterpret_cast<uint64_t>(&stepscope_test_marker);
  bool found = false;
  for (const Mapping& m : maps) found = found || (self >= m.start && self < m.end);
  EXPECT_TRUE(found);
}

// ---- NativeSampler, end to end ----

TEST(NativeSampler, UnwindsASpinningThread) {
  std::string why;
  auto sampler = NativeSampler::Create(getpid(), 1000, &why);
  if (sampler == nullptr) GTEST_SKIP() << why;
  const pid_t tid = Tid();
  ASSERT_TRUE(sampler->Watch(tid));
  EXPECT_TRUE(sampler->watching(tid));
  EXPECT_TRUE(sampler->Watch(tid));  // once
  EXPECT_EQ(sampler->watched(), 1u);

  // A ring holds some 30 samples of an 8 KiB stack: another thread drains it
  // while this one spins (and so is not sampled unwinding).
  std::vector<NativeSample> samples;
  std::atomic<bool> done{false};
  std::thread poller([&] {
    while (!done.load()) {
      sampler->Poll(&samples);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t start_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  EXPECT_NE(stepscope_test_spin(300'000'000), 1u);
  done = true;
  poller.join();
  sampler->Poll(&samples);
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t end_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;

  const StackUnwinder& u = sampler->unwinder();
  size_t mine = 0, with_inner = 0, with_both = 0, with_test = 0;
  std::map<std::string, int> leaves;
  for (const NativeSample& s : samples) {
    if (s.tid != static_cast<uint32_t>(tid)) continue;
    ++mine;
    EXPECT_GE(s.realtime_ns, start_ns - 1'000'000'000);
    EXPECT_LE(s.realtime_ns, end_ns + 1'000'000'000);
    for (uint32_t id : s.frames) ASSERT_LT(id, u.frames());
    if (!s.frames.empty()) ++leaves[u.frame(s.frames[0]).function];
    size_t inner = s.frames.size();
    for (size_t i = 0; i < s.frames.size() && inner == s.frames.size(); ++i)
      if (u.frame(s.frames[i]).function == "stepscope_test_spin_inner") inner = i;
    if (inner == s.frames.size()) continue;
    ++with_inner;
    size_t outer = s.frames.size();
    for (size_t i = inner + 1; i < s.frames.size() && outer == s.frames.size(); ++i)
      if (u.frame(s.frames[i]).function == "stepscope_test_spin") outer = i;
    if (outer == s.frames.size()) continue;
    ++with_both;
    // And on through this test's own frame (demangled), whose locals are larger.
    for (size_t i = outer + 1; i < s.frames.size(); ++i) {
      if (u.frame(s.frames[i])
              .function.find("NativeSampler_UnwindsASpinningThread_Test::TestBody") !=
          std::string::npos) {
        ++with_test;
        break;
      }
    }
  }
  std::string top;
  for (const auto& [fn, n] : leaves) top += " " + fn + ":" + std::to_string(n);
  const std::string summary =
      "samples " + std::to_string(samples.size()) + ", of this thread " + std::to_string(mine) +
      " (with the inner frame " + std::to_string(with_inner) + ", and the outer one above it " +
      std::to_string(with_both) + ", and the test above them " + std::to_string(with_test) +
      "), lost " + std::to_string(sampler->lost()) + "; leaves:" + top;
  std::printf("%s\n", summary.c_str());
  SCOPED_TRACE(summary);
  EXPECT_GE(mine, 50u);
  EXPECT_GE(with_inner * 10, mine * 8);
  EXPECT_GE(with_both * 10, with_inner * 8);
  EXPECT_GE(with_test * 10, with_both * 8);
  EXPECT_GT(with_both, 0u);

  // Unwatch reads what is left in the ring, then stops sampling the thread.
  EXPECT_EQ(sampler->watched_tids(), std::vector<pid_t>{tid});
  sampler->Unwatch(tid + 1'000'000, nullptr);  // not watched: nothing
  EXPECT_EQ(sampler->watched(), 1u);
  EXPECT_NE(stepscope_test_spin(15'000'000), 1u);  // some 15 samples: the ring holds ~30
  std::vector<NativeSample> last;
  sampler->Unwatch(tid, &last);
  EXPECT_FALSE(sampler->watching(tid));
  EXPECT_EQ(sampler->watched(), 0u);
  EXPECT_TRUE(sampler->watched_tids().empty());
  EXPECT_GE(last.size(), 5u);
  for (const NativeSample& s : last) EXPECT_EQ(s.tid, static_cast<uint32_t>(tid));
  EXPECT_NE(stepscope_test_spin(10'000'000), 1u);
  std::vector<NativeSample> none;
  sampler->Poll(&none);
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(sampler->Watch(tid));  // again
  EXPECT_TRUE(sampler->watching(tid));
}

}  // namespace
}  // namespace stepscope
