// GPU metrics over time: CUPTI PM sampling (`profile --gpu-metrics`,
// STEPSCOPE_GPU_METRICS), inside the injected tracer.
//
// What: while recording, every device the program created a context on is
// sampled every `interval` by the GPU's performance monitors (PM sampling:
// the GPU itself writes one sample per interval into a hardware buffer; no
// kernel is replayed or serialized). The metrics are format/gpu_metric_names.h's
// (SM active, tensor pipes active, DRAM read/write throughput, PCIe and NVLink,
// the clock), those the chip has and one pass can hold.
//
// How: one decode thread (all signals blocked) makes every PM sampling call:
// it enables and configures a device when its first context appears, starts
// and stops sampling with the recording windows, and every kDecodePeriodNs
// decodes the hardware buffer, evaluates the completed samples and hands each
// (sample, metric) to the sink, which puts a ring record (shm::GpuMetric); the
// collector writes them as gpu_metrics rows. The program's threads only set
// flags: nothing here runs on them.
//
// Clock: CUPTI documents the samples' start and end timestamps as CPU
// timestamps, which on Linux is CUPTI's clock (CLOCK_REALTIME, capture/clock.h),
// the trace clock of every other row. The decode thread checks this with the
// first sample: a sample that ended more than kClockToleranceNs away from
// "now" is taken to be on another clock, and the offset between the two is
// measured once from that sample (accurate to one decode period) and applied
// to every later one; STEPSCOPE_VERBOSE says so. tests/gpu/pm_sampling_check.py
// measures the lag between the PM samples and the kernel records.
//
// Failure policy (as the rest of the tracer): any failure (PM sampling not
// supported, ERR_NVGPUCTRPERM / CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, no metric
// of the list on this chip, an overflowing hardware buffer that CUPTI refuses
// to decode) prints one warning with CUPTI's error and turns the GPU metrics
// off; the program and the rest of the trace go on. Nothing throws out.
//
// The CUPTI side is the Backend (pm_sampling_cupti.cc); the tests fake it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace stepscope::pm {

// One decoded sample of one device: its interval on the backend's clock and
// one value per sampled metric, in the order Open returned them.
struct Sample {
  uint64_t start_ts = 0;
  uint64_t end_ts = 0;
  std::vector<double> values;
};

// What the sampler needs of CUPTI. Every call comes from the decode thread.
// A false return fills *why with the call and CUPTI's error text.
class Backend {
 public:
  virtual ~Backend() = default;
  // Enables PM sampling on `device` with those of `wanted` it can sample in
  // one pass (in order; *metrics gets them), one sample every `interval_ns`.
  virtual bool Open(uint32_t device, const std::vector<std::string>& wanted, int64_t interval_ns,
                    std::vector<std::string>* metrics, std::string* why) = 0;
  virtual bool Start(uint32_t device, std::string* why) = 0;
  virtual bool Stop(uint32_t device, std::string* why) = 0;
  // Appends the completed samples in the hardware buffer to *out (in time
  // order) and frees that buffer; *lost: the hardware dropped samples.
  virtual bool Decode(uint32_t device, std::vector<Sample>* out, bool* lost, std::string* why) = 0;
  // Stops using `device`. `at_exit`: the process is exiting (the tracer's
  // atexit shutdown): PM sampling objects are left for the driver to free,
  // since CUPTI's own exit handlers may have run already (a traced program
  // with --gpu-metrics aborted at exit with "double free or corruption" when
  // they were freed there: H200, CUDA 13.0, 2026-11-28).
  virtual void Close(uint32_t device, bool at_exit) = 0;
};

// One (sample, metric) on the trace clock, for the sink.
struct MetricValue {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t device = 0;
  double value = 0;
  std::string_view metric;
};

// The samples of `device` as sink values: each sample's interval shifted by
// `offset_ns` to the trace clock, each value times its metric's scale
// (format/gpu_metric_names.h); a sample with end < start, or with fewer
// values than metrics, is skipped (counted in *skipped when given).
std::vector<MetricValue> ToMetricValues(uint32_t device, const std::vector<Sample>& samples,
                                        const std::vector<std::string>& metrics, int64_t offset_ns,
                                        uint64_t* skipped = nullptr);

inline constexpr int64_t kDecodePeriodNs = 100'000'000;
inline constexpr int64_t kClockToleranceNs = 10'000'000'000;

// The offset from the backend's clock to the trace clock, judged from the
// first sample: 0 when it ended within kClockToleranceNs of `now_ns` (the
// documented case), else now_ns - its end.
int64_t ClockOffsetFor(const Sample& first, int64_t now_ns);

class Sampler {
 public:
  struct Hooks {
    std::function<void(const MetricValue&)> sink;
    std::function<void(const std::string&)> warn;  // once, then the sampler is off
    std::function<void(const std::string&)> note;  // verbose notes
    std::function<int64_t()> now_ns;               // the trace clock
  };
  Sampler(std::unique_ptr<Backend> backend, int64_t interval_ns, std::vector<std::string> wanted,
          Hooks hooks);
  ~Sampler();  // Shutdown()

  // A context was created on `device` (any thread; cheap).
  void AddDevice(uint32_t device);
  // Recording started or stopped (any thread; cheap): sampling follows.
  void SetRecording(bool on);
  // Stops sampling, decodes what is left, joins the thread. Idempotent.
  // `at_exit`: called by the process's exit (Backend::Close's at_exit).
  void Shutdown(bool at_exit = false);

  bool failed() const { return failed_.load(); }
  uint64_t values_sent() const { return sent_.load(); }
  // The metrics sampled on `device` (after it opened; tests, notes).
  std::vector<std::string> Metrics(uint32_t device) const;

 private:
  struct Device {
    uint32_t id = 0;
    bool open = false;
    bool running = false;
    std::vector<std::string> metrics;
  };
  void Loop();
  // One pass of the thread: opens new devices, follows recording, decodes.
  void Tick(bool final_pass);
  bool Sync(Device* d, bool want_running);
  void DecodeInto(Device* d);
  void Fail(const std::string& why);

  std::unique_ptr<Backend> backend_;
  const int64_t interval_ns_;
  const std::vector<std::string> wanted_;
  Hooks hooks_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::set<uint32_t> pending_;   // guarded by mu_: devices not yet opened
  bool recording_ = false;       // guarded by mu_
  bool stop_ = false;            // guarded by mu_
  bool at_exit_ = false;         // guarded by mu_: the stop is the process's exit
  std::vector<Device> devices_;  // the thread's (Metrics() reads under mu_)
  bool clock_known_ = false;
  int64_t offset_ns_ = 0;
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> sent_{0};
  std::atomic<bool> joined_{false};
  std::thread thread_;
};

// The glue to the session (pm_sampling_cupti.cc), called from cupti_setup.cc
// and session.cc. All are no-ops when --gpu-metrics is off.
bool GpuMetricsWanted();
void GpuMetricsOnContext(void* cu_context);
void GpuMetricsSetRecording(bool on);
void GpuMetricsShutdown();

}  // namespace stepscope::pm
