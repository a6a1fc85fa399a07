// Structural check of the Perfetto export: decode the .pftrace with the
// protobuf schema and count tracks, slices and flows against the fixture
// trace; replay every track's BEGIN/END stack; check the counters' values.
// The Chrome JSON output is checked by the diff tests (tests/diff/suites/export.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>

#include "common/file_util.h"
#include "common/json_writer.h"
#include "export/chrome_json_writer.h"
#include "export/counters.h"
#include "export/exporter.h"
#include "export/perfetto_trace.pb.h"
#include "export/test_fixture.h"

namespace stepscope {
namespace {

namespace fx = testing_fixture;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
}

struct Decoded {
  std::map<uint64_t, pftrace::TrackDescriptor> tracks;
  std::map<uint64_t, std::string> names;
  int begins = 0, ends = 0, instants = 0;
  std::map<uint64_t, int> begins_by_track;
  std::multiset<uint64_t> flow_sources, flow_sinks;
  std::map<std::string, std::vector<uint64_t>> flows_out_by_name, flows_in_by_name;
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters;
  std::string error;  // the first structural error
};

Decoded Decode(const std::string& bytes) {
  Decoded d;
  pftrace::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    d.error = "not a Trace message";
    return d;
  }
  std::map<uint64_t, std::vector<uint64_t>> open;  // track -> begin timestamps
  std::map<uint64_t, uint64_t> last_ts;
  bool cleared = false;
  for (const pftrace::TracePacket& p : trace.packet()) {
    if (p.trusted_packet_sequence_id() != 1 && d.error.empty()) d.error = "packet off the sequence";
    if (p.sequence_flags() & pftrace::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) cleared = true;
    if ((p.sequence_flags() & pftrace::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) && !cleared &&
        d.error.empty()) {
      d.error = "interned data used before the state was cleared";
    }
    for (const auto& n : p.interned_data().event_names()) d.names[n.iid()] = n.name();
    if (p.has_track_descriptor()) {
      d.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
      continue;
    }
    if (!p.has_track_event()) continue;
    const pftrace::TrackEvent& e = p.track_event();
    uint64_t track = e.track_uuid();
    if (!d.tracks.count(track) && d.error.empty()) d.error = "event before its track descriptor";
    if (p.timestamp() < last_ts[track] && d.error.empty()) d.error = "time goes back on a track";
    last_ts[track] = p.timestamp();
    std::string name = e.has_name_iid() ? d.names[e.name_iid()] : "";
    switch (e.type()) {
      case pftrace::TrackEvent::TYPE_SLICE_BEGIN:
        ++d.begins;
        ++d.begins_by_track[track];
        open[track].push_back(p.timestamp());
        if (!d.names.count(e.name_iid()) && d.error.empty()) d.error = "unresolved name iid";
        for (uint64_t f : e.flow_ids()) {
          d.flow_sources.insert(f);
          d.flows_out_by_name[name].push_back(f);
        }
        for (uint64_t f : e.terminating_flow_ids()) {
          d.flow_sinks.insert(f);
          d.flows_in_by_name[name].push_back(f);
        }
        break;
      case pftrace::TrackEvent::TYPE_SLICE_END:
        ++d.ends;
        if (open[track].empty()) {
          if (d.error.empty()) d.error = "END without BEGIN on track " + std::to_string(track);
        } else {
          open[track].pop_back();
        }
        break;
      case pftrace::TrackEvent::TYPE_INSTANT:
        ++d.instants;
        break;
      case pftrace::TrackEvent::TYPE_COUNTER:
        d.counters[track].push_back({p.timestamp(), e.has_counter_value()
                                                        ? static_cast<double>(e.counter_value())
                                                        : e.double_counter_value()});
        break;
      default:
        d.error = "event of unknown type";
    }
  }
  for (auto& [track, stack] : open) {
    if (!stack.empty() && d.error.empty())
      d.error = "slice never ended on track " + std::to_string(track);
  }
  return d;
}

const pftrace::TrackDescriptor* FindTrack(const Decoded& d, const std::string& name) {
  for (auto& [uuid, t] : d.tracks) {
    if (t.name() == name || t.thread().thread_name() == name) return &t;
  }
  return nullptr;
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = TempPath("export-fixture.sqlite");
    ASSERT_TRUE(fx::WriteFixtureTrace(trace_).ok());
    auto r = TraceReader::Open(trace_);
    ASSERT_TRUE(r.ok()) << r.status().message();
    reader_ = std::move(*r);
  }
  std::string trace_;
  std::unique_ptr<TraceReader> reader_;
};

TEST_F(ExportTest, PerfettoDecodesWithTheTracesCounts) {
  std::string out = TempPath("fixture.pftrace");
  TimelineStats stats;
  TimelineOptions options;
  options.util_bucket_ns = 1000;
  ASSERT_TRUE(ExportTrace(*reader_, ExportFormat::kPerfetto, options, out, &stats).ok());
  auto bytes = ReadFile(out);
  ASSERT_TRUE(bytes.ok());
  Decoded d = Decode(*bytes);
  ASSERT_EQ(d.error, "");

  // Tracks, by kind.
  int threads = 0, processes = 0, counters = 0;
  for (auto& [uuid, t] : d.tracks) {
    threads += t.has_thread();
    processes += t.has_process();
    counters += t.has_counter();
  }
  EXPECT_EQ(static_cast<int>(d.tracks.size()), fx::kTracks);
  EXPECT_EQ(processes, 1);
  EXPECT_EQ(threads, fx::kThreadTracks);
  EXPECT_EQ(counters, fx::kCounterTracks);
  EXPECT_EQ(stats.tracks, fx::kTracks);
  EXPECT_EQ(stats.lane_tracks, fx::kLaneTracks);
  const pftrace::TrackDescriptor* proc = nullptr;
  for (auto& [uuid, t] : d.tracks) {
    if (t.has_process()) proc = &t;
  }
  ASSERT_NE(proc, nullptr);
  EXPECT_EQ(proc->process().pid(), 4242);
  EXPECT_EQ(proc->process().process_name(), "python3 (pid 4242)");

  // Slices: every row of the trace once, every BEGIN ended.
  EXPECT_EQ(d.begins, fx::kGpuSlices + fx::kCpuSlices);
  EXPECT_EQ(d.ends, d.begins);
  EXPECT_EQ(d.instants, fx::kInstants);
  EXPECT_EQ(stats.gpu_slices, fx::kGpuSlices);
  EXPECT_EQ(stats.cpu_slices, fx::kCpuSlices);

  // GPU slices sit on stream tracks under the device track (or a stream's lane).
  const pftrace::TrackDescriptor* gpu = FindTrack(d, "GPU 0 (Test GPU)");
  ASSERT_NE(gpu, nullptr);
  int on_gpu = 0;
  for (auto& [uuid, t] : d.tracks) {
    if (t.parent_uuid() == gpu->uuid() && !t.has_counter()) on_gpu += d.begins_by_track[uuid];
  }
  EXPECT_EQ(on_gpu, fx::kGpuSlices);
  const pftrace::TrackDescriptor* lane = FindTrack(d, "Stream 7 (overlap 1)");
  ASSERT_NE(lane, nullptr);
  EXPECT_EQ(d.begins_by_track[lane->uuid()], 1);  // the "overlapping" kernel
  const pftrace::TrackDescriptor* cpu_lane = FindTrack(d, "python3 (overlap 1)");
  ASSERT_NE(cpu_lane, nullptr);
  EXPECT_EQ(d.begins_by_track[cpu_lane->uuid()], 1);  // the "async" range

  // Flows: one per GPU activity launched by a recorded API call, each from
  // exactly one launch.
  EXPECT_EQ(static_cast<int>(d.flow_sinks.size()), fx::kFlows);
  EXPECT_EQ(d.flow_sources, d.flow_sinks);
  EXPECT_EQ(stats.flows, fx::kFlows);
  EXPECT_EQ(d.flows_out_by_name["cudaGraphLaunch"].size(), 3u);
  EXPECT_EQ(d.flows_out_by_name["cudaStreamSynchronize"].size(), 0u);
  ASSERT_EQ(d.flows_in_by_name[fx::kHostileName].size(), 1u);
  EXPECT_EQ(d.flows_in_by_name["ncclDevKernel_AllReduce"].size(), 0u);
  // The launch with correlation 2 points at the kernel with correlation 2.
  std::vector<uint64_t> launches = d.flows_out_by_name["cudaLaunchKernel"];
  EXPECT_NE(std::find(launches.begin(), launches.end(), d.flows_in_by_name[fx::kHostileName][0]),
            launches.end());

  // Counters: memory in use (bytes) and utilization (%).
  const pftrace::TrackDescriptor* mem = FindTrack(d, "GPU 0 memory in use");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->counter().unit(), pftrace::CounterDescriptor::UNIT_SIZE_BYTES);
  std::vector<std::pair<uint64_t, double>> want_mem = {
      {500, 1 << 20}, {600, 3 << 20}, {9000, 2 << 20}};
  EXPECT_EQ(d.counters[mem->uuid()], want_mem);
  const pftrace::TrackDescriptor* util = FindTrack(d, "GPU 0 utilization (%)");
  ASSERT_NE(util, nullptr);
  const auto& u = d.counters[util->uuid()];
  ASSERT_EQ(u.size(), 11u);  // buckets of 1 us from 1400 to the last kernel end, 11500
  EXPECT_EQ(u[0], (std::pair<uint64_t, double>{1400, 100.0}));  // [1400, 2400) busy
  EXPECT_EQ(u[1], (std::pair<uint64_t, double>{2400, 100.0}));  // [2400, 3400) busy
  EXPECT_DOUBLE_EQ(u[2].second, 30.0);    // [3400,3500) + [3600,3800) of 1000 ns
  EXPECT_DOUBLE_EQ(u[8].second, 0.0);     // [9400, 10400): idle
  EXPECT_DOUBLE_EQ(u[9].second, 90.0);    // [10400, 11400): kernel from 10500
  EXPECT_DOUBLE_EQ(u[10].second, 100.0);  // [11400, 11500]: the last bucket ends at the last kernel
}

TEST_F(ExportTest, ChromeJsonEscapesNamesAndHoldsEveryEvent) {
  std::string out = TempPath("fixture.json");
  TimelineStats stats;
  ASSERT_TRUE(
      ExportTrace(*reader_, ExportFormat::kChromeJson, TimelineOptions{}, out, &stats).ok());
  auto text = ReadFile(out);
  ASSERT_TRUE(text.ok());
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t p = text->find(needle); p != std::string::npos; p = text->find(needle, p + 1)) ++n;
    return static_cast<int>(n);
  };
  EXPECT_EQ(count("\"ph\":\"X\""), fx::kGpuSlices + fx::kCpuSlices);
  EXPECT_EQ(count("\"ph\":\"s\""), fx::kFlows);
  EXPECT_EQ(count("\"ph\":\"f\""), fx::kFlows);
  EXPECT_EQ(count("\"ph\":\"i\""), fx::kInstants);
  EXPECT_EQ(count(std::string("\"name\":\"") + fx::kHostileName + "\""),
            1);  // JSON needs no HTML escaping
  EXPECT_EQ(text->substr(text->size() - 4), "\n]}\n");
}

TEST(ExportErrors, UnwritableOutputLeavesNothing) {
  std::string trace = TempPath("export-fixture2.sqlite");
  ASSERT_TRUE(fx::WriteFixtureTrace(trace).ok());
  auto r = TraceReader::Open(trace);
  ASSERT_TRUE(r.ok());
  TimelineStats stats;
  Status st = ExportTrace(**r, ExportFormat::kPerfetto, TimelineOptions{},
                          "/nonexistent-dir/x.pftrace", &stats);
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(FileExists("/nonexistent-dir/x.pftrace"));
}

TEST(JsonString, InvalidUtf8BecomesReplacementCharacter) {
  std::string out;
  AppendJsonString(&out, JsonEscaping::kCompact,
                   std::string("a\xff"
                               "b\xc3\xa9"
                               "\xe2\x82"
                               "\"\n",
                               9));
  EXPECT_EQ(out, "\"a\\ufffdb\xc3\xa9\\ufffd\\ufffd\\\"\\n\"");
}

TEST(AutoBucket, OneTwoFiveSteps) {
  EXPECT_EQ(AutoBucketNs(0, 1000, 2000), 1000);                // at least 1 us
  EXPECT_EQ(AutoBucketNs(0, 3'000'000'000, 2000), 2'000'000);  // 1.5 ms -> 2 ms
  EXPECT_EQ(AutoBucketNs(0, 7'000'000'000, 2000), 5'000'000);  // 3.5 ms -> 5 ms
}

}  // namespace
}  // namespace stepscope
