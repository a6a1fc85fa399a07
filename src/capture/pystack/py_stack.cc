#include "capture/pystack/py_stack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "capture/pystack/elf_symbols.h"
#include "common/strings.h"

namespace stepscope::pystack {
namespace {

constexpr size_t kMaxStringChars = 512;
constexpr size_t kMaxLineTable = 1 << 20;
constexpr size_t kMaxThreads = 4096;
constexpr size_t kThreadStateInterp = 16;  // PyThreadState: prev, next, interp (3.11-3.13)
constexpr size_t kMaxCodeHead = 256;       // >= every layout's code_adaptive
constexpr size_t kMaxStampSpan = 96;       // >= code_linetable + 8 - code_firstlineno
constexpr size_t kMaxWindowPages = 64;
constexpr size_t kMaxIovecs = 1024;  // IOV_MAX

// The calling thread's stack, [lowest address, top), once per thread;
// {0, 0} when unknown.
std::pair<uint64_t, uint64_t> OwnThreadStack() {
  thread_local std::pair<uint64_t, uint64_t> range = [] {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return std::pair<uint64_t, uint64_t>{};
    void* addr = nullptr;
    size_t size = 0;
    const bool ok = pthread_attr_getstack(&attr, &addr, &size) == 0;
    pthread_attr_destroy(&attr);
    const auto lo = reinterpret_cast<uint64_t>(addr);
    return ok ? std::pair<uint64_t, uint64_t>{lo, lo + size} : std::pair<uint64_t, uint64_t>{};
  }();
  return range;
}

uint64_t PageSize() {
  static const uint64_t size = [] {
    const long v = ::sysconf(_SC_PAGESIZE);
    return v > 0 ? static_cast<uint64_t>(v) : uint64_t{4096};
  }();
  return size;
}

struct Mapping {
  uint64_t start = 0;
  uint64_t offset = 0;
  std::string path;
};

std::vector<Mapping> ReadMaps(pid_t pid) {
  std::vector<Mapping> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(f, line)) {
    Mapping m;
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset,
                    &path_at) < 4 ||
        path_at <= 0 || static_cast<size_t>(path_at) >= line.size()) {
      continue;
    }
    m.start = start;
    m.offset = offset;
    m.path = line.substr(static_cast<size_t>(path_at));
    if (m.path.empty() || m.path[0] != '/') continue;
    out.push_back(std::move(m));
  }
  return out;
}

bool LooksLikePython(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("libpython3", 0) == 0 || base.rfind("python3", 0) == 0 || base == "python";
}

}  // namespace

bool Memory::Read(uint64_t addr, void* out, size_t n) const {
  if (addr == 0 || n == 0) return false;
  iovec local{out, n};
  iovec remote{reinterpret_cast<void*>(addr), n};
  ++reads_;
  const ssize_t r = Fails(addr, n) ? -1 : ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (r == static_cast<ssize_t>(n)) return true;
  last_errno_ = r < 0 ? errno : EFAULT;
  return false;
}

ssize_t Memory::ReadV(const iovec* local, const iovec* remote, unsigned long n) const {
  ++reads_;
  unsigned long whole = n;  // the iovecs before the first that reaches a failing range
  iovec part_local{}, part_remote{};
  if (fail_begin_ < fail_end_) {
    for (whole = 0; whole < n; ++whole) {
      const auto at = reinterpret_cast<uint64_t>(remote[whole].iov_base);
      if (Fails(at, remote[whole].iov_len)) break;
    }
    if (whole < n) {  // its bytes before the range, as the kernel copies them
      const auto at = reinterpret_cast<uint64_t>(remote[whole].iov_base);
      const size_t before = at < fail_begin_ ? static_cast<size_t>(fail_begin_ - at) : 0;
      part_local = {local[whole].iov_base, before};
      part_remote = {remote[whole].iov_base, before};
    }
  }
  ssize_t r = whole == 0 ? 0 : ::process_vm_readv(pid_, local, whole, remote, whole, 0);
  if (whole < n) {    // a simulated fault (tests only)
    size_t full = 0;  // what the whole iovecs hold
    for (unsigned long k = 0; k < whole; ++k) full += local[k].iov_len;
    if (r == static_cast<ssize_t>(full) && part_local.iov_len > 0) {
      const ssize_t p = ::process_vm_readv(pid_, &part_local, 1, &part_remote, 1, 0);
      r += p > 0 ? p : 0;
    }
    if (r == 0) {
      errno = EFAULT;
      r = -1;
    }
  }
  if (r < 0) last_errno_ = errno;
  return r;
}

StatusOr<std::unique_ptr<PyRuntime>> PyRuntime::Attach(pid_t pid) {
  std::vector<Mapping> maps = ReadMaps(pid);
  // libpython first (a python executable linked against it has no runtime of
  // its own), then whatever python executable is mapped.
  std::vector<std::string> candidates;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Mapping& m : maps) {
      if (!LooksLikePython(m.path)) continue;
      const bool lib = m.path.find("/libpython3") != std::string::npos;
      if ((pass == 0) != lib) continue;
      bool seen = false;
      for (const auto& c : candidates) seen = seen || c == m.path;
      if (!seen) candidates.push_back(m.path);
    }
  }
  if (candidates.empty()) return NotFound("no Python runtime mapped in pid " + std::to_string(pid));
  std::string why;
  for (const std::string& path : candidates) {
    auto syms = ReadElfSymbols("/proc/" + std::to_string(pid) + "/root" + path,
                               {"_PyRuntime", "Py_Version", "PyCode_Type"});
    if (!syms.ok()) syms = ReadElfSymbols(path, {"_PyRuntime", "Py_Version", "PyCode_Type"});
    if (!syms.ok()) {
      why = syms.status().message();
      continue;
    }
    if (!syms->values.count("_PyRuntime")) continue;
    uint64_t bias = 0;
    if (syms->position_independent) {
      bool found = false;
      for (const Mapping& m : maps) {
        if (m.path == path && m.offset == 0) {
          bias = m.start - syms->first_load_vaddr;
          found = true;
          break;
        }
      }
      if (!found) continue;
    }
    if (!syms->values.count("Py_Version")) {
      return Unavailable("Python before 3.11 (no Py_Version in " + path + ")");
    }
    Memory mem(pid);
    uint32_t hex = 0;
    if (!mem.Get(bias + syms->values["Py_Version"], &hex)) {
      return Unavailable(std::string("cannot read the Python process's memory: ") +
                         std::strerror(mem.last_errno()));
    }
    const PyLayout* layout = LayoutFor(hex);
    if (!layout) {
      char v[32];
      std::snprintf(v, sizeof(v), "%u.%u", hex >> 24, (hex >> 16) & 0xff);
      return Unavailable(std::string("Python ") + v + " is not supported (3.11-3.13 are)");
    }
    std::unique_ptr<PyRuntime> rt(new PyRuntime(pid, layout));
    rt->runtime_ = bias + syms->values["_PyRuntime"];
    rt->hexversion_ = hex;
    if (syms->values.count("PyCode_Type")) rt->code_type_ = bias + syms->values["PyCode_Type"];
    return rt;
  }
  return NotFound("no _PyRuntime symbol in " + candidates[0] + (why.empty() ? "" : ": " + why));
}

StatusOr<std::unique_ptr<PyRuntime>> PyRuntime::AttachSelf() {
  void* runtime = ::dlsym(RTLD_DEFAULT, "_PyRuntime");
  const auto* version = static_cast<const uint32_t*>(::dlsym(RTLD_DEFAULT, "Py_Version"));
  if (!runtime) return NotFound("no Python in this process");
  if (!version) return Unavailable("Python before 3.11");
  Memory mem(::getpid());
  uint32_t hex = 0;
  if (!mem.Get(reinterpret_cast<uint64_t>(version), &hex))
    return Unavailable("unreadable Py_Version");
  const PyLayout* layout = LayoutFor(hex);
  if (!layout) return Unavailable("unsupported Python version");
  std::unique_ptr<PyRuntime> rt(new PyRuntime(::getpid(), layout));
  rt->runtime_ = reinterpret_cast<uint64_t>(runtime);
  rt->hexversion_ = hex;
  rt->code_type_ = reinterpret_cast<uint64_t>(::dlsym(RTLD_DEFAULT, "PyCode_Type"));
  rt->this_thread_state_ =
      reinterpret_cast<uint64_t (*)()>(::dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  return rt;
}

std::string PyRuntime::version() const {
  return std::to_string(hexversion_ >> 24) + "." + std::to_string((hexversion_ >> 16) & 0xff) +
         "." + std::to_string((hexversion_ >> 8) & 0xff);
}

bool PyRuntime::ReadString(uint64_t obj, std::string* out) {
  const PyLayout& l = *layout_;
  uint8_t head[96];
  if (l.compact_size > sizeof(head) || !mem_.Read(obj, head, l.compact_size)) return false;
  int64_t length = 0;
  uint32_t state = 0;
  std::memcpy(&length, head + l.unicode_length, sizeof(length));
  std::memcpy(&state, head + l.unicode_state, sizeof(state));
  const uint32_t kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1;
  const bool ascii = (state >> 6) & 1;
  if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return false;
  const size_t n = static_cast<size_t>(std::min<int64_t>(length, kMaxStringChars));
  if (n == 0) {
    out->clear();
    return true;
  }
  std::vector<uint8_t> data(n * kind);
  if (!mem_.Read(obj + (ascii ? l.ascii_size : l.compact_size), data.data(), data.size())) {
    return false;
  }
  out->clear();
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = 0;
    if (kind == 1) c = data[i];
    if (kind == 2) c = static_cast<uint32_t>(data[2 * i]) | (uint32_t{data[2 * i + 1]} << 8);
    if (kind == 4) std::memcpy(&c, &data[4 * i], 4);
    AppendUtf8(out, c);
  }
  return true;
}

// The identity of a code object: its fields from co_firstlineno to
// co_linetable (first line, local counts, co_version in 3.12+, the names,
// file and line table objects), none of which changes while it lives.
// `span`: those bytes (StampSpan()).
uint64_t PyRuntime::StampOf(const uint8_t* span) const {
  // FNV-1a over 8-byte words (the span's fields are 4- and 8-byte aligned
  // in the object; a span's tail of under 8 bytes as one more word).
  const uint32_t n = StampSpan();
  uint64_t h = 0xcbf29ce484222325ull;
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, span + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, span + i, n - i);
    h = (h ^ w) * 0x100000001b3ull;
  }
  h ^= h >> 29;  // fold the words' high bits into the low ones a hash table uses
  return h == 0 ? 1 : h;
}

uint32_t PyRuntime::StampSpan() const {
  return layout_->code_linetable + 8 - layout_->code_firstlineno;
}

const CodeInfo* PyRuntime::Code(const PyFrame& frame) {
  const CodeKey key{frame.code, frame.stamp};
  auto it = codes_.find(key);
  if (it != codes_.end()) return it->second.ok ? &it->second.info : nullptr;
  const PyLayout& l = *layout_;
  uint8_t head[kMaxCodeHead];
  if (l.code_adaptive > sizeof(head)) return nullptr;
  // Unreadable, or not the object the frame was read with any more: not
  // cached (perhaps transient).
  if (!mem_.Read(frame.code, head, l.code_adaptive) ||
      StampOf(head + l.code_firstlineno) != frame.stamp) {
    return nullptr;
  }
  if (codes_.size() > 200000) codes_.clear();
  Cached& c = codes_[key];
  uint64_t type = 0, filename = 0, name = 0, qualname = 0, linetable = 0;
  int32_t firstlineno = 0;
  std::memcpy(&type, head + 8, 8);
  if (code_type_ && type != code_type_) return nullptr;  // not a code object (cached as such)
  std::memcpy(&filename, head + l.code_filename, 8);
  std::memcpy(&name, head + l.code_name, 8);
  std::memcpy(&qualname, head + l.code_qualname, 8);
  std::memcpy(&linetable, head + l.code_linetable, 8);
  std::memcpy(&firstlineno, head + l.code_firstlineno, 4);
  if (!ReadString(qualname, &c.info.function) && !ReadString(name, &c.info.function)) {
    c.info.function = "?";
  }
  if (!ReadString(filename, &c.info.file)) c.info.file = "?";
  c.info.firstlineno = firstlineno;
  int64_t table_size = 0;
  if (mem_.Get(linetable + l.bytes_size, &table_size) && table_size > 0 &&
      static_cast<size_t>(table_size) <= kMaxLineTable) {
    table_bytes_.resize(static_cast<size_t>(table_size));
    if (mem_.Read(linetable + l.bytes_data, table_bytes_.data(), table_bytes_.size())) {
      DecodeLineTable(table_bytes_.data(), table_bytes_.size(), firstlineno, &c.info.lines);
    }
    if (table_bytes_.capacity() > (size_t{1} << 16)) std::vector<uint8_t>().swap(table_bytes_);
  }
  c.ok = true;
  return &c.info;
}

bool PyRuntime::DecodeFrame(const uint8_t* buf, uint64_t* code, uint64_t* previous,
                            uint64_t* instr) const {
  const PyLayout& l = *layout_;
  std::memcpy(code, buf + l.frame_code, 8);
  std::memcpy(previous, buf + l.frame_previous, 8);
  std::memcpy(instr, buf + l.frame_instr, 8);
  const int owner = static_cast<int8_t>(buf[l.frame_owner]);
  return !(l.owner_cstack >= 0 && owner == l.owner_cstack);
}

bool PyRuntime::WalkFrames(uint64_t frame, std::vector<PyFrame>* out, size_t max_depth) {
  const bool ok = walk_options_.per_frame ? WalkFramesPerFrame(frame, max_depth)
                                          : WalkFramesWindowed(frame, max_depth);
  AppendFrames(out);
  return ok;
}

// First the frames' code objects, instructions and stamps (walk_*), then
// names and lines (cached by address and stamp). Shim frames are skipped;
// `max_depth * 2` frames are read at most. False when the first frame read
// fails.
bool PyRuntime::WalkFramesPerFrame(uint64_t frame, size_t max_depth) {
  const PyLayout& l = *layout_;
  uint8_t buf[80];
  uint8_t span_buf[kMaxStampSpan];
  const size_t need = l.frame_owner + 1;
  const size_t span = StampSpan();
  std::vector<uint64_t>& codes = walk_codes_;
  std::vector<uint64_t>& instrs = walk_instrs_;
  std::vector<uint64_t>& stamps = walk_stamps_;
  codes.clear();
  instrs.clear();
  stamps.clear();
  if (span > sizeof(span_buf)) return false;
  // The stamp of a frame's code object is read with the next frame, in one
  // process_vm_readv (which reads whole elements only, in order).
  bool ok = true;
  for (size_t depth = 0;; ++depth) {
    const bool want_frame = frame != 0 && depth < max_depth * 2 && codes.size() < max_depth;
    const bool want_stamp = stamps.size() < codes.size();
    if (!want_frame && !want_stamp) break;
    iovec local[2], remote[2];
    unsigned long n = 0;
    if (want_stamp) {
      local[n] = {span_buf, span};
      remote[n++] = {reinterpret_cast<void*>(codes.back() + l.code_firstlineno), span};
    }
    if (want_frame) {
      local[n] = {buf, need};
      remote[n++] = {reinterpret_cast<void*>(frame), need};
    }
    const ssize_t r = mem_.ReadV(local, remote, n);
    const size_t got = r > 0 ? static_cast<size_t>(r) : 0;
    bool frame_read = want_frame && got == (want_stamp ? span : 0) + need;
    if (want_stamp) {
      stamps.push_back(got >= span ? StampOf(span_buf) : 0);
      // An unreadable code object stopped the read before the frame.
      if (want_frame && got < span) frame_read = mem_.Read(frame, buf, need);
    }
    if (!want_frame) break;
    if (!frame_read) {
      ok = !codes.empty();
      frame = 0;  // the last code object's stamp is still read
      continue;
    }
    uint64_t code = 0, instr = 0;
    if (!DecodeFrame(buf, &code, &frame, &instr)) continue;  // a shim frame
    codes.push_back(code);
    instrs.push_back(instr);
  }
  return ok;
}

void PyRuntime::PageWindow::Fill(const Memory& mem, uint64_t addr, size_t pages, bool up) {
  const uint64_t page = PageSize();
  start = lo = hi = 0;
  if (addr > UINT64_MAX - 2 * page) return;
  const uint64_t first = addr & ~(page - 1);  // read first; then downward or upward
  pages = std::min<uint64_t>(
      {pages, kMaxWindowPages, up ? (UINT64_MAX - first) / page : first / page + 1});
  if (pages == 0) return;
  if (bytes.size() < pages * page) bytes.resize(pages * page);
  start = up ? first : first + page - pages * page;
  iovec local[kMaxWindowPages], remote[kMaxWindowPages];
  for (size_t k = 0; k < pages; ++k) {
    const uint64_t at = up ? first + k * page : first - k * page;
    local[k] = {bytes.data() + (at - start), page};
    remote[k] = {reinterpret_cast<void*>(at), page};
  }
  const ssize_t r = mem.ReadV(local, remote, pages);
  const uint64_t full = r > 0 ? static_cast<uint64_t>(r) / page : 0;
  if (full == 0) return;
  lo = up ? first : first + page - full * page;
  hi = up ? first + full * page : first + page;
}

bool PyRuntime::PageWindow::Copy(uint64_t addr, void* out, size_t n) const {
  if (lo == hi || addr < lo || addr > hi || hi - addr < n) return false;
  std::memcpy(out, bytes.data() + (addr - start), n);
  return true;
}

bool PyRuntime::ReadFrame(uint64_t frame, uint8_t* out, size_t n) {
  if (frame >= own_lo_ && frame < own_hi_ && own_hi_ - frame >= n) {
    std::memcpy(out, reinterpret_cast<const void*>(frame), n);  // our own live stack
    return true;
  }
  if (windows_[0].Copy(frame, out, n) || windows_[1].Copy(frame, out, n)) return true;
  if (frame <= UINT64_MAX - n) {
    // The leaf's window first, downward (a data-stack chunk: callers below).
    // Then one window around the latest frame outside it: upward when that
    // frame lies a little above the previous one outside (3.12's shim frames
    // on the C stack, callers above), else downward (an older chunk).
    const bool leaf = windows_[0].lo == windows_[0].hi;
    const uint64_t pages = std::max<uint64_t>(1, walk_options_.window_bytes / PageSize());
    const bool up =
        !leaf && last_miss_ != 0 && frame > last_miss_ && frame - last_miss_ <= pages * PageSize();
    if (!leaf) last_miss_ = frame;
    PageWindow& w = leaf ? windows_[0] : windows_[1];
    w.Fill(mem_, up ? frame : frame + n - 1, pages, up);
    if (w.Copy(frame, out, n)) return true;
  }
  return mem_.Read(frame, out, n);  // unreadable (again), most likely
}

// The same frames as WalkFramesPerFrame, each frame served from a window
// of whole pages where it lies inside one, the stamps read afterwards.
bool PyRuntime::WalkFramesWindowed(uint64_t frame, size_t max_depth) {
  const PyLayout& l = *layout_;
  uint8_t buf[80];
  const size_t need = l.frame_owner + 1;
  walk_codes_.clear();
  walk_instrs_.clear();
  walk_stamps_.clear();
  if (StampSpan() > kMaxStampSpan || need > sizeof(buf)) return false;
  windows_[0].lo = windows_[0].hi = 0;
  windows_[1].lo = windows_[1].hi = 0;
  last_miss_ = 0;
  bool ok = true;
  for (size_t depth = 0; frame != 0 && depth < max_depth * 2 && walk_codes_.size() < max_depth;
       ++depth) {
    if (!ReadFrame(frame, buf, need)) {
      ok = !walk_codes_.empty();
      break;
    }
    uint64_t code = 0, instr = 0;
    if (!DecodeFrame(buf, &code, &frame, &instr)) continue;  // a shim frame
    walk_codes_.push_back(code);
    walk_instrs_.push_back(instr);
  }
  ReadStampsBatched();
  return ok;
}

// Code objects lie close together (a module's functions are unmarshalled
// one after another), and a process_vm_readv costs by iovec more than by
// byte: `members` (walk_unique_ indices, by address) are read in runs, one
// iovec per run. With `merge`, spans less than kStampRunGap apart share a run
// that also covers the bytes between them (kMaxStampRun at most); without,
// a run is one span. A run not read whole (an unmapped page inside it) stops
// that process_vm_readv at its iovec and the next one starts after it; its
// members, where it had several, go to `retry` (read again one by one), else
// their stamp stays 0.
void PyRuntime::ReadStampRuns(const std::vector<uint32_t>& members, bool merge,
                              std::vector<uint32_t>* retry) {
  constexpr uint64_t kStampRunGap = 4096, kMaxStampRun = 65536;
  const uint64_t span = StampSpan();
  const uint64_t at = layout_->code_firstlineno;
  walk_runs_.clear();
  uint64_t bytes = 0;
  for (uint32_t k = 0; k < members.size(); ++k) {
    const uint64_t addr = walk_unique_[members[k]];
    if (addr > UINT64_MAX - at - span) break;  // by address: none after it can be read either
    const uint64_t begin = addr + at, end = begin + span;
    StampRun* run = walk_runs_.empty() ? nullptr : &walk_runs_.back();
    if (merge && run && begin <= run->end + kStampRunGap && end - run->begin <= kMaxStampRun) {
      bytes += end - run->end;
      run->end = end;
      run->last = k;
    } else {
      walk_runs_.push_back({begin, end, k, k});
      bytes += span;
    }
  }
  walk_run_bytes_.resize(bytes);
  for (size_t i = 0; i < walk_runs_.size();) {
    const size_t batch = std::min(walk_runs_.size() - i, kMaxIovecs);
    walk_local_.resize(batch);
    walk_remote_.resize(batch);
    uint64_t offset = 0;
    for (size_t k = 0; k < batch; ++k) {
      const StampRun& run = walk_runs_[i + k];
      walk_local_[k] = {walk_run_bytes_.data() + offset, run.end - run.begin};
      walk_remote_[k] = {reinterpret_cast<void*>(run.begin), run.end - run.begin};
      offset += run.end - run.begin;
    }
    const ssize_t r = mem_.ReadV(walk_local_.data(), walk_remote_.data(), batch);
    if (r < 0 && (mem_.last_errno() == ESRCH || mem_.last_errno() == EPERM)) return;  // none will
    uint64_t got = r > 0 ? static_cast<uint64_t>(r) : 0;
    size_t whole = 0;
    for (; whole < batch && got >= walk_local_[whole].iov_len; ++whole) {
      got -= walk_local_[whole].iov_len;
      const StampRun& run = walk_runs_[i + whole];
      const auto* base = static_cast<const uint8_t*>(walk_local_[whole].iov_base);
      for (uint32_t m = run.first; m <= run.last; ++m) {
        const uint32_t u = members[m];
        walk_unique_stamps_[u] = StampOf(base + (walk_unique_[u] + at - run.begin));
      }
    }
    if (whole < batch && retry) {
      const StampRun& failed = walk_runs_[i + whole];
      for (uint32_t m = failed.first; failed.first < failed.last && m <= failed.last; ++m) {
        retry->push_back(members[m]);
      }
    }
    i += whole < batch ? whole + 1 : whole;  // past the run not read whole
  }
}

// Each distinct code object's stamp span: in runs by address, then the
// spans of runs not read whole one by one (an unreadable one's stamp is 0).
void PyRuntime::ReadStampsBatched() {
  walk_unique_.clear();
  walk_slot_.resize(walk_codes_.size());
  for (size_t i = 0; i < walk_codes_.size(); ++i) {
    size_t j = 0;
    while (j < walk_unique_.size() && walk_unique_[j] != walk_codes_[i]) ++j;
    if (j == walk_unique_.size()) walk_unique_.push_back(walk_codes_[i]);
    walk_slot_[i] = static_cast<uint32_t>(j);
  }
  const size_t n = walk_unique_.size();
  walk_unique_stamps_.assign(n, 0);
  walk_order_.resize(n);
  for (size_t i = 0; i < n; ++i) walk_order_[i] = static_cast<uint32_t>(i);
  std::sort(walk_order_.begin(), walk_order_.end(),
            [&](uint32_t a, uint32_t b) { return walk_unique_[a] < walk_unique_[b]; });
  walk_rest_.clear();
  ReadStampRuns(walk_order_, /*merge=*/true, &walk_rest_);
  if (!walk_rest_.empty()) ReadStampRuns(walk_rest_, /*merge=*/false, nullptr);
  walk_stamps_.resize(walk_codes_.size());
  for (size_t i = 0; i < walk_codes_.size(); ++i) {
    walk_stamps_[i] = walk_unique_stamps_[walk_slot_[i]];
  }
}

void PyRuntime::AppendFrames(std::vector<PyFrame>* out) {
  const PyLayout& l = *layout_;
  const std::vector<uint64_t>& codes = walk_codes_;
  for (size_t i = 0; i < codes.size() && i < walk_stamps_.size(); ++i) {
    if (walk_stamps_[i] == 0) continue;
    const PyFrame f{codes[i], walk_stamps_[i], 0};
    const CodeInfo* info = Code(f);
    if (!info) continue;
    const int64_t index =
        (static_cast<int64_t>(walk_instrs_[i]) - static_cast<int64_t>(f.code + l.code_adaptive)) /
        2;
    if (index < 0) continue;  // not started yet (an incomplete frame)
    const int line =
        LineInSpans(info->lines, static_cast<int>(std::min<int64_t>(index, INT32_MAX)));
    out->push_back({f.code, f.stamp, line < 0 ? info->firstlineno : line});
  }
}

bool PyRuntime::ReadThreadState(uint64_t ts, uint64_t* next, uint64_t* native, uint64_t* frame,
                                uint64_t* interp) {
  const PyLayout& l = *layout_;
  const int64_t frame_field =
      l.tstate_current_frame >= 0 ? l.tstate_current_frame : l.tstate_cframe;
  const size_t need = static_cast<size_t>(std::max<int64_t>(
                          {l.tstate_next, l.tstate_native_thread_id, frame_field})) +
                      8;
  uint8_t buf[512];
  if (need > sizeof(buf) || !mem_.Read(ts, buf, need)) return false;
  uint64_t ptr = 0;
  std::memcpy(next, buf + l.tstate_next, 8);
  std::memcpy(native, buf + l.tstate_native_thread_id, 8);
  std::memcpy(&ptr, buf + frame_field, 8);
  if (interp) std::memcpy(interp, buf + kThreadStateInterp, 8);
  *frame = 0;
  if (l.tstate_current_frame >= 0) {
    *frame = ptr;
  } else if (ptr) {
    mem_.Get(ptr + l.cframe_current_frame, frame);  // tstate->cframe->current_frame
  }
  return true;
}

// One interpreter's thread states. Threads come and go while the list is
// read (a thread state is unlinked and freed when its thread ends, and its
// memory reused): a thread state that does not name `interp` as its
// interpreter past the head means the list changed under the walk, which
// starts again from the head (twice at most, then what was read stands).
// At the head, the head pointer is read again: moved, the list changed;
// still there and still not naming `interp`, the layout is suspect
// (kHeadMismatch, after a few tries).
PyRuntime::ListWalk PyRuntime::WalkThreads(uint64_t interp, std::vector<ThreadStack>* out,
                                           size_t max_depth, bool (*skip)(void*, uint32_t),
                                           void* skip_ctx) {
  const PyLayout& l = *layout_;
  const size_t mark = out->size();
  int head_mismatches = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    out->resize(mark);
    uint64_t head = 0;
    if (!mem_.Get(interp + l.interp_threads_head, &head)) return ListWalk::kUnreadable;
    bool changed = false;
    uint64_t ts = head;
    for (size_t n = 0; ts != 0 && n < kMaxThreads; ++n) {
      uint64_t next = 0, native = 0, frame = 0, owner = 0;
      if (!ReadThreadState(ts, &next, &native, &frame, &owner)) break;
      if (owner != interp) {
        uint64_t again = 0;
        if (n == 0 && mem_.Get(interp + l.interp_threads_head, &again) && again == head) {
          ++head_mismatches;
        }
        changed = true;
        break;
      }
      ThreadStack t;
      t.tid = static_cast<uint32_t>(native);
      if (skip && skip(skip_ctx, t.tid)) {
        t.skipped = true;
      } else {
        WalkFrames(frame, &t.frames, max_depth);
      }
      out->push_back(std::move(t));
      ts = next;
    }
    if (!changed) return ListWalk::kOk;
    if (head_mismatches >= 3) {
      out->resize(mark);
      return ListWalk::kHeadMismatch;
    }
    if (out->size() > mark && attempt >= 2) return ListWalk::kOk;  // partial, but read
  }
  out->resize(mark);
  return ListWalk::kOk;
}

bool PyRuntime::AllStacks(std::vector<ThreadStack>* out, size_t max_depth,
                          bool (*skip)(void* ctx, uint32_t tid), void* skip_ctx) {
  out->clear();
  const PyLayout& l = *layout_;
  uint64_t interp = 0;
  if (!mem_.Get(runtime_ + l.runtime_interpreters_head, &interp)) return false;
  for (int i = 0; interp != 0 && i < 64; ++i) {
    const ListWalk w = WalkThreads(interp, out, max_depth, skip, skip_ctx);
    if (w == ListWalk::kUnreadable) break;
    if (w == ListWalk::kHeadMismatch) {
      // The head thread state, read several times while the head pointer
      // stayed, does not name its interpreter: the layout is not the one
      // this version should have (a patched or unusual build) -- unless it
      // happens on one walk only (threads ending just then).
      if (++mismatched_walks_ >= kMismatchedWalks) layout_mismatch_ = true;
      out->clear();
      return false;
    }
    if (i == 0) mismatched_walks_ = 0;
    if (!mem_.Get(interp + l.interp_next, &interp)) break;
  }
  return true;
}

bool PyRuntime::OwnStack(std::vector<PyFrame>* out, size_t max_depth) {
  out->clear();
  uint64_t ts = this_thread_state_ ? this_thread_state_() : 0;
  if (ts == 0) {
    // Not a thread the GIL API knows: find it by its native id.
    // Only our own frames are read.
    auto tid = static_cast<uint32_t>(::syscall(SYS_gettid));
    auto others = [](void* ctx, uint32_t t) { return t != *static_cast<uint32_t*>(ctx); };
    std::vector<ThreadStack> all;
    if (!AllStacks(&all, max_depth, others, &tid)) return false;
    for (ThreadStack& t : all) {
      if (t.tid == tid) {
        *out = std::move(t.frames);
        return true;
      }
    }
    return false;
  }
  uint64_t next = 0, native = 0, frame = 0;
  if (!ReadThreadState(ts, &next, &native, &frame, nullptr)) return false;
  // 3.12's shim frames of this thread's callers lie on its C stack, above
  // this function's frame and below the stack's top: copied directly. Only
  // while this function runs on that stack (not on a signal or coroutine
  // stack elsewhere, where the span up to the top could hold unmapped
  // pages), and not with the per-frame walk, the reference the windowed one
  // is tested against.
  const auto [stack_lo, stack_hi] = OwnThreadStack();
  const auto here = reinterpret_cast<uint64_t>(__builtin_frame_address(0));
  if (here >= stack_lo && here < stack_hi && !walk_options_.per_frame) {
    own_lo_ = here;
    own_hi_ = stack_hi;
  }
  const bool ok = WalkFrames(frame, out, max_depth);
  own_lo_ = own_hi_ = 0;
  return ok;
}

std::pair<uint64_t, uint64_t> PyRuntime::GilRange() {
  const PyLayout& l = *layout_;
  if (gil_ == 0) {
    if (l.runtime_gil >= 0) {
      gil_ = runtime_ + static_cast<uint64_t>(l.runtime_gil);
    } else {
      // The main interpreter (the last in the list) uses its own GIL
      // state: its gil pointer must point there, else the layout is not
      // the expected one and the GIL stays unknown.
      uint64_t interp = 0, last = 0;
      if (mem_.Get(runtime_ + l.runtime_interpreters_head, &interp)) {
        for (int i = 0; interp != 0 && i < 64; ++i) {
          last = interp;
          if (!mem_.Get(interp + l.interp_next, &interp)) break;
        }
      }
      uint64_t gil = 0;
      if (last && mem_.Get(last + static_cast<uint64_t>(l.interp_gil_ptr), &gil) &&
          gil == last + static_cast<uint64_t>(l.interp_own_gil)) {
        gil_ = gil;
      }
    }
  }
  if (gil_ == 0) return {0, 0};
  return {gil_, gil_ + l.gil_size};
}

}  // namespace stepscope::pystack
