// The GPU metrics sampler without a GPU: a fake Backend stands for CUPTI's PM
// sampling (as cupti_records.h's decoder is tested on fake buffers): samples
// become sink values on the trace clock, sampling follows the recording
// windows, the last samples are decoded at shutdown, and any failure is one
// warning after which nothing more is asked of the backend.
#include "capture/pm_sampling.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "capture/config.h"
#include "common/env_contract.h"

namespace stepscope::pm {
namespace {

struct FakeState {
  std::mutex mu;
  std::vector<std::string> calls;
  std::vector<Sample> queued;  // handed out by the next Decode
  std::string fail_at;         // "Open", "Start", "Decode": that call fails
  size_t metrics_kept = 2;
};

class FakeBackend : public Backend {
 public:
  explicit FakeBackend(FakeState* s) : s_(s) {}
  bool Open(uint32_t device, const std::vector<std::string>& wanted, int64_t interval_ns,
            std::vector<std::string>* metrics, std::string* why) override {
    if (!Note("Open " + std::to_string(device) + " " + std::to_string(interval_ns), why))
      return false;
    metrics->assign(wanted.begin(),
                    wanted.begin() + static_cast<long>(std::min(s_->metrics_kept, wanted.size())));
    return true;
  }
  bool Start(uint32_t device, std::string* why) override {
    return Note("Start " + std::to_string(device), why);
  }
  bool Stop(uint32_t device, std::string* why) override {
    return Note("Stop " + std::to_string(device), why);
  }
  bool Decode(uint32_t device, std::vector<Sample>* out, bool* lost, std::string* why) override {
    *lost = false;
    std::lock_guard<std::mutex> lk(s_->mu);
    if (s_->fail_at == "Decode") {
      *why = "cuptiPmSamplingDecodeData: fake failure (CUPTI error 999)";
      return false;
    }
    out->insert(out->end(), s_->queued.begin(), s_->queued.end());
    s_->queued.clear();
    return true;
  }
  void Close(uint32_t device, bool at_exit) override {
    std::string why;
    Note("Close " + std::to_string(device) + (at_exit ? " at exit" : ""), &why);
  }

 private:
  bool Note(const std::string& call, std::string* why) {
    std::lock_guard<std::mutex> lk(s_->mu);
    s_->calls.push_back(call);
    if (call.rfind(s_->fail_at + " ", 0) == 0 && !s_->fail_at.empty()) {
      *why = call.substr(0, call.find(' ')) +
             ": CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (CUPTI error 35); ERR_NVGPUCTRPERM";
      return false;
    }
    return true;
  }
  FakeState* s_;
};

struct Harness {
  FakeState state;
  std::mutex mu;
  std::vector<MetricValue> values;
  std::vector<std::string> names;  // the values' metric names, copied
  std::vector<std::string> warnings;
  int64_t now = 1'000'000'000'000;
  std::unique_ptr<Sampler> sampler;

  void Make(std::vector<std::string> wanted = {"a.avg.pct", "b.sum.per_second", "c.sum"}) {
    Sampler::Hooks h;
    h.sink = [this](const MetricValue& v) {
      std::lock_guard<std::mutex> lk(mu);
      values.push_back(v);
      names.emplace_back(v.metric);
    };
    h.warn = [this](const std::string& w) {
      std::lock_guard<std::mutex> lk(mu);
      warnings.push_back(w);
    };
    h.now_ns = [this] { return now; };
    sampler = std::make_unique<Sampler>(std::make_unique<FakeBackend>(&state), 1'000'000,
                                        std::move(wanted), h);
  }
  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> lk(state.mu);
    return state.calls;
  }
  bool WaitFor(const std::string& call) {
    for (int i = 0; i < 400; ++i) {
      for (const std::string& c : Calls())
        if (c == call) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
};

Sample At(uint64_t start, uint64_t end, std::vector<double> values) {
  Sample s;
  s.start_ts = start;
  s.end_ts = end;
  s.values = std::move(values);
  return s;
}

TEST(PmSampling, SamplesBecomeOneValuePerMetricOnTheTraceClock) {
  const std::vector<std::string> metrics = {"sm", "tensor"};
  uint64_t skipped = 0;
  const auto v =
      ToMetricValues(3, {At(100, 200, {50, 25}), At(300, 250, {1, 2}), At(400, 500, {7})}, metrics,
                     1000, &skipped);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(skipped, 2u);  // end < start; fewer values than metrics
  EXPECT_EQ(v[0].start_ns, 1100);
  EXPECT_EQ(v[0].end_ns, 1200);
  EXPECT_EQ(v[0].device, 3u);
  EXPECT_EQ(v[0].metric, "sm");
  EXPECT_DOUBLE_EQ(v[0].value, 50);
  EXPECT_EQ(v[1].metric, "tensor");
  EXPECT_DOUBLE_EQ(v[1].value, 25);
}

TEST(PmSampling, DramcThroughputIsScaledFromAFractionToPercent) {
  const std::vector<std::string> metrics = {
      "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"};
  const auto v = ToMetricValues(0, {At(100, 200, {0.4626, 99.5})}, metrics, 0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_DOUBLE_EQ(v[0].value, 46.26);
  EXPECT_DOUBLE_EQ(v[1].value, 99.5);
}

TEST(PmSampling, AtExitTheBackendIsToldSo) {
  Harness h;
  h.Make();
  h.sampler->SetRecording(true);
  h.sampler->AddDevice(0);
  ASSERT_TRUE(h.WaitFor("Start 0"));
  h.sampler->Shutdown(/*at_exit=*/true);
  const std::vector<std::string> want = {"Open 0 1000000", "Start 0", "Stop 0", "Close 0 at exit"};
  EXPECT_EQ(h.Calls(), want);
}

TEST(PmSampling, ClockOffsetOnlyWhenTheSamplesAreOnAnotherClock) {
  const int64_t now = 1'700'000'000'000'000'000;
  EXPECT_EQ(ClockOffsetFor(At(0, static_cast<uint64_t>(now - 50'000'000), {}), now), 0);
  // A GPU clock counting from boot: shifted to end at "now".
  EXPECT_EQ(ClockOffsetFor(At(0, 5'000'000'000'000, {}), now), now - 5'000'000'000'000);
}

TEST(PmSampling, FollowsRecordingAndDecodesTheLastSamplesAtShutdown) {
  Harness h;
  h.Make();
  h.sampler->SetRecording(true);
  h.sampler->AddDevice(0);
  h.sampler->AddDevice(0);  // a second context on the same device
  ASSERT_TRUE(h.WaitFor("Start 0"));
  {
    std::lock_guard<std::mutex> lk(h.state.mu);
    h.state.queued = {At(h.now - 2000, h.now - 1000, {10, 20}), At(h.now - 1000, h.now, {30, 40})};
  }
  h.sampler->SetRecording(false);
  ASSERT_TRUE(h.WaitFor("Stop 0"));
  h.sampler->Shutdown();
  const std::vector<std::string> want = {"Open 0 1000000", "Start 0", "Stop 0", "Close 0"};
  EXPECT_EQ(h.Calls(), want);
  ASSERT_EQ(h.names.size(), 4u);
  EXPECT_EQ(h.names[0], "a.avg.pct");
  EXPECT_EQ(h.names[1], "b.sum.per_second");
  EXPECT_DOUBLE_EQ(h.values[3].value, 40);
  EXPECT_EQ(h.values[3].end_ns, h.now);
  EXPECT_EQ(h.sampler->Metrics(0).size(), 2u);  // what the backend could sample
  EXPECT_EQ(h.sampler->values_sent(), 4u);
  EXPECT_TRUE(h.warnings.empty());
}

TEST(PmSampling, AFailureIsOneWarningAndTheSamplerStops) {
  for (const char* where : {"Open", "Start", "Decode"}) {
    SCOPED_TRACE(where);
    Harness h;
    h.state.fail_at = where;
    h.Make();
    h.sampler->AddDevice(1);
    h.sampler->SetRecording(true);
    for (int i = 0; i < 400 && !h.sampler->failed(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    h.sampler->SetRecording(false);
    h.sampler->AddDevice(2);  // asks nothing more of the backend
    h.sampler->Shutdown();
    EXPECT_TRUE(h.sampler->failed());
    ASSERT_EQ(h.warnings.size(), 1u);
    EXPECT_NE(h.warnings[0].find("--gpu-metrics"), std::string::npos) << h.warnings[0];
    EXPECT_NE(
        h.warnings[0].find(std::string(where) == "Decode" ? "fake failure" : "ERR_NVGPUCTRPERM"),
        std::string::npos)
        << h.warnings[0];
    for (const std::string& c : h.Calls()) EXPECT_EQ(c.find(" 2"), std::string::npos) << c;
    EXPECT_TRUE(h.values.empty());
  }
}

TEST(PmSampling, NotRecordingMeansNotStarted) {
  Harness h;
  h.Make();
  h.sampler->AddDevice(0);
  ASSERT_TRUE(h.WaitFor("Open 0 1000000"));
  h.sampler->Shutdown();
  const std::vector<std::string> want = {"Open 0 1000000", "Close 0"};
  EXPECT_EQ(h.Calls(), want);
}

TEST(PmSampling, GpuMetricsOption) {
  int64_t ns = -1;
  EXPECT_TRUE(CaptureConfig::ParseGpuMetrics("off", &ns));
  EXPECT_EQ(ns, 0);
  EXPECT_TRUE(CaptureConfig::ParseGpuMetrics("on", &ns));
  EXPECT_EQ(ns, CaptureConfig::kGpuMetricsDefaultNs);
  EXPECT_TRUE(CaptureConfig::ParseGpuMetrics("500us", &ns));
  EXPECT_EQ(ns, 500'000);
  EXPECT_TRUE(CaptureConfig::ParseGpuMetrics("10ms", &ns));
  EXPECT_EQ(ns, 10'000'000);
  EXPECT_FALSE(CaptureConfig::ParseGpuMetrics("1us", &ns));  // below 10 us
  EXPECT_FALSE(CaptureConfig::ParseGpuMetrics("2s", &ns));   // above 1 s
  EXPECT_FALSE(CaptureConfig::ParseGpuMetrics("fast", &ns));
  // The launcher's side and the tracer's agree.
  CaptureConfig c;
  c.gpu_metrics_interval_ns = 250'000;
  for (const auto& [name, value] : c.ToEnv()) {
    if (name == kEnvGpuMetrics) ::setenv(name.c_str(), value.c_str(), 1);
  }
  EXPECT_EQ(CaptureConfig::FromEnv(nullptr).gpu_metrics_interval_ns, 250'000);
  ::setenv(kEnvGpuMetrics, "5", 1);  // out of range: off
  EXPECT_EQ(CaptureConfig::FromEnv(nullptr).gpu_metrics_interval_ns, 0);
  ::unsetenv(kEnvGpuMetrics);
  EXPECT_EQ(CaptureConfig::FromEnv(nullptr).gpu_metrics_interval_ns, 0);
}

}  // namespace
}  // namespace stepscope::pm
