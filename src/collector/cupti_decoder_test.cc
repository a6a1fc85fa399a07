// CUPTI decoding without a GPU: activity records are built in memory exactly
// as CUPTI lays them out (the CUDA 13 structs of cupti_records.h) and fed
// through the same ActivityDecoder the collector runs, into a real trace.
#include "collector/cupti_decoder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "capture/cupti_records.h"
#include "store/trace_reader.h"

namespace stepscope {
namespace {

std::string TempTrace(const char* name) {
  std::string p = ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) + ".sqlite";
  ::unlink(p.c_str());
  return p;
}

const char* FakeNames(ApiDomain d, uint32_t cbid) {
  if (d == ApiDomain::kRuntime && cbid == 211) return "cudaLaunchKernel";
  if (d == ApiDomain::kDriver && cbid == 307) return "cuLaunchKernel";
  if (d == ApiDomain::kRuntime && cbid == 131) return "cudaStreamSynchronize";
  return nullptr;
}

cupti::Kernel MakeKernel(uint64_t start, uint64_t end, uint32_t corr, const char* name) {
  cupti::Kernel k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = corr;
  k.gridX = 132;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 96;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  k.graphId = 0;
  k.graphNodeId = 0;
  k.name = name;
  return k;
}

class DecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempTrace("decoder");
    auto w = TraceWriter::Create(path_);
    ASSERT_TRUE(w.ok());
    writer_ = std::move(*w);
    decoder_ = std::make_unique<ActivityDecoder>(writer_.get(), &FakeNames);
  }
  std::unique_ptr<TraceReader> Finish() {
    EXPECT_TRUE(writer_->Finalize().ok());
    auto r = TraceReader::Open(path_);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(*r);
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  std::string path_;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<ActivityDecoder> decoder_;
};

TEST_F(DecoderTest, KernelFieldsAndDemangledNames) {
  auto k = MakeKernel(1'000, 4'500, 42, "_Z10gemm_tiledILi128EEvPKfS1_Pf");
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&k));
  auto k2 = MakeKernel(5'000, 5'100, 43, "triton_poi_fused_add_0");
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&k2));
  auto r = Finish();
  auto kernels = r->Kernels();
  ASSERT_TRUE(kernels.ok());
  ASSERT_EQ(kernels->size(), 2u);
  const KernelRecord& a = (*kernels)[0];
  EXPECT_EQ(r->String(a.name), "void gemm_tiled<128>(float const*, float const*, float*)");
  EXPECT_EQ(r->String(a.mangled_name), "_Z10gemm_tiledILi128EEvPKfS1_Pf");
  EXPECT_EQ(a.start_ns, 1000);
  EXPECT_EQ(a.end_ns, 4500);
  EXPECT_EQ(a.correlation, 42u);
  EXPECT_EQ(a.stream, 7u);
  EXPECT_EQ(a.grid_x, 132);
  EXPECT_EQ(a.grid_y, 2);
  EXPECT_EQ(a.block_x, 256);
  EXPECT_EQ(a.registers_per_thread, 96u);
  EXPECT_EQ(a.static_smem_bytes, 1024);
  EXPECT_EQ(a.dynamic_smem_bytes, 49152);
  const KernelRecord& b = (*kernels)[1];
  EXPECT_EQ(r->String(b.name), "triton_poi_fused_add_0");
  EXPECT_EQ(b.mangled_name, kNoString);  // not mangled: stored once
  EXPECT_EQ(decoder_->counters().kernels, 2u);
}

TEST_F(DecoderTest, MemcpyMemsetApiSyncMemory) {
  cupti::Memcpy m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 6ull << 30;
  m.start = 10;
  m.end = 20;
  m.streamId = 3;
  m.correlationId = 5;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&m));

  cupti::Memset s;
  std::memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 4096;
  s.value = 0;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.start = 30;
  s.end = 31;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&s));

  cupti::Api a;
  std::memset(&a, 0, sizeof(a));
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 211;
  a.start = 5;
  a.end = 9;
  a.threadId = 777;
  a.correlationId = 5;
  a.returnValue = 0;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&a));
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = 307;
  a.correlationId = 6;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&a));
  a.cbid = 999;  // unknown to the resolver: still named, never dropped
  a.correlationId = 8;
  a.returnValue = 2;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&a));

  cupti::Sync y;
  std::memset(&y, 0, sizeof(y));
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  y.start = 40;
  y.end = 90;
  y.streamId = 3;
  y.correlationId = 9;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&y));

  cupti::Memory mem;
  std::memset(&mem, 0, sizeof(mem));
  mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  mem.address = 0x7f0000200000ull;
  mem.bytes = 2ull << 20;
  mem.timestamp = 3;
  mem.isAsync = 1;
  mem.memoryPoolConfig.address = 0x7f0000000000ull;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&mem));

  CUpti_Activity unknown;
  unknown.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  decoder_->Decode(&unknown);

  EXPECT_EQ(decoder_->counters().unknown_kind, 1u);
  EXPECT_EQ(decoder_->threads().count(777), 1u);
  auto r = Finish();
  auto memcpys = r->Memcpys();
  ASSERT_EQ(memcpys->size(), 1u);
  EXPECT_EQ((*memcpys)[0].copy_kind, CopyKind::kHostToDevice);
  EXPECT_EQ((*memcpys)[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ((*memcpys)[0].dst_kind, MemoryKind::kDevice);
  EXPECT_EQ((*memcpys)[0].is_async, 1);
  EXPECT_EQ((*memcpys)[0].bytes, 6ull << 30);
  auto memsets = r->Memsets();
  ASSERT_EQ(memsets->size(), 1u);
  EXPECT_EQ((*memsets)[0].bytes, 4096u);
  EXPECT_EQ((*memsets)[0].is_async, 0);
  auto apis = r->Apis();
  ASSERT_EQ(apis->size(), 3u);
  EXPECT_EQ(r->String((*apis)[0].name), "cudaLaunchKernel");
  EXPECT_EQ((*apis)[0].domain, ApiDomain::kRuntime);
  EXPECT_EQ(r->String((*apis)[1].name), "cuLaunchKernel");
  EXPECT_EQ((*apis)[1].domain, ApiDomain::kDriver);
  EXPECT_EQ(r->String((*apis)[2].name), "driver_cbid_999");
  EXPECT_EQ((*apis)[2].return_code, 2);
  auto syncs = r->Syncs();
  ASSERT_EQ(syncs->size(), 1u);
  EXPECT_EQ((*syncs)[0].type, SyncType::kStreamSynchronize);
  EXPECT_EQ((*syncs)[0].end_ns - (*syncs)[0].start_ns, 50);
  auto mems = r->MemoryEvents();
  ASSERT_EQ(mems->size(), 1u);
  EXPECT_EQ((*mems)[0].op, MemoryOp::kAlloc);
  EXPECT_EQ((*mems)[0].bytes, 2ull << 20);
  EXPECT_EQ((*mems)[0].pool_address, 0x7f0000000000ull);
}

TEST_F(DecoderTest, PeerCopyKeepsBothDevices) {
  cupti::MemcpyPtoP m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 100;
  m.end = 200;
  m.deviceId = 0;
  m.srcDeviceId = 1;
  m.dstDeviceId = 3;
  m.correlationId = 12;
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&m));
  auto r = Finish();
  auto memcpys = r->Memcpys();
  ASSERT_EQ(memcpys->size(), 1u);
  EXPECT_EQ((*memcpys)[0].copy_kind, CopyKind::kPeerToPeer);
  EXPECT_EQ((*memcpys)[0].device, 1u);
  EXPECT_EQ((*memcpys)[0].dst_device, 3u);
  EXPECT_EQ((*memcpys)[0].correlation, 12u);
  EXPECT_EQ((*memcpys)[0].is_async, 0);
}

TEST_F(DecoderTest, DeviceRecord) {
  cupti::Device d;
  std::memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.numMultiprocessors = 132;
  d.globalMemorySize = 150754820096ull;
  d.globalMemoryBandwidth = 4'800'000'000ull;  // KB/s
  d.l2CacheSize = 62914560;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i * 17);
  decoder_->Decode(reinterpret_cast<CUpti_Activity*>(&d));
  auto r = Finish();
  auto devs = r->Devices();
  ASSERT_EQ(devs->size(), 1u);
  EXPECT_EQ(r->String((*devs)[0].name), "NVIDIA H200");
  EXPECT_STREQ((*devs)[0].uuid, "GPU-00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ((*devs)[0].sm_count, 132u);
  EXPECT_EQ((*devs)[0].cc_major, 9u);
  EXPECT_EQ((*devs)[0].memory_bandwidth_bytes_per_s, 4'800'000'000'000ull);
}

// Callback-captured API calls: names resolved; synchronizing calls also become sync rows.
TEST_F(DecoderTest, CallbackApisAndSyncFromApi) {
  decoder_->set_sync_from_api(true);
  ApiRecord launch{};
  launch.start_ns = 100;
  launch.end_ns = 105;
  launch.tid = 11;
  launch.correlation = 1;
  launch.cbid = 211;
  decoder_->AddApi(launch);
  ApiRecord sync{};
  sync.start_ns = 200;
  sync.end_ns = 5200;
  sync.tid = 11;
  sync.correlation = 2;
  sync.cbid = 131;
  decoder_->AddApi(sync);
  auto r = Finish();
  auto apis = r->Apis();
  ASSERT_EQ(apis->size(), 2u);
  EXPECT_EQ(r->String((*apis)[1].name), "cudaStreamSynchronize");
  auto syncs = r->Syncs();
  ASSERT_EQ(syncs->size(), 1u);
  EXPECT_EQ((*syncs)[0].type, SyncType::kStreamSynchronize);
  EXPECT_EQ((*syncs)[0].tid, 11u);
  EXPECT_EQ((*syncs)[0].correlation, 2u);
  EXPECT_EQ((*syncs)[0].end_ns - (*syncs)[0].start_ns, 5000);
}

// A whole activity buffer walked with CUPTI's own iterator, as the tracer does.
TEST_F(DecoderTest, DecodeBufferWalksEveryRecord) {
  alignas(8) static uint8_t buffer[1 << 16];
  size_t used = 0;
  auto append = [&](const void* rec, size_t size) {
    std::memcpy(buffer + used, rec, size);
    used += (size + 7) & ~size_t{7};
  };
  std::vector<cupti::Kernel> ks;
  for (uint32_t i = 0; i < 50; ++i) ks.push_back(MakeKernel(100 * i, 100 * i + 50, i, "k"));
  for (auto& k : ks) append(&k, sizeof(k));
  cupti::Api a;
  std::memset(&a, 0, sizeof(a));
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 211;
  for (int i = 0; i < 10; ++i) append(&a, sizeof(a));
  size_t n = decoder_->DecodeBuffer(buffer, used, &cuptiActivityGetNextRecord);
  EXPECT_EQ(n, 60u);
  EXPECT_EQ(decoder_->counters().kernels, 50u);
  EXPECT_EQ(decoder_->counters().api_calls, 10u);
  auto r = Finish();
  EXPECT_EQ(r->Kernels()->size(), 50u);
}

cupti::UnifiedMemory MakeUm(CUpti_ActivityUnifiedMemoryCounterKind kind, uint64_t start,
                            uint64_t end, uint64_t value, uint32_t flags) {
  cupti::UnifiedMemory u;
  std::memset(&u, 0, sizeof(u));
  u.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  u.counterKind = kind;
  u.start = start;
  u.end = end;
  u.value = value;
  u.address = 0x7f1200000000ull;
  u.srcId = 0;
  u.dstId = 0;
  u.flags = flags;
  return u;
}

// Unified-memory counters: every kind, in one buffer walked with CUPTI's own
// iterator (so the record size is CUPTI's), point events' undefined `end`
// ignored, values and causes kept.
TEST_F(DecoderTest, UnifiedMemoryCountersFromBuffer) {
  alignas(8) static uint8_t buffer[1 << 14];
  size_t used = 0;
  auto append = [&](const cupti::UnifiedMemory& u) {
    std::memcpy(buffer + used, &u, sizeof(u));
    used += (sizeof(u) + 7) & ~size_t{7};
  };
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 1000, 1400,
                2u << 20, CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE));
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, 2000, 2100,
                64u << 10, CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER));
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 900, 1500, 37,
                CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE));
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT, 3000, 12, 0x401234,
                0));  // end undefined for CPU faults
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, 4000, 99999, 4096, 0));
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING, 5000, 5600, 0, 0));
  append(MakeUm(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP, 6000, 0, 8192, 1));
  append(MakeUm(static_cast<CUpti_ActivityUnifiedMemoryCounterKind>(42), 7000, 7000, 1, 0));
  size_t n = decoder_->DecodeBuffer(buffer, used, &cuptiActivityGetNextRecord);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(decoder_->counters().um, 8u);
  EXPECT_EQ(decoder_->counters().unknown_kind, 0u);
  auto r = Finish();
  auto um = r->UmEvents();
  ASSERT_TRUE(um.ok());
  ASSERT_EQ(um->size(), 8u);
  const auto& v = *um;  // ordered by start
  EXPECT_EQ(v[0].kind, UmCounterKind::kGpuPageFault);
  EXPECT_EQ(v[0].value, 37u);
  EXPECT_EQ(v[0].end_ns - v[0].start_ns, 600);
  EXPECT_EQ(v[0].flags, 2u);
  EXPECT_EQ(v[1].kind, UmCounterKind::kBytesHtoD);
  EXPECT_EQ(v[1].value, 2u << 20);
  EXPECT_EQ(v[1].end_ns, 1400);
  EXPECT_EQ(v[1].flags, kUmCauseCoherence);
  EXPECT_EQ(v[1].address, 0x7f1200000000ull);
  EXPECT_EQ(v[2].kind, UmCounterKind::kBytesDtoH);
  EXPECT_EQ(v[2].flags, kUmCauseUser);
  EXPECT_EQ(v[3].kind, UmCounterKind::kCpuPageFault);
  EXPECT_EQ(v[3].end_ns, 3000);  // point event
  EXPECT_EQ(v[3].value, 0x401234u);
  EXPECT_EQ(v[4].kind, UmCounterKind::kThrashing);
  EXPECT_EQ(v[4].end_ns, 4000);
  EXPECT_EQ(v[5].kind, UmCounterKind::kThrottling);
  EXPECT_EQ(v[5].end_ns, 5600);
  EXPECT_EQ(v[6].kind, UmCounterKind::kRemoteMap);
  EXPECT_EQ(v[6].end_ns, 6000);
  EXPECT_EQ(v[7].kind, UmCounterKind::kUnknown);
}

// The tracer refuses a CUPTI whose records are other versions (cupti_setup.cc).
TEST(CuptiRecords, OnlyCuda13CuptiMatchesTheDecodedVersions) {
  EXPECT_TRUE(cupti::RecordLayoutMatches(130000));  // 13.0
  EXPECT_TRUE(cupti::RecordLayoutMatches(130001));  // 13.0 Update 1
  EXPECT_TRUE(cupti::RecordLayoutMatches(130100));  // 13.1
  EXPECT_FALSE(cupti::RecordLayoutMatches(28));     // 12.9 Update 1
  EXPECT_FALSE(cupti::RecordLayoutMatches(19));     // 12.0
  EXPECT_FALSE(cupti::RecordLayoutMatches(140000));
  EXPECT_FALSE(cupti::RecordLayoutMatches(0));
}

}  // namespace
}  // namespace stepscope
