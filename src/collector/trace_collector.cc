#include "collector/trace_collector.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <vector>

#include "capture/clock.h"
#include "capture/output_path.h"
#include "collector/cupti_loader.h"
#include "collector/journal_guard.h"
#include "common/log.h"
#include "common/strings.h"
#include "store/trace_fixups.h"

namespace stepscope {
namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return s;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; "_ptsz" variants keep their suffix.
std::string StripVersionSuffix(const char* name) {
  std::string s = name;
  size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    s.erase(v);
  }
  return s;
}

}  // namespace

StatusOr<std::unique_ptr<TraceCollector>> TraceCollector::Start(const HelloMessage& hello,
                                                                int memfd) {
  std::unique_ptr<TraceCollector> c(new TraceCollector());
  c->hello_ = hello;
  struct stat st;
  if (memfd < 0 || ::fstat(memfd, &st) != 0 || st.st_size <= 0) {
    if (memfd >= 0) ::close(memfd);
    return InvalidInput("the tracer sent no shared buffer");
  }
  // A region someone could still shrink would crash the collector (SIGBUS)
  // on its next read: only sealed memfds are taken (shm::CreateRegionFd).
  if (!shm::RegionFdSealed(memfd)) {
    ::close(memfd);
    return InvalidInput("the tracer's shared buffer is not a sealed memfd (version mismatch?)");
  }
  void* region = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE,
                        MAP_SHARED, memfd, 0);
  ::close(memfd);
  if (region == MAP_FAILED) return IoError(std::string("mmap: ") + std::strerror(errno));
  c->shm_ = static_cast<shm::Header*>(region);
  c->mapped_ = static_cast<uint64_t>(st.st_size);
  if (!shm::ReadGeometry(region, c->mapped_, &c->geometry_))
    return InvalidInput("the tracer's shared buffer has another layout (version mismatch)");
  c->pid_ = hello.pid > 0 ? hello.pid : c->shm_->pid;
  c->start_ticks_ = hello.start_time_ticks;
  c->zeroed_buffers_ = hello.zeroed_buffers;
  // Every 50 ms at most, whatever the tracer's flush interval: with the flood
  // skip in DrainRing, a kill of the job loses at most 0.25 s (docs/capture.md).
  // The budget on cores starved by other processes (kill9_loop beside busy
  // loops): committed rows up to ~0.06 s stale (the skip) + up to one interval
  // and one slice since the last commit; at 80 ms and a 0.1 s age limit the
  // two added up to 0.11-0.26 s (issue 36).
  c->commit_interval_ns_ = std::clamp<int64_t>(hello.commit_ms, 10, 50) * 1'000'000;
  c->wall_offset_ns_ = hello.wall_clock_offset_ns;

  std::string pattern = hello.pattern;
  const std::string& cwd = hello.cwd;
  if (pattern.empty() || pattern[0] != '/') pattern = cwd + "/" + pattern;
  PatternContext ctx;
  ctx.pid = c->pid_;
  ctx.host = hello.host;
  const std::map<std::string, std::string>* env = &c->hello_.env;
  ctx.getenv = [env](const std::string& var) -> const char* {
    auto it = env->find(var);
    return it == env->end() ? nullptr : it->second.c_str();
  };
  const int mode = hello.file_mode > 0 ? hello.file_mode : kTraceFileMode;
  ASSIGN_OR_RETURN(c->path_, CreateTraceFile(pattern, ctx, hello.overwrite_before_ns, mode));
  c->result_.path = c->path_;
  c->result_.pid = c->pid_;
  // Held until Finish(): `profile -f` of another run sees a live trace.
  c->lock_fd_ = ::open(c->path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (c->lock_fd_ >= 0) ::flock(c->lock_fd_, LOCK_EX | LOCK_NB);

  auto writer = TraceWriter::Create(c->path_, TraceWriter::Journal::kRollback);
  if (!writer.ok()) {
    ::unlink(c->path_.c_str());
    return writer.status();
  }
  c->writer_ = std::move(*writer);
  journal_guard::Opened(c->path_);  // kept whole if the launcher is killed
  TraceWriter& w = *c->writer_;
  w.SetMeta("source", "capture");
  w.SetMeta("tool_version", hello.tool_version);
  w.SetMeta("clock", hello.clock);
  w.SetMeta("wall_clock_offset_ns", std::to_string(hello.wall_clock_offset_ns));
  w.SetMeta("start_ns", std::to_string(hello.start_ns));
  w.SetMeta("pid", std::to_string(hello.pid));
  w.SetMeta("ppid", std::to_string(hello.ppid));
  w.SetMeta("host", hello.host);
  w.SetMeta("command_line", hello.command_line);
  w.SetMeta("trace_categories", hello.trace_categories);
  if (hello.host_mem_threshold_bytes) {
    w.SetMeta("host_mem_threshold_bytes", std::to_string(*hello.host_mem_threshold_bytes));
  }
  w.SetMeta("end_ns", std::to_string(hello.start_ns));
  for (const auto& [k, v] : hello.meta) w.SetMeta(k, v);
  w.SetMeta("collector", "separate process");
  TraceCollector* self = c.get();
  c->decoder_ = std::make_unique<ActivityDecoder>(
      c->writer_.get(), [self](ApiDomain d, uint32_t cbid) -> const char* {
        static thread_local std::string buf;
        auto fns = LoadCupti(self->hello_.inject_lib);
        if (!fns.ok() || !fns->callback_name) return nullptr;
        const char* name = nullptr;
        CUpti_CallbackDomain dom =
            d == ApiDomain::kDriver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
        if (fns->callback_name(dom, cbid, &name) != CUPTI_SUCCESS || !name) return nullptr;
        buf = StripVersionSuffix(name);
        return buf.c_str();
      });
  c->decoder_->set_sync_from_api(hello.sync_from_api);
  c->decoder_->set_string_fetch([self](const char* foreign) -> const char* {
    auto it = self->foreign_strings_.find(reinterpret_cast<uintptr_t>(foreign));
    return it == self->foreign_strings_.end() ? nullptr : it->second.c_str();
  });
  c->host_ = std::make_unique<HostRows>(c->writer_.get(), c->wall_offset_ns_,
                                        static_cast<int>(hello.sample_hz));
  c->tids_.insert(static_cast<uint32_t>(c->pid_));
  c->NameThreads();
  Status cs = w.Commit();
  if (!cs.ok()) return cs.WithContext(c->path_);
  c->last_commit_mono_ = MonotonicNs();
  return c;
}

TraceCollector::~TraceCollector() {
  Finish();
  if (shm_) ::munmap(shm_, mapped_);
}

int64_t TraceCollector::NowTraceNs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec - wall_offset_ns_;
}

void TraceCollector::DrainSlots() {
  // Which slots are ready, then the ring: the tracer put the strings a
  // buffer's records point to into the ring before marking the buffer ready.
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < geometry_.slot_count; ++i) {
    if (shm_->slots[i].state.load(std::memory_order_acquire) == shm::kSlotReady) ready.push_back(i);
  }
  if (ready.empty()) return;
  DrainRing();
  for (uint32_t i : ready) {
    shm::Slot& slot = shm_->slots[i];
    const uint64_t valid = std::min<uint64_t>(slot.valid.load(), geometry_.slot_bytes);
    uint8_t* buf = shm::SlotBase(shm_, geometry_, i);
    auto fns = LoadCupti(hello_.inject_lib);
    if (fns.ok()) {
      decoder_->DecodeBuffer(buf, valid, fns->next_record);
    } else {
      ++lost_buffers_;
      if (!cupti_warned_) {
        cupti_warned_ = true;
        LogWarn("%s: %s; CUDA activity is not written", path_.c_str(),
                fns.status().message().c_str());
      }
    }
    // Handed back zeroed, as promised to CUPTI (ZEROED_OUT_ACTIVITY_BUFFER):
    // what CUPTI wrote, with a margin for a record it began and did not count.
    if (zeroed_buffers_) {
      std::memset(buf, 0, std::min<uint64_t>(geometry_.slot_bytes, valid + (uint64_t{64} << 10)));
    }
    slot.state.store(shm::kSlotFree, std::memory_order_release);
  }
}

void TraceCollector::OnRecord(shm::Kind kind, const uint8_t* p, uint32_t n) {
  switch (kind) {
    case shm::Kind::kApi: {
      if (n < sizeof(ApiRecord)) return;
      ApiRecord r;
      std::memcpy(&r, p, sizeof(r));
      decoder_->AddApi(r);
      break;
    }
    case shm::Kind::kNvtxOpen: {
      if (n < sizeof(shm::NvtxOpen)) return;
      shm::NvtxOpen o;
      std::memcpy(&o, p, sizeof(o));
      if (sizeof(o) + uint64_t{o.domain_len} + o.name_len > n) return;
      const char* text = reinterpret_cast<const char*>(p + sizeof(o));
      tids_.insert(o.tid);
      max_ns_ = std::max(max_ns_, o.start_ns);
      // Before interning its names: a starved collector skipping a full ring
      // (~800,000 records) spent 0.6 s there before its first row (issue 36).
      if (skipping_) {
        ++nvtx_skipped_;  // behind a flood: dropped, as if the ring had been full
        break;
      }
      slice_nvtx_ns_ = o.start_ns;
      NvtxRecord r{};
      r.start_ns = r.end_ns = o.start_ns;
      r.tid = r.end_tid = o.tid;
      r.category = o.category;
      r.color = o.color;
      r.kind = static_cast<NvtxKind>(o.kind);
      r.depth = o.depth;
      r.domain = o.domain_len ? writer_->Intern(std::string_view(text, o.domain_len)) : kNoString;
      r.name = writer_->Intern(std::string_view(text + o.domain_len, o.name_len));
      if (r.kind == NvtxKind::kMark) {
        writer_->AddNvtx(r);
        ++nvtx_written_;
      } else {
        open_[o.id] = r;
      }
      break;
    }
    case shm::Kind::kNvtxClose: {
      if (n < sizeof(shm::NvtxClose)) return;
      shm::NvtxClose c;
      std::memcpy(&c, p, sizeof(c));
      auto it = open_.find(c.id);
      if (it == open_.end()) {
        ++nvtx_unmatched_;  // its open was dropped (ring full)
        return;
      }
      if (skipping_) {
        open_.erase(it);  // the whole range is dropped, counted with its open
        ++nvtx_skipped_;
        return;
      }
      slice_nvtx_ns_ = c.end_ns;
      NvtxRecord r = it->second;
      open_.erase(it);
      r.end_ns = c.end_ns;
      r.end_tid = c.end_tid;
      writer_->AddNvtx(r);
      ++nvtx_written_;
      max_ns_ = std::max(max_ns_, c.end_ns);
      break;
    }
    case shm::Kind::kThreadName: {
      if (n < sizeof(shm::ThreadName)) return;
      shm::ThreadName t;
      std::memcpy(&t, p, sizeof(t));
      if (sizeof(t) + uint64_t{t.len} > n) return;
      writer_->SetThreadName(t.tid, writer_->Intern(std::string_view(
                                        reinterpret_cast<const char*>(p + sizeof(t)), t.len)));
      named_.insert(t.tid);
      break;
    }
    case shm::Kind::kString: {
      if (n < sizeof(shm::ForeignString)) return;
      shm::ForeignString f;
      std::memcpy(&f, p, sizeof(f));
      if (sizeof(f) + uint64_t{f.len} > n) return;
      foreign_strings_[f.address].assign(reinterpret_cast<const char*>(p + sizeof(f)), f.len);
      break;
    }
    case shm::Kind::kPyCode:
      host_->AddPyCode(p, n);
      break;
    case shm::Kind::kPyStack:
      host_->AddPyStack(p, n);
      break;
    case shm::Kind::kOom: {
      if (n < sizeof(OomRecord)) return;
      OomRecord o;
      std::memcpy(&o, p, sizeof(o));
      decoder_->AddOom(o);
      urgent_ = true;
      break;
    }
    case shm::Kind::kUm: {
      if (n < sizeof(UmRecord)) return;
      UmRecord r;
      std::memcpy(&r, p, sizeof(r));
      if (!IsUmDriverTotal(r.kind) || r.end_ns < r.start_ns) return;  // only totals come this way
      writer_->AddUm(r);
      ++um_totals_;
      break;
    }
    case shm::Kind::kGpuMetric: {
      if (n < sizeof(shm::GpuMetric)) return;
      shm::GpuMetric g;
      std::memcpy(&g, p, sizeof(g));
      if (sizeof(g) + uint64_t{g.name_len} > n || g.end_ns < g.start_ns) return;
      GpuMetricRecord r{};
      r.start_ns = g.start_ns;
      r.end_ns = g.end_ns;
      r.value = g.value;
      r.device = g.device;
      r.metric = writer_->Intern(
          std::string_view(reinterpret_cast<const char*>(p + sizeof(g)), g.name_len));
      writer_->AddGpuMetric(r);
      ++gpu_metrics_;
      break;
    }
    case shm::Kind::kHostAlloc: {
      if (n < sizeof(HostAllocRecord)) return;
      HostAllocRecord r;
      std::memcpy(&r, p, sizeof(r));
      writer_->AddHostAlloc(r);
      ++host_allocs_;
      break;
    }
    default:
      break;
  }
}

bool TraceCollector::Behind() const {
  // The last slice's newest NVTX record is over 50 ms old. Only times on this
  // clock within the last hour: a record whose time is far off (a tracer with
  // another clock, a test's made-up times) is never judged.
  constexpr int64_t kBehindNs = 50'000'000, kHourNs = 3'600'000'000'000;
  const int64_t now = NowTraceNs();
  return slice_nvtx_ns_ != 0 && slice_nvtx_ns_ < now - kBehindNs && slice_nvtx_ns_ > now - kHourNs;
}

void TraceCollector::DrainRing() {
  bool corrupt = false;
  // In slices of 16 KB (~400 NVTX records, ~1 ms of writing; ~10-15 ms on
  // cores shared with other busy processes), committing between them when a
  // commit is due: under a flood that keeps the ring full, a drain can take
  // seconds, and the trace must still lose no more than a commit interval
  // when the job is killed.
  //
  // A flood (a program pushing NVTX ranges as fast as it can) keeps the ring
  // full: read in order, every record would be as old as the time the
  // collector takes to get through the ring (32 MB: ~2 s of writing; ~0.2 s
  // just skipping records, more on a starved core), and the rows it committed
  // that old when the job is killed. So when over 1 MB (at most half the
  // ring) is pending and the last slice's newest NVTX record is over 50 ms
  // old, the NVTX records of all but the newest 256 KB of what is pending
  // now are skipped (no row) and counted as dropped, as records the tracer
  // could not put in the full ring are, and those 256 KB (~3,000 ranges) are
  // written before judging again. Skipping by position, not by age: skipping
  // the records over 25 ms old, a collector that took longer than that to
  // get through the ring found every record stale and wrote nothing new for
  // seconds (issue 36). A normal program's backlog is a few kB: nothing of it
  // is skipped, even after a stall.
  const uint64_t behind_bytes = std::min<uint64_t>(geometry_.ring_bytes / 2, uint64_t{1} << 20);
  const uint64_t keep_bytes = behind_bytes / 4;
  constexpr uint64_t kSliceBytes = uint64_t{16} << 10, kSkipSliceBytes = uint64_t{1} << 20;
  for (int i = 0; i < 4096; ++i) {
    const uint64_t read = shm_->read.load(std::memory_order_relaxed);
    const uint64_t write = shm_->write.load(std::memory_order_acquire);
    if (!finished_ && read >= judge_from_ && write - read > behind_bytes && Behind()) {
      skip_to_ = write - keep_bytes;
      judge_from_ = write;
    }
    skipping_ = !finished_ && read < skip_to_;
    slice_nvtx_ns_ = 0;
    size_t n = shm::Consume(
        shm_, geometry_,
        [this](shm::Kind k, const uint8_t* p, uint32_t len) { OnRecord(k, p, len); },
        skipping_ ? std::min(skip_to_ - read, kSkipSliceBytes) : kSliceBytes, &corrupt);
    skipping_ = false;
    if (n == 0 || corrupt) break;
    if (!finished_ && MonotonicNs() - last_commit_mono_ >= commit_interval_ns_) Commit();
  }
  if (corrupt && result_.error.empty()) {
    result_.error = "the shared ring is corrupt; later records are lost";
    LogWarn("%s: %s", path_.c_str(), result_.error.c_str());
  }
}

void TraceCollector::NameThreads() {
  for (uint32_t tid : decoder_->threads()) tids_.insert(tid);
  for (uint32_t tid : tids_) {
    if (named_.count(tid) || proc_names_.count(tid)) continue;
    std::string comm = Trim(
        ReadSmallFile("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(tid) + "/comm"));
    if (!comm.empty()) proc_names_[tid] = comm;
  }
}

void TraceCollector::AttachSampler(std::unique_ptr<HostSampler> sampler) {
  sampler_ = std::move(sampler);
  if (!sampler_) return;
  // A tracer that keeps the recording flag: sample only inside its windows.
  if (shm_ && (shm_->flags.load() & shm::kFlagRecordingKnown)) {
    sampler_->SetGate(&shm_->flags, shm::kFlagRecording);
  }
  DrainSamples();
}

void TraceCollector::DrainSamples() {
  if (!sampler_) return;
  HostBatch b;
  sampler_->Drain(&b);
  for (const auto& [tid, name] : b.thread_names) {
    tids_.insert(tid);
    proc_names_[tid] = name;  // the sampler's latest /proc comm
  }
  for (const HostSample& s : b.samples) tids_.insert(s.tid);
  host_dropped_ += b.dropped;
  host_->AddBatch(&b);
}

void TraceCollector::Commit() {
  NameThreads();
  writer_->SetMeta("end_ns", std::to_string(std::max({NowTraceNs(), decoder_->max_ns(), max_ns_})));
  if (!writer_->Commit().ok() && result_.error.empty()) {
    result_.error = writer_->status().message();
    LogWarn("%s: %s; the trace holds what was committed", path_.c_str(), result_.error.c_str());
  }
  last_commit_mono_ = MonotonicNs();
  urgent_ = false;
}

void TraceCollector::Poll() {
  if (finished_ || !writer_->status().ok()) return;
  DrainSlots();
  DrainRing();
  DrainSamples();
  if (shm_->flags.load() & shm::kFlagUrgent) {
    shm_->flags.fetch_and(~shm::kFlagUrgent);
    urgent_ = true;
  }
  if (urgent_ || MonotonicNs() - last_commit_mono_ >= commit_interval_ns_) Commit();
}

void TraceCollector::Finish() {
  if (finished_ || !writer_) return;
  finished_ = true;
  if (sampler_) sampler_->Stop();
  DrainSlots();
  DrainRing();
  DrainSamples();
  const uint32_t flags = shm_->flags.load();
  result_.exited = (flags & shm::kFlagExited) != 0;
  const int64_t end = std::max({decoder_->max_ns(), max_ns_, host_->max_ns(), NowTraceNs()});
  host_->Finish(end);
  // Ranges still open when the process ended: written with their start and
  // the unclosed flag, so that e.g. an OOM row names the range it died in.
  std::vector<std::pair<uint64_t, NvtxRecord>> open(open_.begin(), open_.end());
  open_.clear();
  std::sort(open.begin(), open.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [id, r] : open) {
    r.end_ns = end;
    writer_->AddNvtx(r, /*unclosed=*/true);
  }
  TraceWriter& w = *writer_;
  const DecoderCounters& c = decoder_->counters();
  uint64_t dropped_total = 0;
  for (int k = static_cast<int>(shm::Kind::kApi); k < static_cast<int>(shm::Kind::kCount); ++k) {
    const uint64_t d =
        shm_->drops[k].load() + (k == static_cast<int>(shm::Kind::kNvtxOpen) ? nvtx_skipped_ : 0);
    dropped_total += d;
    const std::string name = shm::KindName(static_cast<shm::Kind>(k));
    w.SetStat("dropped_" + name, static_cast<int64_t>(d),
              name +
                  " records dropped because the shared ring was full (the collector was "
                  "behind)");
  }
  const uint64_t cupti_dropped = shm_->cupti_dropped_records.load();
  dropped_total += cupti_dropped;
  w.SetStat("cupti_dropped_records", static_cast<int64_t>(cupti_dropped),
            "activity records CUPTI dropped (no free buffer slot)");
  w.SetStat("cupti_refused_buffers", static_cast<int64_t>(shm_->cupti_refused_buffers.load()),
            "CUPTI buffer requests refused because every shared buffer slot was in use");
  w.SetStat("cupti_lost_buffers", static_cast<int64_t>(lost_buffers_),
            "completed CUPTI buffers the collector could not decode (CUPTI not loadable)");
  w.SetStat("cupti_unknown_records", static_cast<int64_t>(c.unknown_kind),
            "CUPTI records of kinds stepscope does not decode");
  w.SetStat("events_kernels", static_cast<int64_t>(c.kernels), "kernel records written");
  w.SetStat("events_memcpy", static_cast<int64_t>(c.memcpys), "memcpy records written");
  w.SetStat("events_memset", static_cast<int64_t>(c.memsets), "memset records written");
  w.SetStat("events_api", static_cast<int64_t>(c.api_calls), "API records written");
  w.SetStat("events_sync", static_cast<int64_t>(c.syncs), "synchronization records written");
  w.SetStat("events_memory", static_cast<int64_t>(c.memory), "memory records written");
  w.SetStat("events_nvtx", static_cast<int64_t>(nvtx_written_ + open.size()),
            "NVTX events written");
  w.SetStat("nvtx_unclosed", static_cast<int64_t>(open.size()),
            "NVTX ranges still open when the process ended (nvtx.unclosed = 1)");
  w.SetStat("nvtx_unmatched_ends", static_cast<int64_t>(nvtx_unmatched_),
            "NVTX range ends whose start was dropped");
  w.SetStat("events_oom", static_cast<int64_t>(c.ooms), "failed allocations recorded");
  if (hello_.trace_categories.find("host-mem") != std::string::npos) {
    w.SetStat("host_mem_dropped", static_cast<int64_t>(shm_->host_mem_dropped.load()),
              "host allocations the interposer dropped (per-thread ring full)");
  }
  if (sampler_) {
    w.SetMeta("sample_hz", std::to_string(sampler_->hz()));
    const std::string py = sampler_->python_status();
    w.SetMeta("python_stacks", py.empty() ? "unavailable: no Python runtime found" : py);
    w.SetStat("host_samples", static_cast<int64_t>(host_->samples()),
              "thread samples written (host sampler)");
    w.SetStat("host_samples_dropped", static_cast<int64_t>(host_dropped_),
              "thread samples lost because the collector was behind");
    w.SetStat("host_sample_ticks_missed", static_cast<int64_t>(sampler_->ticks_missed()),
              "sampling ticks skipped because the sampler was late");
    w.SetStat("host_sampler_cpu_ns", sampler_->own_cpu_ns(),
              "CPU time of the sampler thread (in the collector, not the program)");
    const std::string native = sampler_->native_status();
    w.SetMeta("native_stacks", native.empty() ? "unavailable: the process ended first" : native);
    if (sampler_->native_hz() > 0 && native.rfind("on", 0) == 0) {
      w.SetMeta("native_sample_period_ns", std::to_string(sampler_->native_period_ns()));
      w.SetStat("native_samples", static_cast<int64_t>(host_->native_samples()),
                "native stack samples written");
      w.SetStat("native_samples_lost", static_cast<int64_t>(sampler_->native_samples_lost()),
                "native stack samples the kernel dropped (a ring was full)");
    }
    dropped_total += host_dropped_;
  } else if (host_->api_stacks() > 0) {
    w.SetMeta("python_stacks", "on");
  }
  if (!hello_.python_stacks.empty()) {
    w.SetMeta("python_stacks_cuda_calls", hello_.python_stacks);
  }
  w.SetStat("host_api_callsites", static_cast<int64_t>(host_->api_stacks()),
            "CUDA calls recorded with the Python stack of their thread");
  result_.dropped = dropped_total;
  w.SetMeta("process_exit", result_.exited ? "exited" : "died");
  w.SetMeta("end_ns", std::to_string(end));

  // Thread names: NVTX names were written as they came; the rest from /proc.
  NameThreads();
  for (uint32_t tid : tids_) {
    if (named_.count(tid)) continue;
    auto it = proc_names_.find(tid);
    w.SetThreadName(
        tid, w.Intern(it != proc_names_.end() ? it->second : "thread " + std::to_string(tid)));
  }
  // Sync records carry no thread: take it from the API call they belong to.
  Status st = FillSyncThreads(w.db());
  if (!st.ok()) LogWarn("%s: %s", path_.c_str(), st.message().c_str());
  if (Status hs = host_->MarkCudaWaits(); !hs.ok()) {
    LogWarn("%s: %s", path_.c_str(), hs.message().c_str());
  }
  st = w.Finalize();
  if (!st.ok()) {
    if (result_.error.empty()) result_.error = st.message();
    LogWarn("%s: cannot finalize trace: %s", path_.c_str(), st.message().c_str());
  }
  // A process that initialized CUDA but did no GPU work and no NVTX (a
  // launcher such as torchrun's agent) leaves no trace behind, samples or
  // not; a host-only trace (a Python program without CUDA) is its samples.
  const uint64_t work = c.kernels + c.memcpys + c.memsets + c.api_calls + c.syncs + c.memory +
                        c.ooms + nvtx_written_ + open.size() + host_allocs_ + um_totals_ +
                        gpu_metrics_ + host_->api_stacks() +
                        (hello_.trace_categories == "host" ? host_->samples() : 0);
  result_.kept = work > 0 || !st.ok();
  if (!result_.kept) ::unlink(path_.c_str());
  writer_.reset();
  journal_guard::Closed(path_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

}  // namespace stepscope
