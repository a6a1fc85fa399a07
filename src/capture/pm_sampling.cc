// See pm_sampling.h. The sampler's logic, without CUPTI (the Backend is).
#include "capture/pm_sampling.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>

#include "format/gpu_metric_names.h"

namespace stepscope::pm {

std::vector<MetricValue> ToMetricValues(uint32_t device, const std::vector<Sample>& samples,
                                        const std::vector<std::string>& metrics, int64_t offset_ns,
                                        uint64_t* skipped) {
  std::vector<MetricValue> out;
  out.reserve(samples.size() * metrics.size());
  std::vector<double> scale(metrics.size(), 1.0);
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (const GpuMetricDef* def = FindGpuMetric(metrics[i])) scale[i] = def->scale;
  }
  for (const Sample& s : samples) {
    if (s.end_ts < s.start_ts || s.values.size() < metrics.size() ||
        s.end_ts > static_cast<uint64_t>(INT64_MAX)) {
      if (skipped) ++*skipped;
      continue;
    }
    for (size_t i = 0; i < metrics.size(); ++i) {
      MetricValue v;
      v.start_ns = static_cast<int64_t>(s.start_ts) + offset_ns;
      v.end_ns = static_cast<int64_t>(s.end_ts) + offset_ns;
      v.device = device;
      v.value = s.values[i] * scale[i];
      v.metric = metrics[i];
      out.push_back(v);
    }
  }
  return out;
}

int64_t ClockOffsetFor(const Sample& first, int64_t now_ns) {
  const int64_t end = static_cast<int64_t>(first.end_ts);
  const int64_t gap = now_ns - end;
  if (gap < kClockToleranceNs && gap > -kClockToleranceNs) return 0;
  return gap;
}

Sampler::Sampler(std::unique_ptr<Backend> backend, int64_t interval_ns,
                 std::vector<std::string> wanted, Hooks hooks)
    : backend_(std::move(backend)),
      interval_ns_(interval_ns),
      wanted_(std::move(wanted)),
      hooks_(std::move(hooks)) {
  // Every signal blocked: signals meant for the program never land here.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread(&Sampler::Loop, this);
  } catch (...) {
    failed_ = true;
    joined_ = true;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (failed_.load() && hooks_.warn) hooks_.warn("cannot start the GPU metrics thread");
}

Sampler::~Sampler() { Shutdown(); }

void Sampler::AddDevice(uint32_t device) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const Device& d : devices_) {
      if (d.id == device) return;
    }
    if (!pending_.insert(device).second) return;
  }
  cv_.notify_one();
}

void Sampler::SetRecording(bool on) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (recording_ == on) return;
    recording_ = on;
  }
  cv_.notify_one();
}

void Sampler::Shutdown(bool at_exit) {
  if (joined_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    at_exit_ = at_exit;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> Sampler::Metrics(uint32_t device) const {
  std::lock_guard<std::mutex> lk(mu_);
  for (const Device& d : devices_) {
    if (d.id == device) return d.metrics;
  }
  return {};
}

void Sampler::Fail(const std::string& why) {
  if (failed_.exchange(true)) return;
  if (hooks_.warn) hooks_.warn(why);
}

void Sampler::Loop() {
  pthread_setname_np(pthread_self(), "stepscope-pm");
  try {
    while (true) {
      bool stop = false;
      {
        std::unique_lock<std::mutex> lk(mu_);
        // Woken early by a new device or a recording change; else once per
        // decode period.
        const bool recording = recording_;
        cv_.wait_for(lk, std::chrono::nanoseconds(kDecodePeriodNs),
                     [&] { return stop_ || !pending_.empty() || recording_ != recording; });
        stop = stop_;
      }
      if (failed_.load()) {
        if (stop) break;
        continue;
      }
      Tick(stop);
      if (stop) break;
    }
  } catch (...) {
    Fail("internal error in the GPU metrics thread");
  }
  // Whatever happened, no device stays sampling.
  bool at_exit = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    at_exit = at_exit_;
  }
  for (Device& d : devices_) {
    if (!d.open) continue;
    std::string why;
    if (d.running) backend_->Stop(d.id, &why);
    backend_->Close(d.id, at_exit);
    d.open = d.running = false;
    if (hooks_.note) hooks_.note("GPU metrics: device " + std::to_string(d.id) + " closed");
  }
}

void Sampler::Tick(bool final_pass) {
  std::set<uint32_t> fresh;
  bool recording = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    fresh.swap(pending_);
    recording = recording_ && !final_pass;
  }
  for (uint32_t id : fresh) {
    Device d;
    d.id = id;
    std::string why;
    std::vector<std::string> metrics;
    if (!backend_->Open(id, wanted_, interval_ns_, &metrics, &why)) {
      Fail("GPU metrics (--gpu-metrics) are off: device " + std::to_string(id) + ": " + why);
      return;
    }
    d.open = true;
    d.metrics = std::move(metrics);
    if (hooks_.note) {
      hooks_.note("GPU metrics on device " + std::to_string(id) + ": " +
                  std::to_string(d.metrics.size()) + " of " + std::to_string(wanted_.size()) +
                  " metrics, every " + std::to_string(interval_ns_) + " ns");
    }
    std::lock_guard<std::mutex> lk(mu_);
    devices_.push_back(std::move(d));
  }
  for (Device& d : devices_) {
    if (!Sync(&d, recording)) return;
  }
}

// Starts or stops `d` to match the recording state, decoding what it holds;
// false once the sampler failed.
bool Sampler::Sync(Device* d, bool want_running) {
  std::string why;
  if (want_running && !d->running) {
    if (!backend_->Start(d->id, &why)) {
      Fail("GPU metrics (--gpu-metrics) are off: device " + std::to_string(d->id) + ": " + why);
      return false;
    }
    d->running = true;
    return true;
  }
  if (!d->running) return true;
  if (!want_running) {
    // Stopped first, so the decode below takes every sample up to the stop.
    if (!backend_->Stop(d->id, &why)) {
      Fail("GPU metrics (--gpu-metrics) are off: device " + std::to_string(d->id) + ": " + why);
      return false;
    }
    d->running = false;
  }
  DecodeInto(d);
  return !failed_.load();
}

void Sampler::DecodeInto(Device* d) {
  std::vector<Sample> samples;
  bool lost = false;
  std::string why;
  if (!backend_->Decode(d->id, &samples, &lost, &why)) {
    Fail("GPU metrics (--gpu-metrics) are off: device " + std::to_string(d->id) + ": " + why);
    return;
  }
  if (lost && hooks_.note) {
    hooks_.note("GPU metrics: the hardware buffer of device " + std::to_string(d->id) +
                " overflowed; samples were lost (a longer interval avoids it)");
  }
  if (samples.empty()) return;
  if (!clock_known_) {
    clock_known_ = true;
    offset_ns_ = hooks_.now_ns ? ClockOffsetFor(samples.front(), hooks_.now_ns()) : 0;
    if (offset_ns_ != 0 && hooks_.note) {
      hooks_.note("GPU metrics: PM sample timestamps are " + std::to_string(offset_ns_) +
                  " ns off the trace clock; shifted by that (accurate to one decode period)");
    }
  }
  for (const MetricValue& v : ToMetricValues(d->id, samples, d->metrics, offset_ns_)) {
    if (hooks_.sink) hooks_.sink(v);
    sent_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace stepscope::pm
