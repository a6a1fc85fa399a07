// NVTX injection: stepscope's own InitializeInjectionNvtx2.
//
// NVTX v3 (header-only, used by PyTorch, Megatron, NCCL, ...) looks for an
// injection library in NVTX_INJECTION64_PATH on the first NVTX call and calls
// its InitializeInjectionNvtx2 with an export-table getter. We fill the CORE
// and CORE2 function tables with our handlers. Every library that embeds NVTX
// does this separately; the handlers are shared.
//
// Handlers run on the program's threads, so they do the minimum: read the
// clock, append a range's start (with its strings) and later its end to the
// shared ring, and keep a per-thread stack of the open push/pop ranges' ids.
// Starts and ends travel separately so that a range still open when the
// process dies is written anyway (nvtx.unclosed). They never throw (one
// exception barrier each) and are no-ops when the session is inactive or in a
// child created by fork().
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "capture/nvtx_injection.h"
#include "capture/self_time.h"
#include "capture/session.h"
#include "common/strings.h"

namespace stepscope {
namespace {

// Opaque handles we give out: the addresses of stable heap objects, never
// freed (NVTX handles may be used until process exit). They must be real
// addresses: with tagged indices (a tag in the top 16 bits) every DDP job died
// with SIGSEGV at its first NCCL collective under --trace nvtx (NCCL's NVTX
// path reads through the domain handle; lent H200, 2026-11-27; raw addresses
// run). A handle the tracer never issued (a stale pointer, another tool's,
// garbage) is still recognized without being dereferenced: every address
// handed out is kept in a set that lookups read without a lock, and an
// unknown handle's events are recorded without that domain or registered
// message, as bare NVTX would ignore it.
struct Domain {
  std::string name;
};

// The addresses handed out: chunks of open-addressing slots, each filled to
// half; lookups are lock-free, Add is serialized by the caller
// (g_handles_mu); entries are never removed.
class IssuedSet {
 public:
  // False when full (about 2M addresses).
  bool Add(uint64_t v) {
    size_t n = nchunks_.load(std::memory_order_relaxed);
    if (n == 0 || used_ >= kSlots / 2) {
      if (n == kMaxChunks) return false;
      chunks_[n].store(new Chunk(), std::memory_order_release);
      nchunks_.store(++n, std::memory_order_release);
      used_ = 0;
    }
    Chunk* c = chunks_[n - 1].load(std::memory_order_relaxed);
    for (size_t i = Mix(v);; ++i) {
      std::atomic<uint64_t>& slot = c->slot[i % kSlots];
      if (slot.load(std::memory_order_relaxed) == 0) {
        slot.store(v, std::memory_order_release);
        ++used_;
        return true;
      }
    }
  }
  bool Contains(uint64_t v) const {
    if (v == 0) return false;
    const size_t n = nchunks_.load(std::memory_order_acquire);
    for (size_t k = 0; k < n; ++k) {
      const Chunk* c = chunks_[k].load(std::memory_order_acquire);
      for (size_t i = Mix(v);; ++i) {
        const uint64_t x = c->slot[i % kSlots].load(std::memory_order_acquire);
        if (x == v) return true;
        if (x == 0) break;
      }
    }
    return false;
  }

 private:
  static constexpr size_t kSlots = 4096, kMaxChunks = 1024;
  struct Chunk {
    std::atomic<uint64_t> slot[kSlots] = {};
  };
  static size_t Mix(uint64_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    return static_cast<size_t>(v);
  }
  std::atomic<Chunk*> chunks_[kMaxChunks] = {};
  std::atomic<size_t> nchunks_{0};
  size_t used_ = 0;  // in the last chunk (under the caller's lock)
};

template <typename T>
class HandleTable {
 public:
  // A new handle for `value` (owned from now on): its address, or 0 when the
  // table is full. Callers serialize Add (g_handles_mu); Find needs no lock.
  uint64_t Add(T* value) {
    const uint64_t h = reinterpret_cast<uint64_t>(value);
    return issued_.Add(h) ? h : 0;
  }
  const T* Find(uint64_t handle) const {
    return issued_.Contains(handle) ? reinterpret_cast<const T*>(handle) : nullptr;
  }

 private:
  IssuedSet issued_;
};

HandleTable<Domain>& Domains() {
  static auto* t = new HandleTable<Domain>();  // never destroyed
  return *t;
}
HandleTable<std::string>& Strings() {
  static auto* t = new HandleTable<std::string>();
  return *t;
}

uint32_t ThreadId() {
  static thread_local uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

std::string Utf8(const wchar_t* w) {
  std::string out;
  for (; w && *w; ++w) AppendUtf8(&out, static_cast<uint32_t>(*w));
  return out;
}

struct Attrs {
  std::string message;
  uint32_t category = 0;
  uint32_t color = 0;
};

Attrs FromEventAttributes(const nvtxEventAttributes_t* a) {
  Attrs out;
  // Fields past the size the program gave are not its own: not read.
  if (!a || a->size < NVTX_EVENT_ATTRIB_STRUCT_SIZE) return out;
  out.category = a->category;
  if (a->colorType == NVTX_COLOR_ARGB) out.color = a->color;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      if (a->message.ascii) out.message = a->message.ascii;
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      out.message = Utf8(a->message.unicode);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (const std::string* m =
              Strings().Find(reinterpret_cast<uint64_t>(a->message.registered))) {
        out.message = *m;
      }
      break;
    default:
      break;
  }
  return out;
}

// The default domain's name for nullptr and for handles never issued.
const std::string& DomainName(nvtxDomainHandle_t d) {
  static const std::string kDefault;
  const Domain* dom = Domains().Find(reinterpret_cast<uint64_t>(d));
  return dom ? dom->name : kDefault;
}

// Per-thread stacks of open push/pop ranges, one per domain.
struct OpenRange {
  uint64_t id;         // the collector's id of the open record; 0: not recorded
  bool opens_capture;  // this range opened the nvtx:NAME capture range
};

struct ThreadStacks {
  std::vector<std::pair<nvtxDomainHandle_t, std::vector<OpenRange>>> by_domain;
  std::vector<OpenRange>& For(nvtxDomainHandle_t d) {
    for (auto& [dom, stack] : by_domain) {
      if (dom == d) return stack;
    }
    by_domain.emplace_back(d, std::vector<OpenRange>());
    return by_domain.back().second;
  }
};

ThreadStacks& Stacks() {
  static thread_local ThreadStacks stacks;
  return stacks;
}

// Every handler runs behind this barrier: an exception (bad_alloc) never
// reaches the program; the session turns itself off with one warning.
// Its time is the tracer's own (capture/self_time.h).
template <typename F>
auto Guard(F&& f) noexcept -> decltype(f()) {
  SelfTimer self_time(Session::Get().recording());
  try {
    return f();
  } catch (...) {
    Session::Get().Disable("internal error in the NVTX handler");
    if constexpr (!std::is_void_v<decltype(f())>) return decltype(f())();
  }
}

Session& S() { return Session::Get(); }

uint8_t Depth(size_t d) { return static_cast<uint8_t>(d > 255 ? 255 : d); }

int Push(nvtxDomainHandle_t domain, Attrs&& attrs) {
  Session& s = S();
  if (!s.active()) return -1;
  auto& stack = Stacks().For(domain);
  bool opens = false;
  if (s.nvtx_range_pending() && !s.recording() && attrs.message == s.config().range_nvtx_name) {
    s.OpenWindow();  // CUPTI attached first where windows detach it
    opens = true;
  }
  uint64_t id = 0;
  if (s.recording() && !s.config().diag_off.nvtx) {
    id = s.NvtxOpen(s.NowNs(), ThreadId(), attrs.category, attrs.color, NvtxKind::kPushPop,
                    Depth(stack.size()), DomainName(domain), attrs.message);
  }
  stack.push_back({id, opens});
  return static_cast<int>(stack.size()) - 1;
}

int Pop(nvtxDomainHandle_t domain) {
  Session& s = S();
  if (!s.active()) return -1;
  auto& stack = Stacks().For(domain);
  if (stack.empty()) return -1;
  OpenRange r = stack.back();
  stack.pop_back();
  if (r.id != 0) s.NvtxClose(r.id, s.NowNs(), ThreadId());
  if (r.opens_capture) s.CloseWindow();
  return static_cast<int>(stack.size());
}

void Mark(nvtxDomainHandle_t domain, Attrs&& attrs) {
  Session& s = S();
  if (!s.recording() || s.config().diag_off.nvtx) return;
  s.NvtxOpen(s.NowNs(), ThreadId(), attrs.category, attrs.color, NvtxKind::kMark, 0,
             DomainName(domain), attrs.message);
}

// Start/end ranges may end on another thread: the id handed to the program is
// the id of the open record, which the collector pairs with the end record.
nvtxRangeId_t Start(nvtxDomainHandle_t domain, Attrs&& attrs) {
  Session& s = S();
  if (!s.recording() || s.config().diag_off.nvtx) return 0;
  return s.NvtxOpen(s.NowNs(), ThreadId(), attrs.category, attrs.color, NvtxKind::kStartEnd, 0,
                    DomainName(domain), attrs.message);
}

void End(nvtxRangeId_t id) {
  Session& s = S();
  // An id never handed out closes nothing (bare NVTX ignores it too).
  if (!s.active() || id == 0 || !s.NvtxIssued(id)) return;
  s.NvtxClose(id, s.NowNs(), ThreadId());
}

Attrs Message(const char* m) {
  Attrs a;
  if (m) a.message = m;
  return a;
}
Attrs MessageW(const wchar_t* m) {
  Attrs a;
  a.message = Utf8(m);
  return a;
}

// ---- CORE ----
void MarkEx(const nvtxEventAttributes_t* a) {
  Guard([&] { Mark(nullptr, FromEventAttributes(a)); });
}
void MarkA(const char* m) {
  Guard([&] { Mark(nullptr, Message(m)); });
}
void MarkW(const wchar_t* m) {
  Guard([&] { Mark(nullptr, MessageW(m)); });
}
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* a) {
  return Guard([&] { return Start(nullptr, FromEventAttributes(a)); });
}
nvtxRangeId_t RangeStartA(const char* m) {
  return Guard([&] { return Start(nullptr, Message(m)); });
}
nvtxRangeId_t RangeStartW(const wchar_t* m) {
  return Guard([&] { return Start(nullptr, MessageW(m)); });
}
void RangeEnd(nvtxRangeId_t id) {
  Guard([&] { End(id); });
}
int RangePushEx(const nvtxEventAttributes_t* a) {
  return Guard([&] { return Push(nullptr, FromEventAttributes(a)); });
}
int RangePushA(const char* m) {
  return Guard([&] { return Push(nullptr, Message(m)); });
}
int RangePushW(const wchar_t* m) {
  return Guard([&] { return Push(nullptr, MessageW(m)); });
}
int RangePop() {
  return Guard([&] { return Pop(nullptr); });
}
void NameCategoryA(uint32_t, const char*) {}
void NameCategoryW(uint32_t, const wchar_t*) {}
void NameOsThreadA(uint32_t tid, const char* name) {
  Guard([&] {
    if (S().active() && name) S().SetThreadName(tid, name);
  });
}
void NameOsThreadW(uint32_t tid, const wchar_t* name) {
  Guard([&] {
    if (S().active() && name) S().SetThreadName(tid, Utf8(name));
  });
}

// ---- CORE2 ----
void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  Guard([&] { Mark(d, FromEventAttributes(a)); });
}
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return Guard([&] { return Start(d, FromEventAttributes(a)); });
}
void DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  Guard([&] { End(id); });
}
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return Guard([&] { return Push(d, FromEventAttributes(a)); });
}
int DomainRangePop(nvtxDomainHandle_t d) {
  return Guard([&] { return Pop(d); });
}

std::mutex g_handles_mu;

nvtxStringHandle_t RegisterString(const std::string& s) noexcept {
  try {
    // Interned for the life of the process; identical strings share a handle.
    static auto* strings = new std::unordered_map<std::string, uint64_t>();
    std::lock_guard<std::mutex> lk(g_handles_mu);
    auto it = strings->find(s);
    if (it == strings->end()) {
      const uint64_t h = Strings().Add(new std::string(s));
      if (h == 0) return nullptr;
      it = strings->emplace(s, h).first;
    }
    return reinterpret_cast<nvtxStringHandle_t>(it->second);
  } catch (...) {
    return nullptr;
  }
}
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return Guard([&] { return RegisterString(s ? s : ""); });
}
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return Guard([&] { return RegisterString(Utf8(s)); });
}
nvtxDomainHandle_t CreateDomain(const std::string& name) noexcept {
  try {
    static auto* domains = new std::unordered_map<std::string, uint64_t>();
    std::lock_guard<std::mutex> lk(g_handles_mu);
    auto it = domains->find(name);
    if (it == domains->end()) {
      const uint64_t h = Domains().Add(new Domain{name});
      if (h == 0) return nullptr;
      it = domains->emplace(name, h).first;
    }
    return reinterpret_cast<nvtxDomainHandle_t>(it->second);
  } catch (...) {
    return nullptr;
  }
}
nvtxDomainHandle_t DomainCreateA(const char* name) {
  return Guard([&] { return CreateDomain(name ? name : ""); });
}
nvtxDomainHandle_t DomainCreateW(const wchar_t* name) {
  return Guard([&] { return CreateDomain(Utf8(name)); });
}
void DomainDestroy(nvtxDomainHandle_t) {}  // handles stay valid: events may still refer to them
void DomainNameCategoryA(nvtxDomainHandle_t, uint32_t, const char*) {}
void DomainNameCategoryW(nvtxDomainHandle_t, uint32_t, const wchar_t*) {}
void Initialize(const void*) {}
nvtxResourceHandle_t DomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
  return nullptr;
}
void DomainResourceDestroy(nvtxResourceHandle_t) {}

template <typename F>
void Set(NvtxFunctionTable table, unsigned int size, unsigned int id, F fn) {
  if (id <= size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

int InstallNvtxHandlers(const void* (*get_export_table)(uint32_t)) {
  if (!get_export_table) return 0;
  auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks) || !cb->GetModuleFunctionTable)
    return 0;
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t) return 0;
  Set(t, n, NVTX_CBID_CORE_MarkEx, &MarkEx);
  Set(t, n, NVTX_CBID_CORE_MarkA, &MarkA);
  Set(t, n, NVTX_CBID_CORE_MarkW, &MarkW);
  Set(t, n, NVTX_CBID_CORE_RangeStartEx, &RangeStartEx);
  Set(t, n, NVTX_CBID_CORE_RangeStartA, &RangeStartA);
  Set(t, n, NVTX_CBID_CORE_RangeStartW, &RangeStartW);
  Set(t, n, NVTX_CBID_CORE_RangeEnd, &RangeEnd);
  Set(t, n, NVTX_CBID_CORE_RangePushEx, &RangePushEx);
  Set(t, n, NVTX_CBID_CORE_RangePushA, &RangePushA);
  Set(t, n, NVTX_CBID_CORE_RangePushW, &RangePushW);
  Set(t, n, NVTX_CBID_CORE_RangePop, &RangePop);
  Set(t, n, NVTX_CBID_CORE_NameCategoryA, &NameCategoryA);
  Set(t, n, NVTX_CBID_CORE_NameCategoryW, &NameCategoryW);
  Set(t, n, NVTX_CBID_CORE_NameOsThreadA, &NameOsThreadA);
  Set(t, n, NVTX_CBID_CORE_NameOsThreadW, &NameOsThreadW);
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
    Set(t, n, NVTX_CBID_CORE2_DomainMarkEx, &DomainMarkEx);
    Set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx);
    Set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd);
    Set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx);
    Set(t, n, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
    Set(t, n, NVTX_CBID_CORE2_DomainResourceCreate, &DomainResourceCreate);
    Set(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, &DomainResourceDestroy);
    Set(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, &DomainNameCategoryA);
    Set(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, &DomainNameCategoryW);
    Set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA);
    Set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, &DomainRegisterStringW);
    Set(t, n, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA);
    Set(t, n, NVTX_CBID_CORE2_DomainCreateW, &DomainCreateW);
    Set(t, n, NVTX_CBID_CORE2_DomainDestroy, &DomainDestroy);
    Set(t, n, NVTX_CBID_CORE2_Initialize, &Initialize);
  }
  return 1;
}

}  // namespace stepscope
