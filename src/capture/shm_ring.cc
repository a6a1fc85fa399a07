#include "capture/shm_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <new>

namespace stepscope::shm {

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kPad:
      return "pad";
    case Kind::kApi:
      return "api";
    case Kind::kNvtxOpen:
      return "nvtx";
    case Kind::kNvtxClose:
      return "nvtx_end";
    case Kind::kThreadName:
      return "thread_name";
    case Kind::kOom:
      return "oom";
    case Kind::kHostAlloc:
      return "host_alloc";
    case Kind::kString:
      return "cupti_string";
    case Kind::kPyCode:
      return "python_code";
    case Kind::kPyStack:
      return "python_stack";
    case Kind::kUm:
      return "um_totals";
    case Kind::kGpuMetric:
      return "gpu_metric";
    default:
      return "unknown";
  }
}

uint64_t Layout(uint32_t slot_count, uint64_t slot_bytes, uint64_t ring_bytes, Header* out) {
  const uint64_t page = 4096;
  if (slot_count > kMaxSlots) slot_count = kMaxSlots;
  uint64_t ring = 4096;
  while (ring < ring_bytes) ring <<= 1;
  out->header_bytes = sizeof(Header);
  out->slot_count = slot_count;
  out->slot_bytes = (slot_bytes + page - 1) / page * page;
  out->slots_offset = (sizeof(Header) + page - 1) / page * page;
  out->ring_offset = out->slots_offset + uint64_t{slot_count} * out->slot_bytes;
  out->ring_bytes = ring;
  out->total_bytes = out->ring_offset + ring;
  return out->total_bytes;
}

void InitHeader(void* region, const Header& layout, int32_t pid) {
  auto* h = new (region) Header();
  h->magic = kMagic;
  h->version = kVersion;
  h->header_bytes = layout.header_bytes;
  h->pid = pid;
  h->slot_count = layout.slot_count;
  h->slot_bytes = layout.slot_bytes;
  h->slots_offset = layout.slots_offset;
  h->ring_offset = layout.ring_offset;
  h->ring_bytes = layout.ring_bytes;
  h->total_bytes = layout.total_bytes;
}

namespace {

// The layout fields of a header or of a plain copy of one.
template <typename H>
Geometry LayoutOf(const H& h) {
  Geometry g;
  g.slot_count = h.slot_count;
  g.slot_bytes = h.slot_bytes;
  g.slots_offset = h.slots_offset;
  g.ring_offset = h.ring_offset;
  g.ring_bytes = h.ring_bytes;
  g.total_bytes = h.total_bytes;
  return g;
}

}  // namespace

Geometry GeometryOf(const Header& h) { return LayoutOf(h); }

bool ReadGeometry(const void* region, uint64_t mapped_bytes, Geometry* out) {
  if (mapped_bytes < sizeof(Header)) return false;
  // One copy of the header's plain fields (the peer may be writing them);
  // every check below is on the copy.
  struct Plain {
    uint64_t magic;
    uint32_t version;
    uint32_t header_bytes;
    int32_t pid;
    uint32_t slot_count;
    uint64_t slot_bytes, slots_offset, ring_offset, ring_bytes, total_bytes;
  } copy;
  static_assert(offsetof(Header, total_bytes) == offsetof(Plain, total_bytes));
  std::memcpy(&copy, region, sizeof(copy));
  if (copy.magic != kMagic || copy.version != kVersion || copy.header_bytes != sizeof(Header))
    return false;
  const Geometry g = LayoutOf(copy);
  if (g.slot_count > kMaxSlots || g.total_bytes != mapped_bytes) return false;
  if (g.ring_bytes < 4096 || (g.ring_bytes & (g.ring_bytes - 1)) != 0) return false;
  if (g.ring_bytes > mapped_bytes || g.slot_bytes > mapped_bytes) return false;
  if (g.slots_offset < sizeof(Header) || g.slots_offset > mapped_bytes) return false;
  if (g.slot_count > 0 && (g.slot_bytes == 0 || g.slot_bytes % 8 != 0)) return false;
  if (g.ring_offset % 8 != 0 ||
      g.ring_offset < g.slots_offset + uint64_t{g.slot_count} * g.slot_bytes)
    return false;
  if (g.ring_offset > mapped_bytes || g.ring_offset + g.ring_bytes > mapped_bytes) return false;
  *out = g;
  return true;
}

bool Validate(const void* region, uint64_t mapped_bytes) {
  Geometry g;
  return ReadGeometry(region, mapped_bytes, &g);
}

int CreateRegionFd(const char* name, uint64_t total) {
  const int fd =
      static_cast<int>(::syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) return -1;
  if (::ftruncate(fd, static_cast<off_t>(total)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

bool RegionFdSealed(int fd) {
  const int seals = ::fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_SEAL);
}

}  // namespace stepscope::shm
