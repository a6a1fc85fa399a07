// ActivityDecoder: CUPTI activity records -> stepscope records -> TraceWriter.
//
// This is the one place that knows CUPTI's versioned structs
// (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, ...): the CUDA 13 versions
// are selected in cupti_records.h and read through typed views here. Everything
// downstream sees only format/records.h.
//
// The decoder runs in the collector process (this folder), never in the
// traced program: the injected tracer (src/capture/) may not include store/
// (tools/check_includes.py), so what turns CUPTI records into store rows lives
// here. It is also what the CI tests drive with synthetic
// activity buffers (records built in memory as the CUPTI structs), so the
// decoding that runs on the GPU machine is the decoding CI checks.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "capture/cupti_records.h"
#include "format/records.h"
#include "store/trace_writer.h"

namespace stepscope {

// Returns the API function name for (domain, cbid), or nullptr.
using ApiNameResolver = std::function<const char*(ApiDomain, uint32_t cbid)>;
// cuptiActivityGetNextRecord: passed in, so that the collector (which loads
// CUPTI at run time) and the tests (which link it) share this decoder.
using NextRecordFn = CUptiResult (*)(uint8_t* buffer, size_t valid, CUpti_Activity** record);

struct DecoderCounters {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, syncs = 0, memory = 0,
           memory_pools = 0, devices = 0, overheads = 0, other = 0, ooms = 0, um = 0;
  uint64_t unknown_kind = 0;
  uint64_t total() const {
    return kernels + memcpys + memsets + api_calls + syncs + memory + memory_pools + devices +
           overheads + other + um;
  }
};

class ActivityDecoder {
 public:
  ActivityDecoder(TraceWriter* writer, ApiNameResolver resolver);

  // Decodes one record. Unknown kinds are counted, never fatal.
  void Decode(const CUpti_Activity* record);

  // Adds an API call captured through callbacks (name resolved here).
  void AddApi(ApiRecord r);
  // Adds a failed allocation (name resolved here).
  void AddOom(const OomRecord& o);

  // When CUPTI's SYNCHRONIZATION records are off (their cost, see
  // docs/PERFORMANCE.md), derive the sync rows from the synchronizing API
  // calls themselves: same thread, same interval, same correlation.
  void set_sync_from_api(bool on) { sync_from_api_ = on; }

  // Strings inside CUPTI records (a kernel's name) are pointers into the
  // traced process: in the collector, `fetch` maps such a pointer to the copy
  // the tracer sent (nullptr: unknown). Unset: the pointers are read directly.
  using StringFetch = std::function<const char*(const char* foreign)>;
  void set_string_fetch(StringFetch fetch) { fetch_ = std::move(fetch); }

  // Decodes every record of a completed CUPTI buffer with `next`
  // (cuptiActivityGetNextRecord). Returns the number of records decoded.
  size_t DecodeBuffer(uint8_t* buffer, size_t valid_size, NextRecordFn next);

  const DecoderCounters& counters() const { return counters_; }
  // OS thread ids seen in API records (for thread names at finalize).
  const std::unordered_set<uint32_t>& threads() const { return threads_; }
  // Earliest and latest timestamps seen (0 when none).
  int64_t min_ns() const { return min_ns_; }
  int64_t max_ns() const { return max_ns_; }

 private:
  void Span(int64_t start, int64_t end);
  template <typename CuptiMemcpy>
  void AddMemcpy(const CuptiMemcpy& m, uint32_t device, uint32_t dst_device);
  // One per activity kind (Decode dispatches on the record's kind).
  void DecodeKernel(const cupti::Kernel& k);
  void DecodeMemset(const cupti::Memset& m);
  void DecodeSync(const cupti::Sync& s);
  void DecodeMemory(const cupti::Memory& m);
  void DecodeMemoryPool(const cupti::MemoryPool& p);
  void DecodeDevice(const cupti::Device& d);
  void DecodeOverhead(const cupti::Overhead& o);
  void DecodeUnifiedMemory(const cupti::UnifiedMemory& u);
  StringId ApiName(ApiDomain domain, uint32_t cbid, SyncType* sync_type);
  void KernelNames(const char* mangled, StringId* name, StringId* mangled_id);

  TraceWriter* w_;
  ApiNameResolver resolver_;
  DecoderCounters counters_;
  std::unordered_map<uint64_t, std::pair<StringId, SyncType>> api_names_;
  bool sync_from_api_ = false;
  StringFetch fetch_;
  const char* Fetch(const char* p) const { return fetch_ ? (p ? fetch_(p) : nullptr) : p; }
  std::unordered_map<std::string, std::pair<StringId, StringId>> kernel_names_;
  std::unordered_set<uint32_t> threads_;
  int64_t min_ns_ = 0, max_ns_ = 0;
};

}  // namespace stepscope
