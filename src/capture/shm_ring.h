// The shared-memory region between the injected tracer (producer, inside the
// traced program) and the collector (consumer, a separate process that writes
// the SQLite trace). One region per traced process, created with
// memfd_create by the tracer and handed to the collector over a Unix socket
// (SCM_RIGHTS); after the handshake the tracer keeps only the mapping, no fd.
//
// Layout: [Header][CUPTI activity buffer slots][byte ring]
//  * slots: CUPTI writes its activity records straight into them. A slot
//    goes FREE -> CUPTI (AllocateBuffer) -> READY (buffer completed, `valid`
//    bytes) -> FREE (the collector decoded and zeroed it). No FREE slot:
//    CUPTI is given no buffer and counts the records it drops.
//  * ring: one bounded multi-producer, single-consumer ring of typed,
//    variable-length records (API calls, NVTX events, thread names, OOM rows,
//    host allocations). A producer reserves space with a CAS on `write`
//    after checking it against the consumer's `read`, writes its payload and
//    publishes with a release store of the record's 8-byte header word
//    (size | kind << 32). A full ring drops the record and counts the drop
//    for its kind. The consumer processes records in order up to the first
//    unpublished one, zeroes what it consumed and release-stores `read`.
//
// Everything here is plain data and lock-free atomics (address-free), so it
// works across processes; a producer that dies leaves every published record
// readable by the collector.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace stepscope::shm {

inline constexpr uint64_t kMagic = 0x315043535053'5453ull;  // "STSPSCP1"
inline constexpr uint32_t kVersion = 3;                     // 3: kGpuMetric (one more drop counter)
inline constexpr uint32_t kMaxSlots = 128;

// Record kinds of the ring (stable numbering: shared by two processes).
enum class Kind : uint16_t {
  kPad = 1,         // filler to the end of the ring (no payload)
  kApi = 2,         // ApiRecord
  kNvtxOpen = 3,    // NvtxOpen + domain bytes + name bytes (a mark is an open with kind mark)
  kNvtxClose = 4,   // NvtxClose
  kThreadName = 5,  // ThreadName + name bytes
  kOom = 6,         // OomRecord
  kHostAlloc = 7,   // hostmem::HostAllocRecord
  kString = 8,      // ForeignString + bytes: a string a CUPTI record points to (kernel name)
  kPyCode = 9,      // PyCodeName + function bytes + file bytes: a Python code object, once
  kPyStack = 10,    // PyStackHead + depth x PyStackFrame: the Python stack at a CUDA call
  kUm = 11,         // UmRecord: the driver's unified-memory totals (capture/uvm_counters.h)
  kGpuMetric = 12,  // GpuMetric + metric name bytes: one PM-sampled metric (pm_sampling.h)
  kCount = 13,
};
const char* KindName(Kind k);

enum SlotState : uint32_t { kSlotFree = 0, kSlotCupti = 1, kSlotReady = 2 };

// Header flags.
inline constexpr uint32_t kFlagExited = 1;    // the tracer's atexit ran (clean exit)
inline constexpr uint32_t kFlagDisabled = 2;  // the tracer turned itself off (warning printed)
inline constexpr uint32_t kFlagUrgent = 4;    // an OOM was recorded: commit at once
// The tracer is recording (inside --delay/--duration/capture range): the
// collector samples the host only then. kFlagRecordingKnown: this tracer keeps
// kFlagRecording up to date (a collector treats older tracers as recording).
inline constexpr uint32_t kFlagRecording = 8;
inline constexpr uint32_t kFlagRecordingKnown = 16;

struct Slot {
  std::atomic<uint32_t> state;
  uint32_t reserved;
  std::atomic<uint64_t> valid;
};

struct alignas(64) Header {
  uint64_t magic;
  uint32_t version;
  uint32_t header_bytes;
  int32_t pid;
  uint32_t slot_count;
  uint64_t slot_bytes;
  uint64_t slots_offset;
  uint64_t ring_offset;
  uint64_t ring_bytes;  // a power of two
  uint64_t total_bytes;
  std::atomic<uint32_t> flags;
  alignas(64) std::atomic<uint64_t> write;  // producers' reserve cursor (bytes, monotonic)
  alignas(64) std::atomic<uint64_t> read;   // consumer's cursor
  alignas(64) std::atomic<uint64_t> drops[static_cast<int>(Kind::kCount)];
  std::atomic<uint64_t> cupti_dropped_records;  // cuptiActivityGetNumDroppedRecords
  std::atomic<uint64_t> cupti_refused_buffers;  // no free slot when CUPTI asked
  std::atomic<uint64_t> host_mem_dropped;       // the malloc interposer's own drops
  Slot slots[kMaxSlots];
};

// Ring payloads (8-byte aligned, fixed layout).
struct NvtxOpen {
  uint64_t id;  // pairs the open with its close
  int64_t start_ns;
  uint32_t tid;
  uint32_t category;
  uint32_t color;
  uint8_t kind;  // NvtxKind
  uint8_t depth;
  uint16_t domain_len;
  uint32_t name_len;
  uint32_t reserved;
};
static_assert(sizeof(NvtxOpen) == 40, "NvtxOpen layout");
struct NvtxClose {
  uint64_t id;
  int64_t end_ns;
  uint32_t end_tid;
  uint32_t reserved;
};
static_assert(sizeof(NvtxClose) == 24, "NvtxClose layout");
struct ThreadName {
  uint32_t tid;
  uint32_t len;
};
// CUPTI records point to strings in the traced process (a kernel's name, a
// device's name): the tracer sends each one before the buffer that uses it.
struct ForeignString {
  uint64_t address;
  uint32_t len;
  uint32_t reserved;
};

// One metric of one PM sample (capture/pm_sampling.h), on the trace clock.
struct GpuMetric {
  int64_t start_ns;
  int64_t end_ns;
  double value;
  uint32_t device;
  uint32_t name_len;  // the metric's name follows
};
static_assert(sizeof(GpuMetric) == 32, "GpuMetric layout");

// The Python stack of the thread that made a CUDA call (blocking and
// allocation calls; launches 1-in-N): frames name code objects by the
// tracer's id for them (never reused for another code object, though an
// address is), each code object's names are sent once before the first
// stack using it.
struct PyCodeName {
  uint64_t code;  // the tracer's id of the code object (0: none)
  uint32_t function_len;
  uint32_t file_len;
};
struct PyStackHead {
  uint32_t correlation;  // the API call's (api.correlation)
  uint32_t tid;
  uint32_t depth;  // frames that follow, root first
  uint32_t reserved;
};
struct PyStackFrame {
  uint64_t code;
  int32_t line;
  uint32_t reserved;
};
static_assert(sizeof(PyStackFrame) == 16, "PyStackFrame layout");
inline constexpr uint32_t kMaxPyDepth = 128;

inline constexpr uint32_t kMaxString = 4096;          // longer NVTX/thread names are truncated
inline constexpr uint32_t kMaxForeignString = 16384;  // kernel names

inline uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// Sizes a region: `slot_count` slots of `slot_bytes` and a ring of at least
// `ring_bytes` (rounded up to a power of two). Returns the total size.
uint64_t Layout(uint32_t slot_count, uint64_t slot_bytes, uint64_t ring_bytes, Header* out);

// Initializes the header of a fresh zeroed region of `total` bytes.
void InitHeader(void* region, const Header& layout, int32_t pid);

// The region's layout, copied out of the header. The collector reads the
// header's layout once, checks it and from then on uses only its copy: the
// traced program can write anywhere in its own mapping (a bug, or on
// purpose), and a geometry changed after the handshake must not make the
// collector read or write outside the region.
struct Geometry {
  uint32_t slot_count = 0;
  uint64_t slot_bytes = 0;
  uint64_t slots_offset = 0;
  uint64_t ring_offset = 0;
  uint64_t ring_bytes = 0;  // a power of two
  uint64_t total_bytes = 0;
};
// The layout as the header says now (the producer's own region, tests).
Geometry GeometryOf(const Header& h);

// Reads a received region's header once (magic, version) and checks its
// layout against `mapped_bytes`; *out is the copy to use from then on.
bool ReadGeometry(const void* region, uint64_t mapped_bytes, Geometry* out);
// ReadGeometry without keeping the copy.
bool Validate(const void* region, uint64_t mapped_bytes);

// Creates the fd of a zeroed region of `total` bytes (memfd), sealed so that
// nobody can shrink or grow it later: a collector that maps it can never be
// hit by SIGBUS. Returns -1 with errno set.
int CreateRegionFd(const char* name, uint64_t total);
// Whether `fd` is a region that can no longer shrink (CreateRegionFd's seals).
bool RegionFdSealed(int fd);

inline uint8_t* RingBase(Header* h, const Geometry& g) {
  return reinterpret_cast<uint8_t*>(h) + g.ring_offset;
}
inline uint8_t* RingBase(Header* h) { return reinterpret_cast<uint8_t*>(h) + h->ring_offset; }
inline uint8_t* SlotBase(Header* h, const Geometry& g, uint32_t i) {
  return reinterpret_cast<uint8_t*>(h) + g.slots_offset + uint64_t{i} * g.slot_bytes;
}
inline uint8_t* SlotBase(Header* h, uint32_t i) { return SlotBase(h, GeometryOf(*h), i); }

// Producer: reserves a record of `payload` bytes. Returns a pointer to the
// payload to fill, then Publish(); nullptr when the ring is full (the drop is
// counted for `kind`).
inline uint8_t* Reserve(Header* h, Kind kind, uint32_t payload) {
  const uint64_t need = Align8(8 + uint64_t{payload});
  const uint64_t size = h->ring_bytes;
  uint8_t* ring = RingBase(h);
  uint64_t w = h->write.load(std::memory_order_relaxed);
  while (true) {
    const uint64_t off = w & (size - 1);
    const uint64_t tail = size - off;
    const uint64_t total = need <= tail ? need : tail + need;
    const uint64_t r = h->read.load(std::memory_order_acquire);
    if (need > size / 2 || w + total - r > size) {
      h->drops[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    if (h->write.compare_exchange_weak(w, w + total, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
      uint64_t at = off;
      if (total != need) {
        // Not enough room before the end: fill the tail with a pad record.
        uint64_t word = tail | (uint64_t{static_cast<uint16_t>(Kind::kPad)} << 32);
        std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(ring + off))
            .store(word, std::memory_order_release);
        at = 0;
      }
      // The record's header word stays 0 (unpublished) until Publish.
      return ring + at + 8;
    }
  }
}

inline void Publish(uint8_t* payload, Kind kind, uint32_t payload_bytes) {
  const uint64_t word =
      Align8(8 + uint64_t{payload_bytes}) | (uint64_t{static_cast<uint16_t>(kind)} << 32);
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(payload - 8))
      .store(word, std::memory_order_release);
}

// Writes one record (header + `n` bytes from `data`); false when dropped.
inline bool Put(Header* h, Kind kind, const void* data, uint32_t n) {
  uint8_t* p = Reserve(h, kind, n);
  if (!p) return false;
  std::memcpy(p, data, n);
  Publish(p, kind, n);
  return true;
}

// Consumer: calls fn(Kind, const uint8_t* payload, uint32_t bytes) for each
// published record in order (payload bytes include alignment padding), up to
// `max_bytes` of ring, zeroes what it consumed and advances `read`. Returns
// the number of records; *corrupt is set when a header is impossible (the
// ring is then left as is). `g` is the consumer's copy of the layout: the
// cursors and record words in shared memory are checked against it, never
// trusted.
template <typename F>
size_t Consume(Header* h, const Geometry& g, F&& fn, uint64_t max_bytes, bool* corrupt) {
  const uint64_t size = g.ring_bytes;
  uint8_t* ring = RingBase(h, g);
  uint64_t r = h->read.load(std::memory_order_relaxed);
  const uint64_t w = h->write.load(std::memory_order_acquire);
  const uint64_t start = r;
  size_t n = 0;
  if (r % 8 != 0) {  // only the consumer writes `read`: someone else did
    if (corrupt) *corrupt = true;
    return 0;
  }
  while (r < w && r - start < max_bytes) {
    const uint64_t off = r & (size - 1);
    const uint64_t word = std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(ring + off))
                              .load(std::memory_order_acquire);
    const uint64_t bytes = word & 0xffffffffu;
    if (bytes == 0) break;  // reserved, not yet published
    const auto kind = static_cast<Kind>((word >> 32) & 0xffff);
    if (bytes % 8 != 0 || bytes > size - off || r + bytes > w || static_cast<uint16_t>(kind) == 0 ||
        kind >= Kind::kCount) {
      if (corrupt) *corrupt = true;
      break;
    }
    if (kind != Kind::kPad) {
      fn(kind, ring + off + 8, static_cast<uint32_t>(bytes - 8));
      ++n;
    }
    std::memset(ring + off, 0, bytes);
    r += bytes;
  }
  h->read.store(r, std::memory_order_release);
  return n;
}

// Consume with the layout the header says now (the producer's own region, tests).
template <typename F>
size_t Consume(Header* h, F&& fn, uint64_t max_bytes, bool* corrupt) {
  return Consume(h, GeometryOf(*h), std::forward<F>(fn), max_bytes, corrupt);
}

}  // namespace stepscope::shm
