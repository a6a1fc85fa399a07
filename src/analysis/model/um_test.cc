// The unified-memory stall model (analysis/model/um.h) on models built in memory.
#include "analysis/model/um.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

constexpr int64_t kUs = 1000;

UmRecord Um(UmCounterKind kind, int64_t s, int64_t e, uint64_t value, uint32_t flags) {
  UmRecord u{};
  u.kind = kind;
  u.start_ns = s;
  u.end_ns = e;
  u.value = value;
  u.flags = flags;
  return u;
}

std::unique_ptr<TraceModel> Model(std::vector<UmRecord> um) {
  TraceModel::Records r;
  r.strings = {"", "touch"};
  KernelRecord k{};
  k.start_ns = 1000 * kUs;
  k.end_ns = 11000 * kUs;  // a 10 ms kernel
  k.name = 1;
  r.kernels.push_back(k);
  r.um = std::move(um);
  return TraceModel::FromRecords(std::move(r));
}

TEST(UnifiedMemory, FaultGroupsCloseTogetherAreOneStall) {
  // Groups [2, 3] ms and [3.1, 4] ms (100 us apart: merged), then [5, 6] ms
  // (1 ms later: separate); one group starts before the kernel (clipped).
  auto m =
      Model({Um(UmCounterKind::kGpuPageFault, 500 * kUs, 1500 * kUs, 10, 2),
             Um(UmCounterKind::kGpuPageFault, 2000 * kUs, 3000 * kUs, 10, 2),
             Um(UmCounterKind::kGpuPageFault, 3100 * kUs, 4000 * kUs, 10, 2),
             Um(UmCounterKind::kGpuPageFault, 5000 * kUs, 6000 * kUs, 10, 2),
             Um(UmCounterKind::kBytesHtoD, 2500 * kUs, 2600 * kUs, 1 << 20, kUmCauseCoherence)});
  UmAnalysis a = AnalyzeUm(*m, -1);
  ASSERT_TRUE(a.has_gpu_faults);
  ASSERT_EQ(a.kernels.size(), 1u);
  // [1, 1.5] + [2, 4] (merged across the 100 us gap) + [5, 6] = 0.5 + 2 + 1 ms
  EXPECT_EQ(a.kernels[0].recorded_ns, 3500 * kUs);
  // No fault-free run of the kernel: its whole time (the gaps between the
  // records and the 5 ms after the last one included; um.h).
  EXPECT_EQ(a.kernels[0].stalled_ns, 10000 * kUs);
  EXPECT_EQ(a.kernels[0].resident_ns, -1);
  EXPECT_EQ(a.kernels[0].fault_groups, 4);
  EXPECT_EQ(a.kernels[0].faults, 40);
  EXPECT_EQ(a.kernels[0].htod_bytes_recorded, 1u << 20);
  // One 0.1 ms migration is no rate to continue past the records.
  EXPECT_EQ(a.kernels[0].htod_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(a.htod_bytes_per_ns, (1 << 20) / 100000.0);
  EXPECT_EQ(a.htod_bw_source, UmBandwidthSource::kLargeMigrations);
}

TEST(UnifiedMemory, WithoutFaultGroupsTheMigrationSpanIsTheStall) {
  auto m = Model({Um(UmCounterKind::kBytesHtoD, 2000 * kUs, 2100 * kUs, 2 << 20, kUmCauseCoherence),
                  Um(UmCounterKind::kBytesHtoD, 8000 * kUs, 8100 * kUs, 2 << 20, kUmCauseCoherence),
                  // a user prefetch: sets the bandwidth, is not a stall
                  Um(UmCounterKind::kBytesHtoD, 20000 * kUs, 20400 * kUs, 8 << 20, kUmCauseUser)});
  UmAnalysis a = AnalyzeUm(*m, -1, /*h2d_link_bytes_per_ns=*/100.0);
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].recorded_ns, 6100 * kUs);
  // The whole 10 ms kernel; 4 MiB recorded, + the rate over the records'
  // span continued for the 2.9 ms after the last one
  EXPECT_EQ(a.kernels[0].stalled_ns, 10000 * kUs);
  EXPECT_EQ(a.kernels[0].htod_bytes, (4u << 20) + static_cast<uint64_t>((4 << 20) * 2.9 / 6.1));
  // The trace's own prefetches set the bandwidth before any ceiling.
  EXPECT_EQ(a.htod_bw_source, UmBandwidthSource::kPrefetches);
  EXPECT_DOUBLE_EQ(a.htod_bytes_per_ns, (8 << 20) / 400000.0);
  // saving = 10 ms - 5.9 MiB at 8 MiB / 0.4 ms (0.295 ms)
  EXPECT_EQ(UmPrefetchSaving(a.kernels[0].stalled_ns, a.kernels[0].htod_bytes, a.htod_bytes_per_ns),
            10000 * kUs - 295082);
}

// The driver's speculative prefetch of a faulting page's neighbours is
// fault-driven too (most of the bytes on a lent H100): it extends the span.
TEST(UnifiedMemory, SpeculativePrefetchIsFaultDriven) {
  auto m =
      Model({Um(UmCounterKind::kBytesHtoD, 2000 * kUs, 2100 * kUs, 2 << 20, kUmCauseCoherence),
             Um(UmCounterKind::kBytesHtoD, 9000 * kUs, 9100 * kUs, 6 << 20, kUmCausePrefetch)});
  UmAnalysis a = AnalyzeUm(*m, -1);
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].recorded_ns, 7100 * kUs);
  EXPECT_EQ(a.kernels[0].htod_bytes_recorded, 8u << 20);
}

// Without prefetches in the trace: the bench ceiling, else the large
// migrations' speed (either direction), else all of the direction's.
TEST(UnifiedMemory, PrefetchBandwidthSources) {
  const std::vector<UmRecord> um = {
      Um(UmCounterKind::kBytesHtoD, 2000 * kUs, 2100 * kUs, 64 << 10, kUmCauseCoherence),
      Um(UmCounterKind::kBytesDtoH, 20000 * kUs, 20010 * kUs, 1 << 20, kUmCauseCoherence)};
  auto m = Model(um);
  UmAnalysis a = AnalyzeUm(*m, -1, 50.0, 40.0);
  EXPECT_DOUBLE_EQ(a.htod_bytes_per_ns, 50.0);
  EXPECT_DOUBLE_EQ(a.dtoh_bytes_per_ns, 40.0);
  EXPECT_EQ(a.htod_bw_source, UmBandwidthSource::kBench);
  UmAnalysis b = AnalyzeUm(*m, -1);
  EXPECT_DOUBLE_EQ(b.htod_bytes_per_ns, (1 << 20) / 10000.0);  // the 1 MiB migration
  EXPECT_EQ(b.htod_bw_source, UmBandwidthSource::kLargeMigrations);
  auto small = Model({um[0]});
  const UmAnalysis c = AnalyzeUm(*small, -1);
  EXPECT_DOUBLE_EQ(c.htod_bytes_per_ns, (64 << 10) / 100000.0);
  EXPECT_EQ(c.htod_bw_source, UmBandwidthSource::kMigrations);
  EXPECT_EQ(c.dtoh_bw_source, UmBandwidthSource::kNone);  // no device->host migration
  EXPECT_EQ(c.dtoh_bytes_per_ns, 0.0);
  EXPECT_STREQ(UmBandwidthSourceText(UmBandwidthSource::kBench),
               "the stepscope bench pinned-copy ceiling");
}

// Fault groups recorded for one kernel and lost for the next: the second
// falls back to its migrations.
TEST(UnifiedMemory, KernelWithoutFaultGroupsFallsBackToMigrations) {
  TraceModel::Records r;
  r.strings = {"", "touch"};
  for (int64_t s0 : {1000 * kUs, 20000 * kUs}) {
    KernelRecord k{};
    k.start_ns = s0;
    k.end_ns = s0 + 10000 * kUs;
    k.name = 1;
    r.kernels.push_back(k);
  }
  r.um = {Um(UmCounterKind::kGpuPageFault, 2000 * kUs, 4000 * kUs, 10, 2),
          Um(UmCounterKind::kBytesHtoD, 21000 * kUs, 21100 * kUs, 1 << 20, kUmCauseCoherence),
          Um(UmCounterKind::kBytesHtoD, 25000 * kUs, 25100 * kUs, 1 << 20, kUmCausePrefetch)};
  // A fault-free run of the same kernel: 3 ms with its data resident.
  KernelRecord k{};
  k.start_ns = 40000 * kUs;
  k.end_ns = 43000 * kUs;
  k.name = 1;
  r.kernels.push_back(k);
  auto m = TraceModel::FromRecords(std::move(r));
  UmAnalysis a = AnalyzeUm(*m, -1);
  ASSERT_EQ(a.kernels.size(), 2u);
  EXPECT_EQ(a.kernels[0].recorded_ns, 2000 * kUs);
  EXPECT_EQ(a.kernels[0].fault_groups, 1);
  EXPECT_EQ(a.kernels[1].recorded_ns, 4100 * kUs);
  EXPECT_EQ(a.kernels[1].fault_groups, 0);
  // What a prefetch removes: the time beyond the fault-free run (10 - 3 ms).
  for (const UmKernelStall& s : a.kernels) {
    EXPECT_EQ(s.resident_ns, 3000 * kUs);
    EXPECT_EQ(s.stalled_ns, 7000 * kUs);
  }
}

TEST(UnifiedMemory, CpuBurstsOutsideKernelsOnly) {
  auto m =
      Model({Um(UmCounterKind::kBytesDtoH, 200 * kUs, 300 * kUs, 1 << 20, kUmCauseCoherence),
             Um(UmCounterKind::kBytesDtoH, 600 * kUs, 700 * kUs, 1 << 20, kUmCauseCoherence),
             // during the kernel: not a CPU burst
             Um(UmCounterKind::kBytesDtoH, 5000 * kUs, 5100 * kUs, 1 << 20, kUmCauseCoherence),
             // 9 ms after the kernel: a burst of its own
             Um(UmCounterKind::kBytesDtoH, 20000 * kUs, 20100 * kUs, 1 << 20, kUmCauseCoherence)});
  UmAnalysis a = AnalyzeUm(*m, -1);
  ASSERT_EQ(a.cpu_bursts.size(), 2u);
  EXPECT_EQ(a.cpu_bursts[0].start_ns, 200 * kUs);
  EXPECT_EQ(a.cpu_bursts[0].end_ns, 700 * kUs);
  EXPECT_EQ(a.cpu_bursts[0].dtoh_bytes, 2u << 20);
  EXPECT_EQ(a.cpu_bursts[1].migrations, 1);
  EXPECT_TRUE(a.kernels.empty());  // no HtoD evidence
}

TEST(UnifiedMemory, NothingWithoutRecordsOrBandwidth) {
  auto m = Model({});
  UmAnalysis a = AnalyzeUm(*m, -1);
  EXPECT_TRUE(a.kernels.empty());
  EXPECT_TRUE(a.cpu_bursts.empty());
  EXPECT_EQ(UmPrefetchSaving(1000, 1 << 20, 0.0), 0);
  EXPECT_EQ(UmPrefetchSaving(1000, 1 << 30, 1.0), 0);  // never below 0
}

TEST(UnifiedMemory, DriverTotalsGiveTheEvidenceAndTheBytes) {
  // The default capture: the driver's totals, one row per poll interval in
  // which they moved. Kernel A [1, 11] ms faults (rows [0.5, 4], [4, 8],
  // [8, 11.5] ms with GPU faults and host->device bytes); a short kernel B
  // [11.2, 11.3] ms shares the last row's interval but not its faults; a
  // later run of A on resident data [20, 21] ms has no rows. Rows shared by
  // kernel time: the first row's 0.5 ms before A holds no kernel, so all of
  // its bytes are A's.
  TraceModel::Records r;
  r.strings = {"", "touch", "small"};
  auto kernel = [&](int64_t s, int64_t e, StringId name) {
    KernelRecord k{};
    k.start_ns = s;
    k.end_ns = e;
    k.name = name;
    r.kernels.push_back(k);
  };
  kernel(1000 * kUs, 11000 * kUs, 1);
  kernel(11200 * kUs, 11300 * kUs, 2);
  kernel(20000 * kUs, 21000 * kUs, 1);
  for (auto [s, e] : {std::pair<int64_t, int64_t>{500, 4000}, {4000, 8000}, {8000, 11500}}) {
    r.um.push_back(Um(UmCounterKind::kDriverHtoD, s * kUs, e * kUs, 100 << 20, 0));
    r.um.push_back(Um(UmCounterKind::kDriverGpuFaults, s * kUs, e * kUs, 1000, 0));
  }
  auto m = TraceModel::FromRecords(std::move(r));
  UmAnalysis a = AnalyzeUm(*m, -1, 0, 0, /*h2d_published=*/50.0, 0);
  EXPECT_TRUE(a.has_driver_totals);
  EXPECT_FALSE(a.has_gpu_faults);
  ASSERT_EQ(a.kernels.size(), 1u);  // A; B's 3% of the last row is not evidence
  const UmKernelStall& k = a.kernels[0];
  EXPECT_EQ(k.resident_ns, 1000 * kUs);
  EXPECT_EQ(k.stalled_ns, 9000 * kUs);  // 10 ms - the 1 ms resident run
  // All of the first two rows; of the last, A's 3 of the 3.1 ms of kernel time in it.
  const double last = (100 << 20) * 3000.0 / 3100.0;
  EXPECT_NEAR(static_cast<double>(k.htod_bytes), 2.0 * (100 << 20) + last, 2.0);
  EXPECT_NEAR(static_cast<double>(k.faults), 2000 + 1000 * 3000.0 / 3100.0, 1.0);
  EXPECT_EQ(k.fault_groups, 0);
  EXPECT_EQ(a.htod_bw_source, UmBandwidthSource::kPublished);
  EXPECT_DOUBLE_EQ(a.htod_bytes_per_ns, 50.0);
}

TEST(UnifiedMemory, DriverTotalsCpuBursts) {
  // Device->host bytes with CPU faults in the same poll interval, while no
  // kernel runs: one burst; a device->host row without CPU faults (a user
  // prefetch to the CPU) is not a fault burst.
  TraceModel::Records r;
  r.strings = {"", "touch"};
  KernelRecord k{};
  k.start_ns = 1000 * kUs;
  k.end_ns = 2000 * kUs;
  k.name = 1;
  r.kernels.push_back(k);
  r.um.push_back(Um(UmCounterKind::kDriverDtoH, 1800 * kUs, 3000 * kUs, 10 << 20, 0));
  r.um.push_back(Um(UmCounterKind::kDriverCpuFaults, 1800 * kUs, 3000 * kUs, 160, 0));
  r.um.push_back(Um(UmCounterKind::kDriverDtoH, 3000 * kUs, 4000 * kUs, 20 << 20, 0));
  r.um.push_back(Um(UmCounterKind::kDriverCpuFaults, 3000 * kUs, 4000 * kUs, 320, 0));
  r.um.push_back(Um(UmCounterKind::kDriverDtoH, 50000 * kUs, 51000 * kUs, 64 << 20, 0));
  auto m = TraceModel::FromRecords(std::move(r));
  UmAnalysis a = AnalyzeUm(*m, -1);
  ASSERT_EQ(a.cpu_bursts.size(), 1u);
  EXPECT_EQ(a.cpu_bursts[0].start_ns, 1800 * kUs);
  EXPECT_EQ(a.cpu_bursts[0].end_ns, 4000 * kUs);
  EXPECT_EQ(a.cpu_bursts[0].dtoh_bytes, 30u << 20);
}

}  // namespace
}  // namespace stepscope
