#include "capture/session.h"

#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include "capture/api_callbacks.h"
#include "capture/clock.h"
#include "capture/cupti_decoder.h"
#include "capture/host_mem/host_alloc_sink.h"
#include "capture/output_path.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/version.h"
#include "store/trace_writer.h"

namespace stepscope {

std::atomic<bool> Session::in_fork_child_{false};

namespace {

std::string ReadProcFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return s;
}

std::string CommandLine() {
  std::string raw = ReadProcFile("/proc/self/cmdline");
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  return Trim(raw);
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

const char* ApiNameFromCupti(ApiDomain domain, uint32_t cbid) {
  const char* name = nullptr;
  CUpti_CallbackDomain d =
      domain == ApiDomain::kDriver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(d, cbid, &name) != CUPTI_SUCCESS) return nullptr;
  return name;
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

Session::Session() = default;
Session::~Session() = default;

Session& Session::Get() {
  static Session* session = new Session();  // leaked on purpose: used by atexit
  return *session;
}

void Session::OnForkChild() {
  // The child must never write into the parent's trace (its writer thread does
  // not exist here and the SQLite connection belongs to the parent).
  in_fork_child_ = true;
}

bool Session::EnsureStarted() {
  if (in_fork_child_) return false;
  std::call_once(start_once_, [this] {
    bool ok = false;
    try {
      ok = Start();
    } catch (...) {
      ok = false;
      Disable("internal error while starting the tracer");
    }
    active_ = ok;
  });
  return active();
}

void Session::Disable(const std::string& why) {
  active_ = false;
  recording_ = false;
  if (!warned_.exchange(true)) {
    LogWarn("%s; the program runs untraced", why.c_str());
  }
}

int64_t Session::NowNs() const { return RealtimeNs() + clock_offset_ns_; }

bool Session::Start() {
  std::string warning;
  config_ = CaptureConfig::FromEnv(&warning);
  if (!warning.empty()) LogWarn("%s", warning.c_str());
  if (config_.cuda) {
    uint64_t cupti_now = 0;
    if (cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS) {
      int64_t off = static_cast<int64_t>(cupti_now) - RealtimeNs();
      // CUPTI uses CLOCK_REALTIME on Linux: the offset is rounding noise.
      clock_offset_ns_ = (off > 1'000'000 || off < -1'000'000) ? off : 0;
    }
  }
  start_ns_ = NowNs();

  PatternContext ctx;
  ctx.pid = static_cast<int>(getpid());
  ctx.host = HostName();
  ctx.getenv = [](const std::string& v) {
    return static_cast<const char*>(std::getenv(v.c_str()));
  };
  auto path = CreateTraceFile(config_.output_pattern, ctx, config_.overwrite_before_ns);
  if (!path.ok()) {
    Disable(path.status().message());
    return false;
  }
  path_ = *path;
  auto writer = TraceWriter::Create(path_);
  if (!writer.ok()) {
    Disable(writer.status().message());
    ::unlink(path_.c_str());
    return false;
  }
  writer_ = std::move(*writer);
  writer_->SetMeta("source", "capture");
  writer_->SetMeta("tool_version", kVersion);
  writer_->SetMeta("clock", clock_offset_ns_ == 0 ? "CLOCK_REALTIME" : "CUPTI");
  writer_->SetMeta("wall_clock_offset_ns", std::to_string(-clock_offset_ns_));
  writer_->SetMeta("start_ns", std::to_string(start_ns_));
  writer_->SetMeta("end_ns", std::to_string(start_ns_));
  writer_->SetMeta("pid", std::to_string(getpid()));
  writer_->SetMeta("ppid", std::to_string(getppid()));
  writer_->SetMeta("host", ctx.host);
  writer_->SetMeta("command_line", CommandLine());
  std::string cats;
  if (config_.cuda) cats += "cuda,";
  if (config_.nvtx) cats += "nvtx,";
  if (config_.memory) cats += "memory,";
  if (config_.host_mem) cats += "host-mem,";
  if (!cats.empty()) cats.pop_back();
  writer_->SetMeta("trace_categories", cats);
  struct {
    const char* key;
    const char* vars[4];
  } ranks[] = {
      {"rank", {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}},
      {"local_rank", {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", nullptr}},
      {"world_size", {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}}};
  for (const auto& r : ranks) {
    for (const char* var : r.vars) {
      const char* v = var ? std::getenv(var) : nullptr;
      if (v && *v) {
        writer_->SetMeta(r.key, v);
        break;
      }
    }
  }
  if (config_.host_mem) {
    auto sink = hostmem::HostAllocSink::Create(writer_->db());
    if (sink.ok() && (*sink)->available()) {
      host_sink_ = std::move(*sink);
      writer_->SetMeta("host_mem_threshold_bytes", std::to_string(host_sink_->threshold()));
    } else {
      LogWarn(
          "--trace host-mem: the malloc interposer (libstepscope_hostmem.so) is not loaded; "
          "host allocations are not recorded");
    }
  }
  if (!writer_->Commit().ok()) {
    Disable(path_ + ": " + writer_->status().message());
    return false;
  }
  {
    // Where this process's trace is, for code in the process that writes
    // files beside it (stepscope.torch reads it with getenv at run time).
    char cwd[4096];
    std::string full = path_;
    if (!path_.empty() && path_[0] != '/' && getcwd(cwd, sizeof(cwd)))
      full = std::string(cwd) + "/" + path_;
    setenv("STEPSCOPE_TRACE_FILE", full.c_str(), 1);
  }
  if (!config_.manifest_path.empty()) {
    // Tell the launcher where this process's trace is (also when it later crashes).
    int fd = ::open(config_.manifest_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
      char cwd[4096];
      std::string full = path_;
      if (!path_.empty() && path_[0] != '/' && getcwd(cwd, sizeof(cwd)))
        full = std::string(cwd) + "/" + path_;
      std::string line = full + "\n";
      ssize_t ignored = ::write(fd, line.data(), line.size());
      (void)ignored;
      ::close(fd);
    }
  }
  decoder_ = std::make_unique<ActivityDecoder>(writer_.get(),
                                               [](ApiDomain d, uint32_t cbid) -> const char* {
                                                 static thread_local std::string buf;
                                                 const char* n = ApiNameFromCupti(d, cbid);
                                                 if (!n) return nullptr;
                                                 buf = StripVersionSuffix(n);
                                                 return buf.c_str();
                                               });
  decoder_->set_sync_from_api(config_.sync_from_api);

  delay_pending_ = config_.delay_ns > 0;
  recording_ = !delay_pending_ && config_.range == CaptureConfig::Range::kNone;
  recording_since_ns_ = start_ns_;

  pthread_atfork(nullptr, nullptr, &Session::OnForkChild);
  std::atexit([] { Session::Get().Shutdown(); });

  // The writer thread blocks every signal so that signals meant for the
  // program are never delivered to it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread(&Session::WriterLoop, this);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    Disable("cannot start the writer thread");
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  LogVerbose("tracing pid %d into %s", static_cast<int>(getpid()), path_.c_str());
  return true;
}

void Session::SetRecording(bool on) {
  if (!active()) return;
  bool was = recording_.exchange(on);
  if (was == on) return;
  if (on) recording_since_ns_ = NowNs();
  if (activity_toggle_) activity_toggle_(on);
}

void Session::AddNvtx(PendingNvtx&& e) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stop_) return;
  nvtx_.push_back(std::move(e));
}

void Session::AddOom(const OomRecord& o) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_) return;
    ooms_.push_back(o);
    urgent_commit_ = true;
  }
  cv_.notify_one();
}

void Session::SetThreadName(uint32_t tid, const std::string& name) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stop_) return;
  thread_names_.emplace_back(tid, name);
}

uint8_t* Session::AllocateBuffer(size_t* size) {
  *size = 0;
  if (!active()) return nullptr;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!free_buffers_.empty()) {
      uint8_t* b = free_buffers_.back();
      free_buffers_.pop_back();
      *size = config_.buffer_bytes;
      return b;
    }
  }
  if (buffer_memory_.load() + config_.buffer_bytes > config_.max_buffer_memory) {
    // Writer is behind: let CUPTI drop (and count) records rather than grow
    // without bound inside someone else's training job.
    ++refused_buffers_;
    return nullptr;
  }
  // calloc: zeroed, as promised to CUPTI (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER).
  void* p = config_.zeroed_buffers ? std::calloc(1, config_.buffer_bytes)
                                   : std::aligned_alloc(8, config_.buffer_bytes);
  if (!p) {
    ++refused_buffers_;
    return nullptr;
  }
  buffer_memory_ += config_.buffer_bytes;
  *size = config_.buffer_bytes;
  return static_cast<uint8_t*>(p);
}

void Session::OnBufferCompleted(uint8_t* buffer, size_t valid, uint64_t dropped) {
  dropped_records_ += dropped;
  if (buffer == nullptr) return;
  bool notify = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_ || valid == 0 || in_fork_child_) {
      if (valid > 0 && config_.zeroed_buffers) std::memset(buffer, 0, config_.buffer_bytes);
      free_buffers_.push_back(buffer);
      return;
    }
    buffers_.emplace_back(buffer, valid);
    notify = buffers_.size() >= 4;
  }
  if (notify) cv_.notify_one();
}

void Session::WriterLoop() {
  pthread_setname_np(pthread_self(), "stepscope-wr");
  int64_t last_commit = MonotonicNs();
  int64_t last_flush = last_commit;
  const int64_t flush_interval = config_.commit_interval_ns / 2;
  while (true) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait_for(lk, std::chrono::milliseconds(100),
                   [&] { return stop_ || urgent_commit_ || buffers_.size() >= 4; });
      if (stop_) break;
    }
    const int64_t now = NowNs();
    if (delay_pending_ && now - start_ns_ >= config_.delay_ns) {
      delay_pending_ = false;
      if (config_.range == CaptureConfig::Range::kNone) SetRecording(true);
    }
    if (config_.duration_ns > 0 && recording_ && now - recording_since_ns_ >= config_.duration_ns) {
      SetRecording(false);
      config_.duration_ns = 0;  // one window only
      config_.range = CaptureConfig::Range::kNone;
    }
    const int64_t mono = MonotonicNs();
    if (cupti_active_ && !config_.diag_no_flush && mono - last_flush >= flush_interval) {
      // Delivers every buffer whose records are all complete (not forced:
      // kernels still running stay in CUPTI until they finish).
      cuptiActivityFlushAll(0);
      last_flush = mono;
    }
    bool urgent = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      urgent = urgent_commit_;
      urgent_commit_ = false;
    }
    if (urgent && cupti_active_) cuptiActivityFlushAll(0);
    Drain();
    if (urgent || mono - last_commit >= config_.commit_interval_ns) {
      if (!CommitNow().ok()) {
        Disable(path_ + ": " + writer_->status().message());
        break;
      }
      last_commit = mono;
    }
  }
}

Status Session::CommitNow() {
  if (host_sink_) host_sink_->Flush();
  writer_->SetMeta("end_ns", std::to_string(NowNs()));
  return writer_->Commit();
}

void Session::Drain() {
  std::vector<std::pair<uint8_t*, size_t>> buffers;
  std::vector<PendingNvtx> nvtx;
  std::vector<std::pair<uint32_t, std::string>> names;
  std::vector<OomRecord> ooms;
  {
    std::lock_guard<std::mutex> lk(mu_);
    buffers.swap(buffers_);
    nvtx.swap(nvtx_);
    names.swap(thread_names_);
    ooms.swap(ooms_);
  }
  for (const OomRecord& o : ooms) decoder_->AddOom(o);
  for (auto& [buf, valid] : buffers) {
    decoder_->DecodeBuffer(buf, valid);
    // Cleared here, on the writer thread, so CUPTI need not clear it on the
    // application's thread when it takes the buffer again.
    if (config_.zeroed_buffers) std::memset(buf, 0, config_.buffer_bytes);
    std::lock_guard<std::mutex> lk(mu_);
    free_buffers_.push_back(buf);
  }
  std::vector<ApiRecord> apis;
  DrainApiRecords(&apis);
  for (const ApiRecord& a : apis) decoder_->AddApi(a);
  for (const PendingNvtx& e : nvtx) WriteNvtx(e);
  nvtx_events_ += nvtx.size();
  for (const auto& [tid, name] : names) writer_->SetThreadName(tid, writer_->Intern(name));
}

void Session::WriteNvtx(const PendingNvtx& e) {
  NvtxRecord r{};
  r.start_ns = e.start_ns;
  r.end_ns = e.end_ns;
  r.tid = e.tid;
  r.end_tid = e.end_tid;
  r.category = e.category;
  r.color = e.color;
  r.kind = e.kind;
  r.depth = e.depth;
  r.domain = e.domain.empty() ? kNoString : writer_->Intern(e.domain);
  r.name = writer_->Intern(e.name);
  writer_->AddNvtx(r);
  if (nvtx_threads_.empty() || nvtx_threads_.back() != e.tid) nvtx_threads_.push_back(e.tid);
  if (e.end_ns > max_nvtx_ns_) max_nvtx_ns_ = e.end_ns;
}

void Session::Shutdown() {
  if (in_fork_child_ || !active() || shut_down_.exchange(true)) return;
  recording_ = false;
  if (cupti_active_) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (activity_toggle_) activity_toggle_(false);
  try {
    Drain();
    FinalizeTrace();
  } catch (...) {
    LogWarn("internal error while finalizing %s; the trace holds what was committed",
            path_.c_str());
  }
  active_ = false;
}

void Session::FinalizeTrace() {
  const DecoderCounters& c = decoder_->counters();
  writer_->SetStat("cupti_dropped_records", static_cast<int64_t>(dropped_records_.load()),
                   "activity records CUPTI dropped (buffers full or refused)");
  writer_->SetStat("cupti_refused_buffers", static_cast<int64_t>(refused_buffers_.load()),
                   "CUPTI buffer requests refused because the writer was behind (memory cap)");
  writer_->SetStat("cupti_unknown_records", static_cast<int64_t>(c.unknown_kind),
                   "CUPTI records of kinds stepscope does not decode");
  writer_->SetStat("events_kernels", static_cast<int64_t>(c.kernels), "kernel records written");
  writer_->SetStat("events_memcpy", static_cast<int64_t>(c.memcpys), "memcpy records written");
  writer_->SetStat("events_memset", static_cast<int64_t>(c.memsets), "memset records written");
  writer_->SetStat("events_api", static_cast<int64_t>(c.api_calls), "API records written");
  writer_->SetStat("events_sync", static_cast<int64_t>(c.syncs), "synchronization records written");
  writer_->SetStat("events_memory", static_cast<int64_t>(c.memory), "memory records written");
  writer_->SetStat("events_nvtx", static_cast<int64_t>(nvtx_events_.load()), "NVTX events written");
  writer_->SetStat("events_oom", static_cast<int64_t>(decoder_->counters().ooms),
                   "failed allocations recorded");
  if (host_sink_) {
    host_sink_->Flush();
    writer_->SetStat("host_mem_dropped", static_cast<int64_t>(host_sink_->dropped()),
                     "host allocations the interposer dropped (per-thread ring full)");
  }
  int64_t end = std::max<int64_t>({NowNs(), decoder_->max_ns(), max_nvtx_ns_});
  writer_->SetMeta("end_ns", std::to_string(end));

  // Thread names: NVTX names were written as they came; fill the rest from /proc.
  std::unordered_set<uint32_t> tids(decoder_->threads().begin(), decoder_->threads().end());
  tids.insert(nvtx_threads_.begin(), nvtx_threads_.end());
  tids.insert(static_cast<uint32_t>(getpid()));
  {
    auto named = Prepare(writer_->db(), "SELECT tid FROM threads");
    if (named.ok()) {
      while (named->Step()) tids.erase(static_cast<uint32_t>(named->Int(0)));
    }
  }
  for (uint32_t tid : tids) {
    std::string comm = Trim(ReadProcFile("/proc/self/task/" + std::to_string(tid) + "/comm"));
    writer_->SetThreadName(tid,
                           writer_->Intern(comm.empty() ? "thread " + std::to_string(tid) : comm));
  }
  // Sync records carry no thread: take it from the API call they belong to.
  Status st = Exec(writer_->db(),
                   "CREATE INDEX IF NOT EXISTS api_correlation ON api(correlation);"
                   "UPDATE sync SET tid = COALESCE((SELECT tid FROM api WHERE api.correlation = "
                   "sync.correlation LIMIT 1), 0) WHERE tid = 0;");
  if (!st.ok()) LogWarn("%s: %s", path_.c_str(), st.message().c_str());
  st = writer_->Finalize();
  if (!st.ok()) {
    LogWarn("%s: cannot finalize trace: %s", path_.c_str(), st.message().c_str());
    return;
  }
  // A process that initialized CUDA but did no GPU work and no NVTX (a
  // launcher such as torchrun's agent) leaves no trace behind.
  const uint64_t work = c.kernels + c.memcpys + c.memsets + c.api_calls + c.syncs + c.memory +
                        c.ooms + nvtx_events_.load();
  if (work == 0) {
    ::unlink(path_.c_str());
    LogVerbose("nothing recorded: removed %s", path_.c_str());
  }
  LogVerbose("trace finalized: %s", path_.c_str());
}

}  // namespace stepscope
