#include "capture/session.h"

#include "capture/cupti_setup.h"
#include "capture/pm_sampling.h"
#include "capture/python_callstack.h"

#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unordered_set>
#include <vector>

#include "capture/clock.h"
#include "capture/cupti_records.h"
#include "capture/handshake.h"
#include "capture/host_mem/host_mem.h"
#include "capture/output_path.h"
#include "common/env_contract.h"
#include "common/log.h"
#include "common/proc_stat.h"
#include "common/spawn_attr.h"
#include "common/strings.h"
#include "common/version.h"

extern char** environ;

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

std::string Cwd() {
  char cwd[4096];
  return getcwd(cwd, sizeof(cwd)) ? cwd : ".";
}

// The path of this library (for the collector: it finds CUPTI through it).
std::string OwnLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ReadProcFile), &info) && info.dli_fname)
    return info.dli_fname;
  return "";
}

// Starts `stepscope _collect` for this process (no launcher around it):
// detached into its own session so that it outlives the program and is not in
// its process group; it double-forks, so the program never sees it as a child.
// Returns our end of a connected socket pair.
StatusOr<int> StartOwnCollector(const std::string& lib) {
  std::string bin;
  if (const char* b = std::getenv(kEnvBin); b && *b) {
    bin = b;
  } else {
    std::string dir = lib.substr(0, lib.rfind('/'));
    bin = dir + "/../bin/stepscope";
  }
  if (::access(bin.c_str(), X_OK) != 0)
    return NotFound("no collector: " + bin + " not found (set STEPSCOPE_BIN)");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return IoError(std::string("socketpair: ") + std::strerror(errno));
  int child_end = sv[1];
  if (child_end == 3) {  // dup2(3, 3) would keep FD_CLOEXEC set
    child_end = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    ::close(sv[1]);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, child_end, 3);
  posix_spawnattr_t attr;
  InitHelperSpawnAttr(&attr);
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (StartsWith(kv, "LD_PRELOAD=") || StartsWith(kv, "CUDA_INJECTION64_PATH=") ||
        StartsWith(kv, "NVTX_INJECTION64_PATH=")) {
      continue;
    }
    env_store.push_back(kv);
  }
  std::vector<char*> envp;
  for (std::string& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string a0 = bin, a1 = "_collect", a2 = "--inject-lib", a3 = lib;
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, bin.c_str(), &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(child_end);
  if (rc != 0) {
    ::close(sv[0]);
    return IoError("cannot start the collector " + bin + ": " + std::strerror(rc));
  }
  // The intermediate process exits as soon as it forked the collector.
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return sv[0];
}

}  // namespace

Session::Session() = default;
Session::~Session() = default;

Session& Session::Get() {
  static Session* session = new Session();  // leaked on purpose: used by atexit
  return *session;
}

int64_t Session::RealtimeNsForSession() { return RealtimeNs(); }

void Session::OnForkChild() {
  // The child never writes into the parent's region (its CUPTI state and timer
  // thread do not exist here); it runs untraced.
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
  if (shm_) shm_->flags.fetch_or(shm::kFlagDisabled);
  if (!warned_.exchange(true)) {
    LogWarn("%s; the program runs untraced", why.c_str());
  }
}

bool Session::Start() {
  std::string warning;
  config_ = CaptureConfig::FromEnv(&warning);
  if (!config_.diag_cycle.empty()) diag_base_ = config_;
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

  shm::Header layout{};
  const uint32_t slots =
      config_.cuda ? static_cast<uint32_t>(config_.max_buffer_memory / config_.buffer_bytes) : 0;
  const uint64_t total = shm::Layout(slots, config_.buffer_bytes, config_.ring_bytes, &layout);
  const int memfd = shm::CreateRegionFd("stepscope", total);
  if (memfd < 0) {
    Disable(std::string("cannot create the shared trace buffer: ") + std::strerror(errno));
    return false;
  }
  void* region = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (region == MAP_FAILED) {
    Disable(std::string("cannot map the shared trace buffer: ") + std::strerror(errno));
    ::close(memfd);
    return false;
  }
  shm::InitHeader(region, layout, static_cast<int32_t>(getpid()));
  geometry_ = shm::GeometryOf(layout);
  shm_ = static_cast<shm::Header*>(region);
  const bool ok = Handshake(memfd);
  ::close(memfd);  // the mapping stays; no fd of ours is left in the program
  if (!ok) {
    ::munmap(region, total);
    shm_ = nullptr;
    return false;
  }

  const bool delay_pending = config_.delay_ns > 0;
  recording_ = !delay_pending && config_.range == CaptureConfig::Range::kNone;
  shm_->flags.fetch_or(shm::kFlagRecordingKnown |
                       (recording_.load() && !config_.diag_off.sampling ? shm::kFlagRecording : 0));
  recording_since_ns_ = start_ns_;
  if (config_.host_mem) {
    host_drain_ = dlsym(RTLD_DEFAULT, "stepscope_hostmem_drain");
    if (!host_drain_) {
      LogWarn(
          "--trace host-mem: the malloc interposer (libstepscope_hostmem.so) is not loaded; "
          "host allocations are not recorded");
    }
  }

  pthread_atfork(nullptr, nullptr, &Session::OnForkChild);
  std::atexit([] {
    try {
      Session::Get().Shutdown();
    } catch (...) {
    }
  });

  // The timer thread blocks every signal so that signals meant for the
  // program are never delivered to it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread(&Session::TimerLoop, this);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    Disable("cannot start the tracer's timer thread");
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  LogVerbose("tracing pid %d", static_cast<int>(getpid()));
  return true;
}

bool Session::Handshake(int memfd) {
  HelloMessage h;
  h.pid = getpid();
  h.ppid = getppid();
  h.host = HostName();
  h.cwd = Cwd();
  h.pattern = config_.output_pattern;
  h.overwrite_before_ns = config_.overwrite_before_ns;
  h.command_line = CommandLine().substr(0, 16384);  // the hello is at most 64 KiB
  h.clock = clock_offset_ns_ == 0 ? "CLOCK_REALTIME" : "CUPTI";
  h.wall_clock_offset_ns = -clock_offset_ns_;
  h.start_ns = start_ns_;
  h.tool_version = kVersion;
  h.sync_from_api = config_.sync_from_api;
  h.zeroed_buffers = config_.zeroed_buffers;
  h.commit_ms = config_.commit_interval_ns / 1'000'000;
  ProcStat stat;
  (void)ReadProcStat(getpid(), &stat);
  h.start_time_ticks = stat.start_time_ticks;
  h.trace_categories = config_.TraceCategories(/*recorded_by_tracer_only=*/true);
  h.sample_hz = config_.sample_hz;
  h.python_stacks = config_.PythonStacksText();
  if (config_.host_mem) {
    if (auto threshold =
            reinterpret_cast<uint64_t (*)()>(dlsym(RTLD_DEFAULT, "stepscope_hostmem_threshold"))) {
      h.host_mem_threshold_bytes = threshold();
    }
  }
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
        h.meta[r.key] = v;
        break;
      }
    }
  }
  for (const std::string& var : PatternVariables(config_.output_pattern)) {
    if (const char* v = std::getenv(var.c_str())) h.env[var] = std::string(v).substr(0, 1024);
  }
  const std::string lib = OwnLibraryPath();

  StatusOr<int> sock = IoError("");
  if (!config_.collector.empty()) {
    h.token = config_.collector_token;
    // Unreachable (e.g. a rank on another node inherited the launcher's
    // socket name through srun): collect for ourselves instead.
    sock = ConnectCollector(config_.collector);
    if (!sock.ok()) {
      LogVerbose("%s; starting a collector for this process", sock.status().message().c_str());
      h.token.clear();
      sock = StartOwnCollector(lib);
    } else if (auto peer = PeerCredentials(*sock); !peer.ok() || !TrustedUid(peer->uid)) {
      // Our memory goes only to a collector of our own user (or root).
      ::close(*sock);
      Disable("the collector socket " + config_.collector + " belongs to another user");
      return false;
    }
  } else {
    sock = StartOwnCollector(lib);
  }
  if (!sock.ok()) {
    Disable(sock.status().message());
    return false;
  }
  std::string answer;
  int collector_pid = 0;
  Status st = SendHello(*sock, memfd, h.Encode(), 20000, &answer, &collector_pid);
  ::close(*sock);
  if (!st.ok()) {
    Disable(st.message());
    return false;
  }
  if (!StartsWith(answer, "ok ")) {
    Disable(StartsWith(answer, "error ") ? answer.substr(6) : "the collector refused: " + answer);
    return false;
  }
  // The collector samples our threads: under Yama (ptrace_scope 1) only an
  // ancestor may read our memory and /proc/self/task/N/syscall, and a
  // self-started collector is not one. Allow it (it alone).
  if (collector_pid > 0 && collector_pid != getppid()) {
    (void)::prctl(PR_SET_PTRACER, static_cast<unsigned long>(collector_pid), 0, 0, 0);
  }
  // Where this process's trace is, for code in the process that writes files
  // beside it (stepscope.torch reads it with getenv at run time).
  setenv(kEnvTraceFile, answer.substr(3).c_str(), 1);
  return true;
}

void Session::SetRecording(bool on) {
  if (!active()) return;
  if (recording_.load() == on) return;
  // STEPSCOPE_DIAG_CYCLE (diagnostics): this window's parts, set before the
  // window is published (threads read them only while recording) and while
  // every API callback is still off.
  if (on && !config_.diag_cycle.empty()) config_.ApplyDiagCycle(diag_base_, windows_++);
  bool was = recording_.exchange(on);
  if (was == on) return;
  if (on) recording_since_ns_ = NowNs();
  // The collector samples the host only while this flag is up.
  if (on && !config_.diag_off.sampling) {
    shm_->flags.fetch_or(shm::kFlagRecording);
  } else {
    shm_->flags.fetch_and(~shm::kFlagRecording);
  }
  if (auto toggle = activity_toggle_.load()) toggle(on);
}

void Session::OpenWindow() {
  AttachCuptiForWindow();  // a failure turned the session off, with one warning
  SetRecording(true);
}

void Session::CloseWindow() {
  SetRecording(false);
  DetachCuptiAfterWindow();
}

bool Session::PutPythonStack(uint32_t correlation, uint32_t tid) {
  if (!active()) return false;
  return EmitPythonStack(shm_, correlation, tid);
}

bool Session::PutApi(const ApiRecord& r) {
  if (!active()) return false;
  return shm::Put(shm_, shm::Kind::kApi, &r, sizeof(r));
}

uint64_t Session::NvtxOpen(int64_t start_ns, uint32_t tid, uint32_t category, uint32_t color,
                           NvtxKind kind, uint8_t depth, std::string_view domain,
                           std::string_view name) {
  if (!active()) return 0;
  domain = domain.substr(0, std::min<size_t>(domain.size(), 1024));
  name = name.substr(0, std::min<size_t>(name.size(), shm::kMaxString));
  const uint32_t bytes = static_cast<uint32_t>(sizeof(shm::NvtxOpen) + domain.size() + name.size());
  uint8_t* p = shm::Reserve(shm_, shm::Kind::kNvtxOpen, bytes);
  if (!p) return 0;
  shm::NvtxOpen o{};
  o.id = next_nvtx_id_.fetch_add(1, std::memory_order_relaxed);
  o.start_ns = start_ns;
  o.tid = tid;
  o.category = category;
  o.color = color;
  o.kind = static_cast<uint8_t>(kind);
  o.depth = depth;
  o.domain_len = static_cast<uint16_t>(domain.size());
  o.name_len = static_cast<uint32_t>(name.size());
  std::memcpy(p, &o, sizeof(o));
  if (!domain.empty()) std::memcpy(p + sizeof(o), domain.data(), domain.size());
  if (!name.empty()) std::memcpy(p + sizeof(o) + domain.size(), name.data(), name.size());
  shm::Publish(p, shm::Kind::kNvtxOpen, bytes);
  return o.id;
}

void Session::NvtxClose(uint64_t id, int64_t end_ns, uint32_t end_tid) {
  if (!active() || id == 0) return;
  shm::NvtxClose c{id, end_ns, end_tid, 0};
  shm::Put(shm_, shm::Kind::kNvtxClose, &c, sizeof(c));
}

void Session::SetThreadName(uint32_t tid, std::string_view name) {
  if (!active()) return;
  name = name.substr(0, std::min<size_t>(name.size(), 1024));
  const uint32_t bytes = static_cast<uint32_t>(sizeof(shm::ThreadName) + name.size());
  uint8_t* p = shm::Reserve(shm_, shm::Kind::kThreadName, bytes);
  if (!p) return;
  shm::ThreadName t{tid, static_cast<uint32_t>(name.size())};
  std::memcpy(p, &t, sizeof(t));
  if (!name.empty()) std::memcpy(p + sizeof(t), name.data(), name.size());
  shm::Publish(p, shm::Kind::kThreadName, bytes);
}

void Session::AddOom(const OomRecord& o) {
  if (!active()) return;
  shm::Put(shm_, shm::Kind::kOom, &o, sizeof(o));
  shm_->flags.fetch_or(shm::kFlagUrgent);
  {
    std::lock_guard<std::mutex> lk(mu_);
    urgent_ = true;
  }
  cv_.notify_one();
}

void Session::WakeTimer() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    urgent_ = true;
  }
  cv_.notify_one();
}

bool Session::PutGpuMetric(const pm::MetricValue& v) {
  if (!active()) return false;
  const std::string_view name = v.metric.substr(0, std::min<size_t>(v.metric.size(), 1024));
  const uint32_t bytes = static_cast<uint32_t>(sizeof(shm::GpuMetric) + name.size());
  uint8_t* p = shm::Reserve(shm_, shm::Kind::kGpuMetric, bytes);
  if (!p) return false;
  shm::GpuMetric m{v.start_ns, v.end_ns, v.value, v.device, static_cast<uint32_t>(name.size())};
  std::memcpy(p, &m, sizeof(m));
  std::memcpy(p + sizeof(m), name.data(), name.size());
  shm::Publish(p, shm::Kind::kGpuMetric, bytes);
  return true;
}

uint8_t* Session::AllocateBuffer(size_t* size) {
  *size = 0;
  if (!active() || !shm_) return nullptr;
  static std::atomic<uint32_t> hint{0};
  const uint32_t n = geometry_.slot_count;
  const uint32_t first = hint.load(std::memory_order_relaxed);
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t i = (first + k) % n;
    uint32_t expect = shm::kSlotFree;
    if (shm_->slots[i].state.compare_exchange_strong(expect, shm::kSlotCupti,
                                                     std::memory_order_acq_rel)) {
      hint.store(i + 1, std::memory_order_relaxed);
      *size = geometry_.slot_bytes;
      return shm::SlotBase(shm_, geometry_, i);
    }
  }
  // The collector is behind: CUPTI drops (and counts) records rather than the
  // tracer growing without bound inside someone else's training job.
  shm_->cupti_refused_buffers.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void Session::OnBufferCompleted(uint8_t* buffer, size_t valid, uint64_t dropped) {
  if (!shm_) return;
  if (dropped) shm_->cupti_dropped_records.fetch_add(dropped, std::memory_order_relaxed);
  if (buffer == nullptr) return;
  uint8_t* base = shm::SlotBase(shm_, geometry_, 0);
  if (buffer < base || geometry_.slot_bytes == 0) return;
  const uint64_t i = static_cast<uint64_t>(buffer - base) / geometry_.slot_bytes;
  if (i >= geometry_.slot_count) return;
  if (valid == 0 || in_fork_child_) {
    if (valid > 0 && config_.zeroed_buffers) std::memset(buffer, 0, valid);
    shm_->slots[i].state.store(shm::kSlotFree, std::memory_order_release);
    return;
  }
  ScanBuffer(buffer, valid);
  shm_->slots[i].valid.store(valid, std::memory_order_relaxed);
  shm_->slots[i].state.store(shm::kSlotReady, std::memory_order_release);
}

namespace {

// The correlation id field of the record kinds the collector joins on
// (cupti_decoder.cc), nullptr for the others.
uint32_t* CorrelationField(CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return &reinterpret_cast<cupti::Kernel*>(rec)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return &reinterpret_cast<cupti::Memcpy*>(rec)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return &reinterpret_cast<cupti::MemcpyPtoP*>(rec)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return &reinterpret_cast<cupti::Memset*>(rec)->correlationId;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return &reinterpret_cast<cupti::Api*>(rec)->correlationId;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return &reinterpret_cast<cupti::Sync*>(rec)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return &reinterpret_cast<cupti::Memory*>(rec)->correlationId;
    default:
      return nullptr;
  }
}

}  // namespace

void Session::ScanBuffer(uint8_t* buffer, size_t valid) {
  // Once per buffer and name: a pointer CUPTI reuses for another name later
  // (a module unloaded) cannot mislabel a kernel.
  std::unordered_set<const char*> sent;
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (uint32_t* corr = CorrelationField(rec); corr && *corr != 0) *corr = MapCorrelation(*corr);
    const char* str = nullptr;
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      str = reinterpret_cast<const cupti::Kernel*>(rec)->name;
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_DEVICE) {
      str = reinterpret_cast<const cupti::Device*>(rec)->name;
    }
    if (!str || !sent.insert(str).second) continue;
    const uint32_t len = static_cast<uint32_t>(strnlen(str, shm::kMaxForeignString));
    const uint32_t bytes = static_cast<uint32_t>(sizeof(shm::ForeignString)) + len;
    uint8_t* p = shm::Reserve(shm_, shm::Kind::kString, bytes);
    if (!p) continue;
    shm::ForeignString f{reinterpret_cast<uintptr_t>(str), len, 0};
    std::memcpy(p, &f, sizeof(f));
    std::memcpy(p + sizeof(f), str, len);
    shm::Publish(p, shm::Kind::kString, bytes);
  }
}

void Session::PumpHostMem() {
  if (!host_drain_ || !active()) return;
  auto drain = reinterpret_cast<size_t (*)(hostmem::DrainFn, void*)>(host_drain_);
  drain(
      [](const hostmem::HostAllocRecord* records, size_t count, void* self) {
        auto* s = static_cast<Session*>(self);
        for (size_t i = 0; i < count; ++i)
          shm::Put(s->shm_, shm::Kind::kHostAlloc, &records[i], sizeof(records[i]));
      },
      this);
  static auto dropped =
      reinterpret_cast<uint64_t (*)()>(dlsym(RTLD_DEFAULT, "stepscope_hostmem_dropped"));
  if (dropped) shm_->host_mem_dropped.store(dropped(), std::memory_order_relaxed);
}

void Session::StartUvmCounters() {
  if (!active() || !config_.um_driver_totals) return;
  try {
    std::call_once(uvm_once_, [this] {
      std::string why;
      if (!uvm_.Open(&why)) {
        LogVerbose("the driver's unified-memory totals are off: %s", why.c_str());
        return;
      }
      uvm_last_ = uvm_.Read();
      uvm_last_ns_ = NowNs();
      // Publishes uvm_ and uvm_last_*; the timer thread sees it at its next
      // wake-up (<= 50 ms; the first interval is that long) and polls every 1 ms.
      uvm_on_.store(true, std::memory_order_release);
      LogVerbose("the driver's unified-memory totals are on");
    });
  } catch (...) {
    // std::string / call_once allocation: the totals stay off, the program runs on.
  }
}

bool Session::PumpUvmTotals(int64_t now_ns, bool emit) {
  const UvmTotals t = uvm_.Read();
  if (t == uvm_last_) {
    uvm_last_ns_ = now_ns;  // a later change happened after this poll
    return false;
  }
  if (emit) {
    auto put = [&](UmCounterKind kind, uint64_t before, uint64_t after) {
      if (after <= before) return;
      UmRecord r{};
      r.start_ns = uvm_last_ns_;
      r.end_ns = std::max(now_ns, uvm_last_ns_);
      r.kind = kind;
      r.value = after - before;
      shm::Put(shm_, shm::Kind::kUm, &r, sizeof(r));
    };
    put(UmCounterKind::kDriverHtoD, uvm_last_.bytes_htod, t.bytes_htod);
    put(UmCounterKind::kDriverDtoH, uvm_last_.bytes_dtoh, t.bytes_dtoh);
    put(UmCounterKind::kDriverCpuFaults, uvm_last_.cpu_page_faults, t.cpu_page_faults);
    put(UmCounterKind::kDriverGpuFaults, uvm_last_.gpu_page_faults, t.gpu_page_faults);
  }
  uvm_last_ = t;
  uvm_last_ns_ = now_ns;
  return true;
}

void Session::TimerLoop() {
  pthread_setname_np(pthread_self(), "stepscope-tm");
  try {
    bool delay_pending = config_.delay_ns > 0;
    int64_t last_flush = MonotonicNs();
    const int64_t flush_interval = config_.commit_interval_ns;
    while (true) {
      bool urgent = false;
      // With unified memory in use: every millisecond (the driver's totals,
      // and CUPTI's records drained while migrations run).
      const bool uvm = uvm_on_.load(std::memory_order_acquire);
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait_for(lk, std::chrono::milliseconds(uvm ? 1 : 50), [&] { return stop_ || urgent_; });
        if (stop_) break;
        urgent = urgent_;
        urgent_ = false;
      }
      const int64_t now = NowNs();
      if (delay_pending && now - start_ns_ >= config_.delay_ns) {
        delay_pending = false;
        if (config_.range == CaptureConfig::Range::kNone) OpenWindow();
      }
      if (config_.duration_ns > 0 && recording() && !window_done_.load() &&
          now - recording_since_ns_.load() >= config_.duration_ns) {
        window_done_ = true;  // one window only
        CloseWindow();
      }
      if (!recording()) WatchForWindow();
      const int64_t mono = MonotonicNs();
      // Migrations are running: drain CUPTI's unified-memory records now. The
      // driver queue they come through holds a few thousand events; left to
      // the regular flush, a fault storm overflows it and the rest of the
      // kernel's migrations are lost (lent H100: 112-194 of 256 MiB per round;
      // drained every millisecond, 256 of 256).
      const bool per_event =
          config_.um_migrations || config_.um_gpu_faults || config_.um_cpu_faults;
      if (uvm && PumpUvmTotals(now, recording()) && per_event && UnifiedMemoryActivityOn())
        urgent = true;
      if (cupti_active_.load() && !config_.diag_off.flush &&
          (urgent || mono - last_flush >= flush_interval)) {
        // Delivers every buffer whose records are all complete (not forced:
        // kernels still running stay in CUPTI until they finish).
        std::lock_guard<std::mutex> lk(cupti_mu_);
        if (cupti_active_.load()) cuptiActivityFlushAll(0);
        last_flush = mono;
      }
      PumpHostMem();
    }
  } catch (...) {
    Disable("internal error in the tracer's timer thread");
  }
}

void Session::Shutdown() {
  if (in_fork_child_ || !active() || shut_down_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const bool was_recording = recording();
  // The GPU metrics' last samples (their thread stops and decodes), while
  // active() still lets them into the ring.
  pm::GpuMetricsShutdown();
  recording_ = false;
  {
    std::lock_guard<std::mutex> lk(cupti_mu_);
    if (cupti_active_.load()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  // The last interval's totals (the timer thread has ended).
  if (uvm_on_.load(std::memory_order_acquire)) PumpUvmTotals(NowNs(), was_recording);
  if (auto toggle = activity_toggle_.load()) toggle(false);
  PumpHostMem();
  shm_->flags.fetch_or(shm::kFlagExited);
}

}  // namespace stepscope
