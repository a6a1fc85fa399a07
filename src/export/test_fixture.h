// A small trace that exercises every corner of the timeline layout, shared by
// the export and report tests. Each row's purpose is commented; the expected
// counts below are derived by hand from these rows.
#pragma once

#include <unistd.h>

#include <string>

#include "common/status.h"
#include "store/trace_writer.h"

namespace stepscope::testing_fixture {

// Expected layout of WriteFixtureTrace's trace (see the comments there).
inline constexpr int kGpuSlices = 10;     // 8 kernels, 1 memcpy, 1 memset
inline constexpr int kCpuSlices = 11;     // 5 NVTX ranges (not the mark), 6 API calls
inline constexpr int kInstants = 1;       // the NVTX mark
inline constexpr int kFlows = 7;          // GPU rows whose correlation has an API call
inline constexpr int kThreadTracks = 2;   // tids 100, 101
inline constexpr int kStreamTracks = 3;   // streams 7, 8, 9 of device 0
inline constexpr int kLaneTracks = 2;     // one on thread 100, one on stream 7
inline constexpr int kCounterTracks = 2;  // utilization and memory of device 0
inline constexpr int kTracks = 1 + kThreadTracks + 1 + kStreamTracks + kLaneTracks + kCounterTracks;
inline constexpr const char* kHostileName = "<script>alert(1)</script>";

inline Status WriteFixtureTrace(const std::string& path) {
  ::unlink(path.c_str());
  ASSIGN_OR_RETURN(auto w, TraceWriter::Create(path));
  TraceWriter& t = *w;
  t.SetMeta("source", "fixture");
  t.SetMeta("pid", "4242");
  t.SetMeta("command_line", "/usr/bin/python3 train.py --steps 2");
  DeviceRecord d{};
  d.id = 0;
  d.name = t.Intern("Test GPU");
  d.global_memory_bytes = 16ull << 30;
  t.AddDevice(d);
  t.SetThreadName(100, t.Intern("python3"));
  t.SetThreadName(101, t.Intern("worker"));

  auto nvtx = [&](int64_t s, int64_t e, uint32_t tid, const char* name, NvtxKind kind,
                  uint8_t depth) {
    NvtxRecord n{};
    n.start_ns = s;
    n.end_ns = e;
    n.tid = tid;
    n.end_tid = tid;
    n.name = t.Intern(name);
    n.kind = kind;
    n.depth = depth;
    t.AddNvtx(n);
  };
  nvtx(1000, 10000, 100, "step 1", NvtxKind::kPushPop, 0);
  nvtx(1100, 5000, 100, "forward", NvtxKind::kPushPop, 1);
  nvtx(6000, 6000, 100, "checkpoint", NvtxKind::kMark, 1);  // an instant under "step 1"
  nvtx(4000, 8000, 100, "async", NvtxKind::kStartEnd, 0);   // crosses the end of "forward": a lane
  nvtx(9000, -1, 101, "never closed", NvtxKind::kPushPop, 0);  // open: ends at the trace end
  nvtx(10000, 12000, 100, "step 2", NvtxKind::kPushPop, 0);

  auto api = [&](int64_t s, int64_t e, uint32_t corr, const char* name) {
    ApiRecord a{};
    a.start_ns = s;
    a.end_ns = e;
    a.tid = 100;
    a.correlation = corr;
    a.name = t.Intern(name);
    t.AddApi(a);
  };
  api(1200, 1300, 1, "cudaLaunchKernel");
  api(1400, 1500, 2, "cudaLaunchKernel");
  api(2000, 2100, 3, "cudaGraphLaunch");  // three kernels: three flows
  api(2200, 2300, 4, "cudaMemcpyAsync");
  api(2400, 2450, 5, "cudaMemsetAsync");
  api(2500, 2600, 99, "cudaStreamSynchronize");  // no GPU work: no flow

  auto kernel = [&](int64_t s, int64_t e, uint32_t stream, uint32_t corr, const char* name) {
    KernelRecord k{};
    k.start_ns = s;
    k.end_ns = e;
    k.device = 0;
    k.stream = stream;
    k.correlation = corr;
    k.name = t.Intern(name);
    k.grid_x = 132;
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 64;
    t.AddKernel(k);
  };
  kernel(1400, 3000, 7, 1, "gemm_bf16");
  kernel(3000, 3500, 7, 2, kHostileName);  // untrusted name: must be escaped everywhere
  kernel(2200, 2600, 8, 3, "graph_node_a");
  kernel(2600, 2900, 8, 3, "graph_node_b");
  kernel(2900, 3100, 8, 3, "graph_node_c");
  kernel(3600, 3700, 7, 50, "ncclDevKernel_AllReduce");  // correlation without API row: no flow
  kernel(3650, 3800, 7, 0, "overlapping");  // crosses the previous kernel on stream 7: a lane
  kernel(10500, 11500, 7, 0, "gemm_bf16");  // step 2

  MemcpyRecord m{};
  m.start_ns = 3800;
  m.end_ns = 4000;
  m.bytes = 1 << 20;
  m.stream = 7;
  m.correlation = 4;
  m.copy_kind = CopyKind::kHostToDevice;
  m.src_kind = MemoryKind::kPageable;
  m.dst_kind = MemoryKind::kDevice;
  t.AddMemcpy(m);
  MemsetRecord ms{};
  ms.start_ns = 2500;
  ms.end_ns = 2550;
  ms.bytes = 4096;
  ms.stream = 9;
  ms.correlation = 5;
  t.AddMemset(ms);

  auto memory = [&](int64_t ts, MemoryOp op, uint64_t addr, uint64_t bytes, MemoryKind kind) {
    MemoryRecord r{};
    r.ts_ns = ts;
    r.op = op;
    r.address = addr;
    r.bytes = bytes;
    r.memory_kind = kind;
    t.AddMemory(r);
  };
  memory(500, MemoryOp::kAlloc, 0x1000, 1 << 20, MemoryKind::kDevice);
  memory(600, MemoryOp::kAlloc, 0x2000, 2 << 20, MemoryKind::kDevice);
  memory(700, MemoryOp::kAlloc, 0x3000, 8 << 20, MemoryKind::kPinned);  // host memory: not counted
  memory(9000, MemoryOp::kFree, 0x1000, 1 << 20, MemoryKind::kDevice);
  memory(9100, MemoryOp::kFree, 0x9999, 1 << 20,
         MemoryKind::kDevice);  // allocated before the trace
  return t.Finalize();
}

}  // namespace stepscope::testing_fixture
