#include "collector/native_stack.h"

#include <elf.h>
#include <fcntl.h>
#include <libunwind.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "capture/clock.h"
#include "common/file_util.h"
#include "common/strings.h"

// Not in libunwind's public headers (perf declares them the same way): the
// search of an .eh_frame_hdr table, and the release of what it found.
extern "C" int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                                  unw_dyn_info_t* di, unw_proc_info_t* pi,
                                                  int need_unwind_info, void* arg);
extern "C" void UNW_OBJ(dwarf_put_unwind_info)(unw_addr_space_t as, unw_proc_info_t* pi, void* arg);

#if defined(__x86_64__)
// libunwind-x86_64.a's resume path (unw_resume of a local cursor) calls this,
// defined in the local-unwinding archive, which is not linked (it would also
// bring its _Unwind_* in place of libgcc's, under C++ exceptions). A remote
// address space never resumes (our Resume accessor refuses).
extern "C" int UNW_OBJ(setcontext)(const void*) { return -UNW_EINVAL; }
#endif

namespace stepscope {

// ---- ELF symbols ----

namespace {

template <typename T>
bool ReadAt(const uint8_t* data, size_t size, uint64_t off, T* out) {
  if (off > size || size - off < sizeof(T)) return false;
  std::memcpy(out, data + off, sizeof(T));
  return true;
}

}  // namespace

StatusOr<ElfSymbols> ElfSymbols::Parse(const uint8_t* data, size_t size) {
  Elf64_Ehdr eh;
  if (!ReadAt(data, size, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return InvalidInput("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return InvalidInput("not a little-endian ELF64 file");
  ElfSymbols s;
  s.data_ = data;
  s.size_ = size;
  s.machine_ = eh.e_machine;
  // Loadable segments.
  if (eh.e_phentsize == sizeof(Elf64_Phdr)) {
    for (uint32_t i = 0; i < eh.e_phnum && i < 4096; ++i) {
      Elf64_Phdr ph;
      if (!ReadAt(data, size, eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), &ph)) break;
      if (ph.p_type == PT_GNU_EH_FRAME) s.eh_frame_hdr_ = ph.p_vaddr;
      if (ph.p_type != PT_LOAD) continue;
      s.segments_.push_back(
          {ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, (ph.p_flags & PF_X) != 0});
    }
  }
  // Function symbols of .symtab and .dynsym.
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return s;
  std::vector<Elf64_Shdr> sh;
  for (uint32_t i = 0; i < eh.e_shnum && i < 65536; ++i) {
    Elf64_Shdr h;
    if (!ReadAt(data, size, eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), &h)) break;
    sh.push_back(h);
  }
  for (const Elf64_Shdr& h : sh) {
    if (h.sh_type != SHT_SYMTAB && h.sh_type != SHT_DYNSYM) continue;
    if (h.sh_link >= sh.size() || h.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr& str = sh[h.sh_link];
    if (str.sh_offset > size || str.sh_size > size - str.sh_offset) continue;
    if (h.sh_offset > size || h.sh_size > size - h.sh_offset) continue;
    const char* strtab = reinterpret_cast<const char*>(data + str.sh_offset);
    const uint64_t n = h.sh_size / sizeof(Elf64_Sym);
    for (uint64_t k = 1; k < n; ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, data + h.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_shndx == SHN_UNDEF)
        continue;
      if (sym.st_name >= str.sh_size) continue;
      const char* nm = strtab + sym.st_name;
      const size_t len = strnlen(nm, str.sh_size - sym.st_name);
      if (len == 0 || len == str.sh_size - sym.st_name) continue;  // empty or unterminated
      s.symbols_.push_back({sym.st_value, sym.st_size, static_cast<uint32_t>(s.names_.size())});
      s.names_.append(nm, len);
      s.names_.push_back('\0');
      if (s.names_.size() > (uint64_t{1} << 31)) return InvalidInput("symbol names too large");
    }
  }
  // Sorted by address; of symbols at one address (an alias in .symtab and
  // .dynsym) the first, sized if any is.
  std::stable_sort(s.symbols_.begin(), s.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.addr < b.addr; });
  std::vector<Symbol> out;
  for (const Symbol& x : s.symbols_) {
    if (!out.empty() && out.back().addr == x.addr) {
      if (out.back().size == 0) out.back().size = x.size;
      continue;
    }
    out.push_back(x);
  }
  s.symbols_ = std::move(out);
  return s;
}

int ElfSymbols::Find(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const Symbol& x) { return v < x.addr; });
  if (it == symbols_.begin()) return -1;
  --it;
  const uint64_t end = it->size != 0                ? it->addr + it->size
                       : (it + 1 != symbols_.end()) ? (it + 1)->addr
                                                    : it->addr + 4096;
  if (vaddr >= end) return -1;
  return static_cast<int>(it - symbols_.begin());
}

bool ElfSymbols::VaddrOfOffset(uint64_t off, uint64_t* vaddr) const {
  for (const Segment& g : segments_) {
    if (!g.exec || off < g.offset || off - g.offset >= g.filesz) continue;
    *vaddr = g.vaddr + (off - g.offset);
    return true;
  }
  return false;
}

bool ElfSymbols::ReadVaddr(uint64_t vaddr, void* out, size_t n) const {
  for (const Segment& g : segments_) {
    if (vaddr < g.vaddr || vaddr - g.vaddr >= g.filesz || g.filesz - (vaddr - g.vaddr) < n)
      continue;
    const uint64_t off = g.offset + (vaddr - g.vaddr);
    if (off > size_ || size_ - off < n) return false;
    std::memcpy(out, data_ + off, n);
    return true;
  }
  return false;
}

// ---- perf ring records ----

bool ParsePerfSample(const uint8_t* body, size_t len, PerfSample* out) {
  size_t off = 0;
  auto u64 = [&](uint64_t* v) {
    if (len - off < 8) return false;
    std::memcpy(v, body + off, 8);
    off += 8;
    return true;
  };
  uint64_t pidtid = 0, nregs_abi = 0;
  if (!u64(&out->ip) || !u64(&pidtid) || !u64(&out->time) || !u64(&nregs_abi)) return false;
  out->pid = static_cast<uint32_t>(pidtid);
  out->tid = static_cast<uint32_t>(pidtid >> 32);
  out->regs_abi = nregs_abi;
  out->fp = out->sp = out->pc = 0;
  if (nregs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
    // The three registers asked for, in register-number order: x86-64 BP
    // (6), SP (7), IP (8); AArch64 X29 (29), SP (31), PC (32).
    if (!u64(&out->fp) || !u64(&out->sp) || !u64(&out->pc)) return false;
  }
  uint64_t size = 0;
  out->stack = nullptr;
  out->stack_size = 0;
  if (!u64(&size)) return false;
  if (size == 0) return true;
  if (len - off < size || len - off - size < 8) return false;
  const uint8_t* data = body + off;
  off += size;
  uint64_t dyn = 0;
  if (!u64(&dyn)) return false;
  out->stack = data;
  out->stack_size = std::min(dyn, size);
  return true;
}

// ---- /proc/PID/maps ----

std::vector<Mapping> ParseMaps(const std::string& text) {
  std::vector<Mapping> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode path
    unsigned long long a = 0, b = 0, off = 0;
    char perms[8] = {};
    int pos = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off, &pos) < 4)
      continue;
    if (perms[2] != 'x' || pos <= 0 || static_cast<size_t>(pos) >= line.size()) continue;
    std::string path = line.substr(static_cast<size_t>(pos));
    if (path.empty() || path[0] != '/' || b <= a) continue;
    if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) continue;
    out.push_back({a, b, off, std::move(path)});
  }
  std::sort(out.begin(), out.end(),
            [](const Mapping& x, const Mapping& y) { return x.start < y.start; });
  return out;
}

// ---- Unwinding ----

struct StackUnwinder::Module {
  std::string base;  // file base name
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool ok = false;  // parsed
  ElfSymbols elf;
  // .eh_frame_hdr's binary search table (link-time addresses), when usable.
  uint64_t table = 0, fde_count = 0, text_lo = 0, text_hi = 0;
  ~Module() {
    if (data != nullptr) munmap(const_cast<uint8_t*>(data), size);
  }
};

// The libunwind callbacks; `arg` is the StackUnwinder.
struct UnwindAccess {
  static StackUnwinder* U(void* arg) { return static_cast<StackUnwinder*>(arg); }

  static int FindProcInfo(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi,
                          int need_unwind_info, void* arg) {
    const StackUnwinder::Placed* p = U(arg)->PlacedOf(ip);
    if (p == nullptr || p->mod->table == 0) return -UNW_ENOINFO;
    const StackUnwinder::Module& m = *p->mod;
    unw_dyn_info_t di;
    std::memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = p->bias + m.text_lo;
    di.end_ip = p->bias + m.text_hi;
    di.u.rti.segbase = p->bias + m.elf.eh_frame_hdr();
    di.u.rti.table_data = p->bias + m.table;
    // The table: fde_count pairs of 4-byte (initial location, FDE) offsets.
    di.u.rti.table_len = m.fde_count * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
  }
  static void PutUnwindInfo(unw_addr_space_t as, unw_proc_info_t* pi, void* arg) {
    UNW_OBJ(dwarf_put_unwind_info)(as, pi, arg);
  }
  static int GetDynInfoListAddr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }
  static int AccessMem(unw_addr_space_t, unw_word_t addr, unw_word_t* val, int write, void* arg) {
    if (write) return -UNW_EINVAL;
    uint64_t v = 0;
    if (!U(arg)->ReadWord(addr, &v)) return -UNW_EINVAL;
    *val = v;
    return 0;
  }
  static int AccessReg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* val, int write, void* arg) {
    if (write) return -UNW_EREADONLYREG;
    const StackUnwinder* u = U(arg);
    if (reg == UNW_REG_IP)
      *val = u->pc_;
    else if (reg == UNW_REG_SP)
      *val = u->sp_;
#if defined(__x86_64__)
    else if (reg == UNW_X86_64_RBP)
      *val = u->fp_;
#elif defined(__aarch64__)
    else if (reg == UNW_AARCH64_X29)
      *val = u->fp_;
#endif
    else
      return -UNW_EBADREG;
    return 0;
  }
  static int AccessFpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) {
    return -UNW_EINVAL;
  }
  static int Resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }
  static int GetProcName(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) {
    return -UNW_EINVAL;
  }
};

StackUnwinder::StackUnwinder(std::vector<Mapping> maps) {
  static unw_accessors_t acc = {
      UnwindAccess::FindProcInfo, UnwindAccess::PutUnwindInfo, UnwindAccess::GetDynInfoListAddr,
      UnwindAccess::AccessMem,    UnwindAccess::AccessReg,     UnwindAccess::AccessFpreg,
      UnwindAccess::Resume,       UnwindAccess::GetProcName,
  };
  unw_addr_space_t as = unw_create_addr_space(&acc, 0);
  if (as != nullptr) unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
  as_ = as;
  SetMaps(std::move(maps));
}

StackUnwinder::~StackUnwinder() {
  if (as_ != nullptr) unw_destroy_addr_space(static_cast<unw_addr_space_t>(as_));
}

void StackUnwinder::SetMaps(std::vector<Mapping> maps) {
  maps_ = std::move(maps);
  placed_.clear();
  std::map<std::pair<Module*, uint64_t>, bool> seen;
  for (const Mapping& m : maps_) {
    Module* mod = ModuleOf(m.path);
    if (!mod->ok) continue;
    // bias: the runtime address of file offset m.offset minus its link-time
    // address (in the executable segment that holds it).
    uint64_t bias = 0;
    bool found = false;
    for (const auto& g : mod->elf.segments()) {
      if (!g.exec || m.offset < (g.offset & ~uint64_t{0xfff}) || m.offset >= g.offset + g.filesz)
        continue;
      bias = m.start - m.offset + g.offset - g.vaddr;
      found = true;
      break;
    }
    if (!found || !seen.try_emplace({mod, bias}, true).second) continue;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& g : mod->elf.segments()) {
      lo = std::min(lo, g.vaddr);
      hi = std::max(hi, g.vaddr + g.memsz);
    }
    if (lo < hi) placed_.push_back({bias + lo, bias + hi, bias, mod});
  }
  std::sort(placed_.begin(), placed_.end(),
            [](const Placed& a, const Placed& b) { return a.lo < b.lo; });
  if (as_ != nullptr) unw_flush_cache(static_cast<unw_addr_space_t>(as_), 0, 0);
}

const Mapping* StackUnwinder::MappingOf(uint64_t addr) const {
  auto it = std::upper_bound(maps_.begin(), maps_.end(), addr,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == maps_.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

bool StackUnwinder::Unmapped(uint64_t addr) const { return MappingOf(addr) == nullptr; }

const StackUnwinder::Placed* StackUnwinder::PlacedOf(uint64_t addr) const {
  auto it = std::upper_bound(placed_.begin(), placed_.end(), addr,
                             [](uint64_t a, const Placed& p) { return a < p.lo; });
  if (it == placed_.begin()) return nullptr;
  --it;
  return addr < it->hi ? &*it : nullptr;
}

bool StackUnwinder::ReadWord(uint64_t addr, uint64_t* out) const {
  if (addr >= sp_ && addr - sp_ < stack_size_ && stack_size_ - (addr - sp_) >= 8) {
    std::memcpy(out, stack_ + (addr - sp_), 8);
    return true;
  }
  const Placed* p = PlacedOf(addr);
  return p != nullptr && p->mod->elf.ReadVaddr(addr - p->bias, out, 8);
}

namespace {

uint64_t ReadEncoded(const ElfSymbols& elf, uint64_t vaddr, uint8_t enc, uint64_t* at, bool* ok) {
  // The encodings .eh_frame_hdr uses in practice (DW_EH_PE_*).
  uint64_t v = 0;
  const uint8_t fmt = enc & 0x0f, rel = enc & 0x70;
  size_t n = 0;
  if (fmt == 0x03 || fmt == 0x0b)
    n = 4;  // udata4 / sdata4
  else if (fmt == 0x04 || fmt == 0x0c)
    n = 8;  // udata8 / sdata8
  else {
    *ok = false;
    return 0;
  }
  if (!elf.ReadVaddr(*at, &v, n)) {
    *ok = false;
    return 0;
  }
  if (fmt == 0x0b) v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
  if (rel == 0x10)
    v += *at;  // pcrel
  else if (rel == 0x30)
    v += vaddr;  // datarel (from the header)
  else if (rel != 0)
    *ok = false;
  *at += n;
  return v;
}

}  // namespace

StackUnwinder::Module* StackUnwinder::ModuleOf(const std::string& path) {
  auto [it, fresh] = modules_.try_emplace(path);
  if (!fresh) return it->second.get();
  auto mod = std::make_unique<Module>();
  const size_t slash = path.rfind('/');
  mod->base = slash == std::string::npos ? path : path.substr(slash + 1);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 64) {
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      mod->data = static_cast<const uint8_t*>(p);
      mod->size = static_cast<size_t>(st.st_size);
      auto elf = ElfSymbols::Parse(mod->data, mod->size);
      if (elf.ok()) {
        mod->elf = std::move(*elf);
        mod->ok = true;
      }
    }
  }
  if (fd >= 0) close(fd);
  // .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, fde_count
  // and the table; libunwind's search wants a table of datarel sdata4 pairs.
  if (mod->ok && mod->elf.eh_frame_hdr() != 0) {
    const uint64_t hdr = mod->elf.eh_frame_hdr();
    uint8_t h[4];
    if (mod->elf.ReadVaddr(hdr, h, 4) && h[0] == 1 && h[3] == 0x3b) {
      uint64_t at = hdr + 4;
      bool ok = true;
      ReadEncoded(mod->elf, hdr, h[1], &at, &ok);  // eh_frame_ptr
      const uint64_t count = ReadEncoded(mod->elf, hdr, h[2], &at, &ok);
      if (ok && count > 0 && count < (uint64_t{1} << 28)) {
        mod->table = at;
        mod->fde_count = count;
      }
    }
    for (const auto& g : mod->elf.segments()) {
      if (!g.exec) continue;
      mod->text_lo = mod->text_hi == 0 ? g.vaddr : std::min(mod->text_lo, g.vaddr);
      mod->text_hi = std::max(mod->text_hi, g.vaddr + g.memsz);
    }
  }
  it->second = std::move(mod);
  return it->second.get();
}

uint32_t StackUnwinder::FrameOf(const Placed& p, uint64_t addr, bool return_address) {
  // A return address belongs to the call before it: look up addr - 1.
  const int sym = p.mod->elf.Find(addr - p.bias - (return_address ? 1 : 0));
  auto [it, fresh] = frame_ids_.try_emplace({p.mod, sym}, static_cast<uint32_t>(frames_.size()));
  if (fresh) {
    NativeFrameText t;
    t.module = p.mod->base;
    t.function = sym >= 0 ? Demangle(p.mod->elf.name(sym)) : "[" + p.mod->base + "]";
    frames_.push_back(std::move(t));
  }
  return it->second;
}

std::vector<uint32_t> StackUnwinder::Unwind(uint64_t pc, uint64_t sp, uint64_t fp,
                                            const uint8_t* stack, uint64_t stack_size,
                                            size_t max_frames) {
  std::vector<uint32_t> out;
  const Placed* leaf = PlacedOf(pc);
  if (leaf == nullptr) return out;
  out.push_back(FrameOf(*leaf, pc, false));
  if (as_ == nullptr) return out;
  pc_ = pc;
  sp_ = sp;
  fp_ = fp;
  stack_ = stack;
  stack_size_ = stack_size;
  unw_cursor_t c;
  if (unw_init_remote(&c, static_cast<unw_addr_space_t>(as_), this) != 0) return out;
  uint64_t last_sp = sp;
  while (out.size() < max_frames && unw_step(&c) > 0) {
    unw_word_t ip = 0, nsp = 0;
    if (unw_get_reg(&c, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    unw_get_reg(&c, UNW_REG_SP, &nsp);
    if (nsp < last_sp) break;  // the stack only grows towards the caller
    last_sp = nsp;
    const Placed* p = PlacedOf(ip);
    if (p == nullptr) break;
    out.push_back(FrameOf(*p, ip, true));
  }
  stack_ = nullptr;
  stack_size_ = 0;
  return out;
}

// ---- The sampler ----

namespace {

constexpr size_t kRingPages = 64;       // 256 KiB of data per thread
constexpr uint32_t kStackBytes = 8192;  // user stack copied per sample
constexpr int64_t kMapsRefreshNs = 1'000'000'000;
// A sample whose pc no mapping holds (a library loaded, or the program's exec,
// after the maps were read) re-reads them at once unless they were read this
// recently: without it every sample until the next refresh lost its stack
// (host_sampling_test failed one run in three on a loaded machine).
constexpr int64_t kMapsRetryNs = 50'000'000;

long PerfEventOpen(perf_event_attr* attr, pid_t tid) {
  return syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

perf_event_attr Attr(int period_us) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = static_cast<uint64_t>(period_us) * 1000;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
                  PERF_SAMPLE_STACK_USER;
#if defined(__x86_64__)
  a.sample_regs_user = (1ull << 6) | (1ull << 7) | (1ull << 8);  // PERF_REG_X86_BP, SP, IP
#elif defined(__aarch64__)
  a.sample_regs_user = (1ull << 29) | (1ull << 31) | (1ull << 32);  // PERF_REG_ARM64_X29, SP, PC
#endif
  a.sample_stack_user = kStackBytes;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.exclude_callchain_kernel = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  a.wakeup_events = 0;
  return a;
}

}  // namespace

struct NativeSampler::Ring {
  int fd = -1;
  uint8_t* base = nullptr;
  size_t len = 0;
  std::vector<uint8_t> scratch;  // a record that wraps around the ring's end
  ~Ring() {
    if (base != nullptr) munmap(base, len);
    if (fd >= 0) close(fd);
  }
};

NativeSampler::NativeSampler(pid_t pid, int period_us) : pid_(pid), period_us_(period_us) {
  realtime_minus_mono_ = RealtimeNs() - MonotonicNs();
}
NativeSampler::~NativeSampler() = default;

std::unique_ptr<NativeSampler> NativeSampler::Create(pid_t pid, int period_us, std::string* why) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  *why = "native samples: this CPU architecture is not supported";
  return nullptr;
#else
  if (period_us <= 0) {
    *why = "native samples: no period";
    return nullptr;
  }
  // A probe event on the process itself tells whether perf events are allowed.
  perf_event_attr a = Attr(period_us);
  const long fd = PerfEventOpen(&a, pid);
  if (fd < 0) {
    const int e = errno;
    *why = std::string("native samples: perf_event_open failed (") + strerror(e) + ")" +
           (e == EACCES || e == EPERM
                ? "; /proc/sys/kernel/perf_event_paranoid must be 2 or less, and the process "
                  "traceable by this user"
                : "");
    return nullptr;
  }
  close(static_cast<int>(fd));
  std::unique_ptr<NativeSampler> s(new NativeSampler(pid, period_us));
  s->ReadMaps();
  return s;
#endif
}

void NativeSampler::ReadMaps() {
  auto text = ReadFile("/proc/" + std::to_string(pid_) + "/maps");
  auto maps = ParseMaps(text.ok() ? *text : std::string());
  if (!unwinder_)
    unwinder_ = std::make_unique<StackUnwinder>(std::move(maps));
  else
    unwinder_->SetMaps(std::move(maps));
  maps_read_mono_ = MonotonicNs();
}

void NativeSampler::SetEnabled(bool on) {
  if (on == enabled_) return;
  enabled_ = on;
  for (auto& [tid, r] : rings_)
    ioctl(r->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

bool NativeSampler::Watch(pid_t tid) {
  if (rings_.count(tid) != 0) return true;
  perf_event_attr a = Attr(period_us_);
  a.disabled = enabled_ ? 0 : 1;
  const long fd = PerfEventOpen(&a, tid);
  if (fd < 0) return false;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = (kRingPages + 1) * page;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  if (p == MAP_FAILED) {
    close(static_cast<int>(fd));
    return false;
  }
  auto r = std::make_unique<Ring>();
  r->fd = static_cast<int>(fd);
  r->base = static_cast<uint8_t*>(p);
  r->len = len;
  rings_[tid] = std::move(r);
  return true;
}

std::vector<pid_t> NativeSampler::watched_tids() const {
  std::vector<pid_t> out;
  out.reserve(rings_.size());
  for (const auto& [tid, r] : rings_) out.push_back(tid);
  return out;
}

void NativeSampler::Unwatch(pid_t tid, std::vector<NativeSample>* out) {
  auto it = rings_.find(tid);
  if (it == rings_.end()) return;
  bool remap = false;
  PollRing(*it->second, out, &remap);
  rings_.erase(it);
}

void NativeSampler::PollRing(Ring& r, std::vector<NativeSample>* out, bool* remap) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* meta = reinterpret_cast<perf_event_mmap_page*>(r.base);
  const uint8_t* data = r.base + page;
  const uint64_t size = kRingPages * page;
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  while (tail + sizeof(perf_event_header) <= head) {
    perf_event_header h;
    for (size_t i = 0; i < sizeof h; ++i)
      reinterpret_cast<uint8_t*>(&h)[i] = data[(tail + i) % size];
    if (h.size < sizeof h || tail + h.size > head) break;
    const uint8_t* rec;
    const uint64_t at = tail % size;
    if (at + h.size <= size) {
      rec = data + at;
    } else {
      r.scratch.resize(h.size);
      for (size_t i = 0; i < h.size; ++i) r.scratch[i] = data[(tail + i) % size];
      rec = r.scratch.data();
    }
    if (h.type == PERF_RECORD_SAMPLE && out != nullptr) {
      PerfSample ps;
      if (ParsePerfSample(rec + sizeof h, h.size - sizeof h, &ps) && ps.regs_abi != 0) {
        if (unwinder_->Unmapped(ps.pc)) {
          if (MonotonicNs() - maps_read_mono_ > kMapsRetryNs) {
            ReadMaps();
          } else {
            *remap = true;
          }
        }
        NativeSample ns;
        ns.realtime_ns = static_cast<int64_t>(ps.time) + realtime_minus_mono_;
        ns.tid = ps.tid;
        ns.frames = unwinder_->Unwind(ps.pc, ps.sp, ps.fp, ps.stack, ps.stack_size);
        out->push_back(std::move(ns));
      }
    } else if (h.type == PERF_RECORD_LOST) {
      uint64_t lost[2] = {0, 0};  // id, lost
      if (h.size >= sizeof h + 16) std::memcpy(lost, rec + sizeof h, 16);
      lost_ += lost[1];
    }
    tail += h.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void NativeSampler::Poll(std::vector<NativeSample>* out) {
  bool remap = false;
  for (auto& [tid, r] : rings_) PollRing(*r, out, &remap);
  if (remap && MonotonicNs() - maps_read_mono_ > kMapsRefreshNs) ReadMaps();
}

}  // namespace stepscope
