#include "collector/host_rows.h"

#include <algorithm>
#include <cstring>

#include "capture/shm_ring.h"
#include "store/trace_fixups.h"

namespace stepscope {
namespace {

// Waits that become osrt rows (the GIL and CUDA calls have their own states).
bool IsOsWait(ThreadState s) {
  return s == ThreadState::kBlockedLock || s == ThreadState::kBlockedIo ||
         s == ThreadState::kSleep || s == ThreadState::kBlockedOther;
}

}  // namespace

HostRows::HostRows(TraceWriter* writer, int64_t wall_offset_ns, int hz)
    : w_(writer),
      interner_(writer),
      wall_offset_ns_(wall_offset_ns),
      period_ns_(hz > 0 ? 1'000'000'000 / hz : 5'000'000) {}

void HostRows::AddBatch(HostBatch* b) {
  auto intern = [&](const std::vector<HostFrameText>& frames, FrameKind kind) {
    std::vector<FrameKey> keys;
    keys.reserve(frames.size());
    for (const HostFrameText& f : frames) {
      keys.push_back({kind, w_->Intern(f.function), w_->Intern(f.file), f.line});
    }
    return interner_.Intern(keys);
  };
  for (auto& [id, frames] : b->stacks) sampler_stacks_[id] = intern(frames, FrameKind::kPython);
  for (auto& [id, frames] : b->native_stacks) {
    native_stacks_[id] = intern(frames, FrameKind::kNative);
  }
  for (const HostNativeSample& s : b->native_samples) {
    NativeSampleRecord r{};
    r.ts_ns = s.realtime_ns - wall_offset_ns_;
    r.tid = s.tid;
    auto cs = native_stacks_.find(s.stack);
    r.callsite = s.stack != 0 && cs != native_stacks_.end() ? cs->second : 0;
    w_->AddNativeSample(r);
    ++native_samples_;
  }
  for (auto& [tid, name] : b->thread_names) names_[tid] = name;
  for (const HostSample& s : b->samples) {
    SampleRecord r{};
    r.ts_ns = s.realtime_ns - wall_offset_ns_;
    r.tid = s.tid;
    r.state = s.state;
    r.cpu_ns = s.cpu_ns;
    auto cs = sampler_stacks_.find(s.stack);
    r.callsite = s.stack != 0 && cs != sampler_stacks_.end() ? cs->second : 0;
    if (!s.wait_name.empty()) {
      const std::string text =
          s.wait_detail.empty() ? s.wait_name : s.wait_name + "(" + s.wait_detail + ")";
      auto it = waits_.find(text);
      if (it == waits_.end()) it = waits_.emplace(text, w_->Intern(text)).first;
      r.wait = it->second;
    }
    w_->AddSample(r);
    ++samples_;
    max_ns_ = std::max(max_ns_, r.ts_ns);
    // Runs of one wait -> osrt.
    Run& run = runs_[s.tid];
    const bool same = run.count > 0 && run.state == s.state && run.name == s.wait_name &&
                      run.detail == s.wait_detail && run.callsite == r.callsite;
    if (same) {
      run.last = r.ts_ns;
      ++run.count;
      continue;
    }
    CloseRun(s.tid, &run, r.ts_ns);
    if (IsOsWait(s.state) && !s.wait_name.empty()) {
      run.start = run.last = r.ts_ns;
      run.state = s.state;
      run.name = s.wait_name;
      run.detail = s.wait_detail;
      run.callsite = r.callsite;
      run.count = 1;
    }
  }
}

void HostRows::CloseRun(uint32_t tid, Run* r, int64_t end_ns) {
  if (r->count >= 2) {
    OsrtRecord o{};
    o.start_ns = r->start;
    o.end_ns = std::max(end_ns, r->last);
    o.tid = tid;
    o.name = w_->Intern(r->name);
    o.detail = w_->Intern(r->detail);
    o.callsite = r->callsite;
    o.source = kOsrtSampled;
    w_->AddOsrt(o);
    ++osrt_;
  }
  *r = Run();
}

void HostRows::Finish(int64_t end_ns) {
  for (auto& [tid, run] : runs_) CloseRun(tid, &run, std::min(end_ns, run.last + period_ns_));
  runs_.clear();
}

void HostRows::AddPyCode(const uint8_t* p, uint32_t n) {
  shm::PyCodeName c;
  if (n < sizeof(c)) return;
  std::memcpy(&c, p, sizeof(c));
  if (sizeof(c) + uint64_t{c.function_len} + c.file_len > n) return;
  const char* text = reinterpret_cast<const char*>(p + sizeof(c));
  codes_[c.code] = {w_->Intern(std::string_view(text, c.function_len)),
                    w_->Intern(std::string_view(text + c.function_len, c.file_len))};
}

void HostRows::AddPyStack(const uint8_t* p, uint32_t n) {
  shm::PyStackHead h;
  if (n < sizeof(h)) return;
  std::memcpy(&h, p, sizeof(h));
  if (h.depth > shm::kMaxPyDepth || sizeof(h) + uint64_t{h.depth} * sizeof(shm::PyStackFrame) > n)
    return;
  std::vector<FrameKey> keys;
  keys.reserve(h.depth);
  const StringId unknown = w_->Intern("?");
  for (uint32_t i = 0; i < h.depth; ++i) {
    shm::PyStackFrame f;
    std::memcpy(&f, p + sizeof(h) + i * sizeof(f), sizeof(f));
    auto it = codes_.find(f.code);
    keys.push_back({FrameKind::kPython, it == codes_.end() ? unknown : it->second.first,
                    it == codes_.end() ? unknown : it->second.second, f.line});
  }
  const uint32_t leaf = interner_.Intern(keys);
  if (leaf == 0) return;
  w_->AddApiCallsite({h.correlation, leaf});
  ++api_stacks_;
}

Status HostRows::MarkCudaWaits() {
  if (samples_ == 0 && osrt_ == 0) return OkStatus();
  return MarkBlockingCudaWaits(w_->db());
}

}  // namespace stepscope
