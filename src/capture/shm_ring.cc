#include "capture/shm_ring.h"

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

bool Validate(const void* region, uint64_t mapped_bytes) {
  if (mapped_bytes < sizeof(Header)) return false;
  const auto* h = static_cast<const Header*>(region);
  if (h->magic != kMagic || h->version != kVersion || h->header_bytes != sizeof(Header))
    return false;
  if (h->slot_count > kMaxSlots || h->total_bytes != mapped_bytes) return false;
  if (h->ring_bytes < 4096 || (h->ring_bytes & (h->ring_bytes - 1)) != 0) return false;
  if (h->slots_offset < sizeof(Header)) return false;
  if (h->ring_offset < h->slots_offset + uint64_t{h->slot_count} * h->slot_bytes) return false;
  return h->ring_offset + h->ring_bytes <= mapped_bytes;
}

}  // namespace stepscope::shm
