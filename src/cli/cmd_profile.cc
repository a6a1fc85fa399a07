// stepscope profile: runs a command with the tracer injected.
//
// The launcher itself never touches CUDA. It checks that the tracer library
// loads (else: one warning, run untraced), sets CUDA_INJECTION64_PATH /
// NVTX_INJECTION64_PATH and the STEPSCOPE_* settings (capture/config.h), runs
// the command as a child (cli/launcher.h: signals as if the launcher were not
// there) and exits the way the child did. The launcher is also the collector
// (src/collector/): each traced process (ranks, children that exec) connects
// to it and gets its own trace file, which the launcher finalizes after that
// process is gone and then summarizes. `stepscope _collect` is the same
// collector for one process that was started without the launcher.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "capture/contract.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/launcher.h"
#include "cli/traced_run.h"
#ifdef STEPSCOPE_HAVE_COLLECTOR
#include "collector/collector_server.h"
#include "collector/journal_guard.h"
#include "collector/run_summary.h"
#endif
#include "common/file_util.h"
#include "common/strings.h"
#include "common/version.h"

namespace stepscope {
namespace {

// The sitecustomize hook directory for --pytorch-memory and --loader-ranges: installed beside the
// tracer (lib/python/stepscope_hook) or, in a build tree, in the sources.
std::string FindPythonHookDir(const std::string& lib_dir) {
  for (const std::string& d : {lib_dir + "/python/stepscope_hook",
                               std::string(STEPSCOPE_SOURCE_DIR) + "/python/stepscope_hook"}) {
    if (FileExists(d + "/sitecustomize.py")) return d;
  }
  return "";
}

int64_t NowRealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int RunGuard(int argc, char** argv) {
  (void)argc;
  (void)argv;
#ifdef STEPSCOPE_HAVE_COLLECTOR
  // Started by the launcher (journal_guard::Start) with the pipe on stdin.
  return journal_guard::RunKeeper(0);
#else
  return 1;
#endif
}

int RunCollect(int argc, char** argv) {
#ifdef STEPSCOPE_HAVE_COLLECTOR
  // Started by a tracer (capture/session.cc) with its socket on fd 3. Fork
  // once more so the traced program never has this process as a child.
  // Only that tracer holds the other end of the socket: it names the
  // library CUPTI is loaded through (--inject-lib).
  CollectorPolicy policy;
  for (int i = 0; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--inject-lib")) policy.inject_lib = argv[i + 1];
  }
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid > 0) _exit(0);
  setsid();
  for (int s : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2}) signal(s, SIG_IGN);
  // Keep only stdin/stdout/stderr and the socket: whatever else the program
  // left open without O_CLOEXEC (pipes to its parent, its files) is not ours.
  if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0) {
    for (int i = 4; i < 65536; ++i) close(i);
  }
  int fd = fcntl(3, F_DUPFD_CLOEXEC, 3);
  close(3);
  if (fd < 0) return 1;
  auto server = CollectorServer::ForConnection(fd, std::move(policy));
  server->RunUntilDone();
  return 0;
#else
  (void)argc;
  (void)argv;
  std::fprintf(stderr, "stepscope _collect: built without CUPTI\n");
  return 1;
#endif
}

namespace {

// The settings of one `stepscope profile` run, read once from its flags
// (long options and nsys's spellings alike) and handed to the tracer as the
// STEPSCOPE_* environment capture/config.h reads.
struct ProfileSettings {
  std::string pattern;
  std::vector<std::string> categories;  // ours (nsys names mapped)
  int64_t sample_hz = 0;
  int64_t native_hz = 0;
  std::string py_stacks;
  bool loader_ranges = true;
  bool iteration_ranges = true;
  bool pytorch_memory = false;
  int64_t delay_ns = 0;
  int64_t duration_ns = 0;
  std::string range;         // cudaProfilerApi | nvtx:NAME | ""
  int64_t window_steps = 0;  // --steps N: record N training iterations...
  int64_t warmup_steps = 0;  // ...after this many (--warmup-steps)
  long file_mode = 0600;
  bool force = false;
  bool stats = false;  // --stats: print `stepscope stats` of each trace after the run

  bool Traces(std::string_view cat) const {
    return std::find(categories.begin(), categories.end(), cat) != categories.end();
  }
};

// nsys -t values whose work `cuda` already records (kernels, copies, API calls).
constexpr const char* kNsysLibraryCategories[] = {"cublas",
                                                  "cublas-verbose",
                                                  "cudnn",
                                                  "cusparse",
                                                  "cusparse-verbose",
                                                  "cusolver",
                                                  "cufft",
                                                  "nccl",
                                                  "openacc",
                                                  "openmp",
                                                  "mpi",
                                                  "ucx",
                                                  "oshmem"};

template <size_t N>
bool OneOf(const std::string& v, const char* const (&names)[N]) {
  for (const char* n : names) {
    if (v == n) return true;
  }
  return false;
}

void DeclareProfileFlags(ArgParser* p) {
  p->Flag("--output", "PATTERN",
          "trace file name: %p pid, %h host, %q{VAR} environment variable, %n sequence number, "
          "%% a '%'; .sqlite is appended",
          "stepscope_%p", "-o");
  p->Flag("--trace", "LIST",
          "categories to record: cuda, nvtx, memory (device allocations), host (samples of every "
          "thread: state, what it waits on, its Python stack; see --sample-hz), host-mem (host "
          "malloc/mmap of 1 MiB or more, via an LD_PRELOAD interposer), um-migrations (CUPTI's "
          "record of every unified-memory migration: address, cause, copy time; slows fault "
          "handling ~2x), um-gpu-faults and um-cpu-faults (page faults, also costly). The "
          "driver's unified-memory migration and fault totals come with cuda from the program's "
          "first cudaMallocManaged; um records from the start (memory no managed allocation "
          "announces: system-allocated memory on Grace Hopper). nsys's names work too: osrt is "
          "host; cublas, cudnn, nccl and the other libraries are in cuda; none records nothing",
          "cuda,nvtx,memory,host", "-t");
  p->Flag("--sample-hz", "N",
          "host sampling rate per process, samples per second (0: off; 1 to 10000)", "200");
  p->Flag("--sample", "none|cpu|process-tree",
          "nsys's spelling of host sampling: none is --sample-hz 0", "", "-s");
  p->Flag("--native-hz", "N",
          "native stack samples per second of each thread's CPU time (with host; 0: off; 1 to "
          "10000): C/C++ frames of the traced process's threads, unwound by the collector; they "
          "price PyTorch's saved-tensor hooks under activation checkpointing (docs/capture.md, "
          "Native stacks). Needs /proc/sys/kernel/perf_event_paranoid <= 2",
          "500");
  p->Flag("--python-stacks", "on|off|launches=N",
          "record the Python stack of the thread at each blocking CUDA call (synchronizations, "
          "synchronous copies) and each allocation/free; launches=N also at one kernel launch "
          "in N",
          "on");
  p->Switch("--pytorch-memory",
            "also record PyTorch's caching-allocator events (tensor allocations with their Python "
            "frames) into TRACE.torch-memory.json beside each trace; see 'stepscope memory'");
  p->Flag("--loader-ranges", "on|off",
          "an NVTX range 'DataLoader.__next__' around each batch a PyTorch DataLoader hands "
          "the program (with nvtx; a sitecustomize hook on PYTHONPATH, no code change): how long "
          "the training thread spends getting each batch, which data_loading prices",
          "on");
  p->Flag("--iteration-ranges", "on|off",
          "an NVTX range 'iteration N' from each return of the program's optimizer.step() to "
          "the next (with nvtx; the same hook, no code change): the training steps of a loop "
          "that marks none, for steps, analyze, ranks and the report",
          "on");
  p->Flag("--delay", "SECONDS", "start recording this long after the process starts", "", "-y");
  p->Flag("--duration", "SECONDS", "stop recording this long after recording started", "", "-d");
  p->Flag("--capture-range", "RANGE",
          "record only inside a range: cudaProfilerApi (cudaProfilerStart/Stop), nvtx:NAME (the "
          "NVTX push/pop range NAME) or nvtx with --nvtx-capture NAME, as nsys",
          "", "-c");
  p->Flag("--steps", "N",
          "record N training iterations only, after --warmup-steps of them: the window opens "
          "when the program's optimizer.step() returns for the last warm-up step and closes "
          "when it returns N steps later (the iteration hook; torch programs), so the trace "
          "holds N whole steps of a long job; outside it CUPTI records nothing");
  p->Flag("--warmup-steps", "W", "iterations before the --steps window (1 or more)", "5");
  p->Flag("--nvtx-capture", "NAME[@DOMAIN]",
          "the NVTX range of --capture-range nvtx (nsys's spelling; the domain is not matched)", "",
          "-p");
  p->BoolSwitch("--force-overwrite",
                "replace trace files left by an earlier run (also nsys's -f true|false)", "-f");
  p->BoolSwitch("--stats",
                "after the run, print 'stepscope stats' of each trace on stdout (also "
                "--stats=true|false, as nsys)");
  p->Flag("--cpuctxsw", "MODE",
          "nsys's thread-switch tracing: thread states come with the host samples here; ignored");
  p->Flag("--file-mode", "OCTAL",
          "permissions of the trace files (less the umask): 600, only you may read them, since a "
          "trace holds command lines, paths and Python stacks; 640 or 644 to share them",
          "600");
  p->Epilog(
      "examples:\n"
      "  stepscope profile -- python train.py\n"
      "  stepscope profile -o run_%q{RANK} -- torchrun --nproc-per-node 2 train.py --ddp\n"
      "  stepscope profile --capture-range nvtx:'step 10' -o step10 -- python train.py\n"
      "  stepscope profile --delay 20 --duration 5 -- python train.py\n"
      "  stepscope profile --steps 20 -- python train.py   # iterations 6-25 only\n"
      "  stepscope profile --sample-hz 1000 -- python train.py   # finer host samples\n"
      "  stepscope profile --native-hz 0 -- python train.py      # without native stacks\n"
      "  stepscope profile -t cuda,nvtx,osrt -y 20 -d 5 -f true --stats=true python train.py\n"
      "  stepscope profile -c nvtx -p 'step 10' -o step10 python train.py   # nsys's spellings\n\n"
      "Then: stepscope stats TRACE.sqlite, stepscope analyze TRACE.sqlite, or open the file\n"
      "with sqlite3 (schema: docs/schema.md). DataLoader workers forked without exec are not\n"
      "traced (their parent's trace stays valid); processes that exec get their own file.\n"
      "nsys's spellings (-t, -s, -y, -d, -c, -p, -f true|false, --stats=true, a command\n"
      "without --) mean what they mean there; see docs/cli.md.");
}

// --trace (ours or nsys's names) as our categories.
Status ReadCategories(const std::string& list, ProfileSettings* s) {
  for (const std::string& cat : Split(list, ',')) {
    if (IsTraceCategory(cat)) {
      s->categories.push_back(cat);
    } else if (cat == "osrt") {
      s->categories.push_back("host");
    } else if (OneOf(cat, kNsysLibraryCategories) || cat == "none") {
      continue;  // their kernels and copies are cuda's records
    } else {
      return InvalidInput("unknown --trace category '" + cat +
                          "' (use cuda, nvtx, memory, host, host-mem, um, um-migrations, "
                          "um-gpu-faults, um-cpu-faults; or nsys's osrt, cublas, cudnn, nccl, "
                          "none)");
    }
  }
  return OkStatus();
}

Status ReadRates(const ArgParser& p, ProfileSettings* s) {
  if (!ParseInt64(p.Get("--sample-hz"), &s->sample_hz) || s->sample_hz < 0 ||
      s->sample_hz > 10000) {
    return InvalidInput("--sample-hz: not a rate from 0 to 10000: " + p.Get("--sample-hz"));
  }
  const std::string sample = p.Get("--sample");
  if (sample == "none") {
    s->sample_hz = 0;
  } else if (!sample.empty() && sample != "cpu" && sample != "process-tree") {
    return InvalidInput(
        "--sample: use none, cpu or process-tree (this process and its "
        "children), not '" +
        sample + "'");
  }
  if (!s->Traces("host")) s->sample_hz = 0;
  if (!ParseInt64(p.Get("--native-hz"), &s->native_hz) || s->native_hz < 0 ||
      s->native_hz > 10000) {
    return InvalidInput("--native-hz: not a rate from 0 to 10000: " + p.Get("--native-hz"));
  }
  if (s->sample_hz == 0) s->native_hz = 0;  // native samples ride on the host sampler
  return OkStatus();
}

Status ReadHooks(const ArgParser& p, ProfileSettings* s) {
  s->py_stacks = p.Get("--python-stacks");
  int64_t launch_every = 0;
  if (s->py_stacks != "on" && s->py_stacks != "off" &&
      !(StartsWith(s->py_stacks, "launches=") &&
        ParseInt64(s->py_stacks.substr(9), &launch_every) && launch_every > 0)) {
    return InvalidInput("--python-stacks: use on, off or launches=N (N >= 1), not '" +
                        s->py_stacks + "'");
  }
  for (const auto& [flag, out] :
       {std::pair<const char*, bool*>{"--loader-ranges", &s->loader_ranges},
        {"--iteration-ranges", &s->iteration_ranges}}) {
    const std::string v = p.Get(flag);
    if (v != "on" && v != "off") {
      return InvalidInput(std::string(flag) + ": use on or off, not '" + v + "'");
    }
    *out = v == "on";
  }
  s->pytorch_memory = p.Has("--pytorch-memory");
  return OkStatus();
}

// --steps N after --warmup-steps W: the iteration hook opens and closes a
// cudaProfilerApi window on the optimizer's steps (_iteration_ranges.py).
Status ReadStepWindow(const ArgParser& p, ProfileSettings* s) {
  if (!p.Has("--steps")) return OkStatus();
  if (!ParseInt64(p.Get("--steps"), &s->window_steps) || s->window_steps < 1) {
    return InvalidInput("--steps: not a number of iterations (1 or more): " + p.Get("--steps"));
  }
  if (!ParseInt64(p.Get("--warmup-steps"), &s->warmup_steps) || s->warmup_steps < 1) {
    return InvalidInput("--warmup-steps: not a number of iterations (1 or more): " +
                        p.Get("--warmup-steps"));
  }
  if (!s->range.empty()) {
    return InvalidInput("--steps and --capture-range both choose the recording window; use one");
  }
  if (!s->iteration_ranges) {
    return InvalidInput("--steps needs the iteration hook: drop --iteration-ranges off");
  }
  s->range = "cudaProfilerApi";
  return OkStatus();
}

// --delay, --duration, --capture-range (with nsys's -c nvtx -p NAME).
Status ReadWindow(const ArgParser& p, ProfileSettings* s) {
  if (p.Has("--delay") && !ParseDurationNs(p.Get("--delay"), &s->delay_ns)) {
    return InvalidInput("--delay: not a duration: " + p.Get("--delay"));
  }
  if (p.Has("--duration") &&
      (!ParseDurationNs(p.Get("--duration"), &s->duration_ns) || s->duration_ns == 0)) {
    return InvalidInput("--duration: not a positive duration: " + p.Get("--duration"));
  }
  std::string range = p.Get("--capture-range");
  std::string name = p.Get("--nvtx-capture");
  name = name.substr(0, name.find('@'));  // nsys's RANGE@DOMAIN
  if (p.Has("--nvtx-capture") && name.empty()) {
    return InvalidInput("--nvtx-capture: no range name in '" + p.Get("--nvtx-capture") + "'");
  }
  if (range == "none") range.clear();
  if (range == "nvtx" || (range.empty() && !name.empty())) {
    if (name.empty()) {
      return InvalidInput(
          "--capture-range nvtx needs the range: --nvtx-capture NAME (or "
          "--capture-range nvtx:NAME)");
    }
    range = "nvtx:" + name;
  }
  if (!range.empty() && range != "cudaProfilerApi" &&
      !(StartsWith(range, "nvtx:") && range.size() > 5)) {
    return InvalidInput(
        "--capture-range: use cudaProfilerApi, nvtx:NAME or nvtx with "
        "--nvtx-capture NAME, not '" +
        range + "'");
  }
  s->range = range;
  return ReadStepWindow(p, s);
}

Status ReadOutput(const ArgParser& p, ProfileSettings* s) {
  s->pattern = p.Get("--output");
  if (EndsWith(s->pattern, "/")) s->pattern += "stepscope_%p";
  if (Status st = CheckOutputPattern(s->pattern); !st.ok()) return st;
  const std::string mode_text = p.Get("--file-mode");
  char* mode_end = nullptr;
  s->file_mode = std::strtol(mode_text.c_str(), &mode_end, 8);
  if (mode_text.empty() || *mode_end != '\0' || s->file_mode < 0 || s->file_mode > 0666 ||
      (s->file_mode & 0600) != 0600) {
    return InvalidInput(
        "--file-mode: use octal permissions from 600 to 666 (read and write for "
        "you), not '" +
        mode_text + "'");
  }
  s->force = p.Has("--force-overwrite");
  s->stats = p.Has("--stats");
  return OkStatus();
}

StatusOr<ProfileSettings> ReadProfileSettings(const ArgParser& p) {
  ProfileSettings s;
  RETURN_IF_ERROR(ReadCategories(p.Get("--trace"), &s));
  RETURN_IF_ERROR(ReadRates(p, &s));
  RETURN_IF_ERROR(ReadHooks(p, &s));
  RETURN_IF_ERROR(ReadWindow(p, &s));
  RETURN_IF_ERROR(ReadOutput(p, &s));
  if (p.Has("--cpuctxsw")) {
    CliNote("profile",
            "--cpuctxsw: thread states come with the host samples (--sample-hz); "
            "ignored");
  }
  return s;
}

// A fixed name (no per-process token) that already exists: refuse up front
// rather than write next to it under another name.
Status CheckFixedOutput(const ProfileSettings& s) {
  const std::string& pattern = s.pattern;
  if (pattern.find('%') != std::string::npos && pattern.find("%h") == std::string::npos) {
    return OkStatus();
  }
  std::string fixed = pattern;
  if (size_t h = fixed.find("%h"); h != std::string::npos) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    fixed.replace(h, 2, host);
  }
  if (fixed.find('%') != std::string::npos) return OkStatus();
  if (!EndsWith(fixed, ".sqlite")) fixed += ".sqlite";
  if (FileExists(fixed) && !s.force) {
    return InvalidInput(fixed + " exists; pass --force-overwrite or choose another -o");
  }
  // -f never replaces a trace that a live run is writing.
  return CheckNotBeingWritten(fixed);
}

// Whether the tracer library loads (missing CUPTI shows up here; nothing is
// initialized); else one warning and the program runs untraced.
bool TracerLoads(const std::string& lib) {
  if (lib.empty()) {
    std::fprintf(stderr,
                 "stepscope: warning: libstepscope_inject.so not found next to the stepscope "
                 "binary; the program runs untraced\n");
    return false;
  }
  void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "stepscope: warning: cannot load %s (%s); the program runs untraced\n",
                 lib.c_str(), dlerror());
    return false;
  }
  dlclose(h);
  return true;
}

// The sitecustomize hook (python/stepscope_hook) for the PyTorch memory
// recorder, the DataLoader and the iteration ranges, on PYTHONPATH; it does
// nothing in a program that never imports torch.
void SetPythonHookEnvironment(const ProfileSettings& s, const std::string& lib_dir) {
  const bool loader_hook = s.loader_ranges && s.Traces("nvtx");
  const bool iteration_hook = (s.iteration_ranges && s.Traces("nvtx")) || s.window_steps > 0;
  if (!s.pytorch_memory && !loader_hook && !iteration_hook) return;
  std::string hook = FindPythonHookDir(lib_dir);
  if (hook.empty()) {
    std::fprintf(
        stderr, "stepscope: warning: python/stepscope_hook not found; %s\n",
        s.pytorch_memory ? "PyTorch memory is not recorded" : "no DataLoader or iteration ranges");
    return;
  }
  const char* old = std::getenv("PYTHONPATH");
  std::string v = hook + (old && *old ? ":" + std::string(old) : "");
  setenv("PYTHONPATH", v.c_str(), 1);
  if (loader_hook) setenv(kEnvLoaderRanges, "1", 1);
  if (iteration_hook) setenv(kEnvIterationRanges, "1", 1);
  if (s.window_steps > 0) {
    const std::string w = std::to_string(s.warmup_steps) + ":" + std::to_string(s.window_steps);
    setenv(kEnvWindowSteps, w.c_str(), 1);
  }
  if (s.pytorch_memory) {
    setenv(kEnvPytorchMemory, "1", 1);
    const std::string out_dir =
        s.pattern.find('/') == std::string::npos ? "." : s.pattern.substr(0, s.pattern.rfind('/'));
    setenv(kEnvOutputDir, out_dir.c_str(), 1);
  }
}

// The STEPSCOPE_* environment the tracer reads (capture/config.h).
void SetTracerEnvironment(const ProfileSettings& s, const std::string& lib, int64_t session_start) {
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"); other && *other && lib != other) {
    std::fprintf(
        stderr,
        "stepscope: warning: CUDA_INJECTION64_PATH was %s; replaced by stepscope's tracer\n",
        other);
  }
  setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", lib.c_str(), 1);
  setenv(kEnvOutput, s.pattern.c_str(), 1);
  std::string trace;
  for (const std::string& c : s.categories) trace += (trace.empty() ? "" : ",") + c;
  setenv(kEnvTrace, trace.c_str(), 1);
  setenv(kEnvSampleHz, std::to_string(s.sample_hz).c_str(), 1);
  setenv(kEnvPythonStacks, s.py_stacks.c_str(), 1);
  if (s.delay_ns) setenv(kEnvDelayNs, std::to_string(s.delay_ns).c_str(), 1);
  if (s.duration_ns) setenv(kEnvDurationNs, std::to_string(s.duration_ns).c_str(), 1);
  if (!s.range.empty()) setenv(kEnvCaptureRange, s.range.c_str(), 1);
  if (s.force) setenv(kEnvOverwriteBeforeNs, std::to_string(session_start).c_str(), 1);
  const std::string lib_dir = lib.substr(0, lib.rfind('/'));
  if (s.Traces("host-mem")) {
    std::string preload = lib_dir + "/libstepscope_hostmem.so";
    if (!FileExists(preload)) {
      std::fprintf(stderr, "stepscope: warning: %s not found; host memory is not traced\n",
                   preload.c_str());
    } else {
      const char* old = std::getenv("LD_PRELOAD");
      std::string v = preload + (old && *old ? ":" + std::string(old) : "");
      setenv("LD_PRELOAD", v.c_str(), 1);
    }
  }
  SetPythonHookEnvironment(s, lib_dir);
}

#ifdef STEPSCOPE_HAVE_COLLECTOR
// The hello of the host sampler's trace for the program (the launcher sends
// it for the program, which may never load the tracer).
HelloFields SamplerHello(int pid, const ProfileSettings& s, const std::vector<std::string>& cmd,
                         int64_t session_start) {
  HelloFields h;
  h["pid"] = std::to_string(pid);
  h["ppid"] = std::to_string(getpid());
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  h["host"] = host;
  char cwd[4096] = {0};
  h["cwd"] = getcwd(cwd, sizeof(cwd) - 1) ? cwd : ".";
  h["pattern"] = s.pattern;
  h["file_mode"] = std::to_string(s.file_mode);
  if (s.force) h["overwrite_before_ns"] = std::to_string(session_start);
  std::string line;
  for (const std::string& a : cmd) line += (line.empty() ? "" : " ") + a;
  h["command_line"] = line.substr(0, 16384);
  h["clock"] = "CLOCK_REALTIME";
  h["wall_clock_offset_ns"] = "0";
  h["start_ns"] = std::to_string(NowRealtimeNs());
  h["tool_version"] = kVersion;
  h["trace_categories"] = "host";
  h["sample_hz"] = std::to_string(s.sample_hz);
  h["commit_ms"] = "250";
  auto stat_file = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat = stat_file.ok() ? *stat_file : "";
  size_t close = stat.rfind(')');
  std::vector<std::string> parts =
      Split(close == std::string::npos ? "" : stat.substr(close + 2), ' ');
  if (parts.size() > 19) h["start_time_ticks"] = parts[19];
  for (size_t i = s.pattern.find("%q{"); i != std::string::npos; i = s.pattern.find("%q{", i + 3)) {
    const size_t end = s.pattern.find('}', i);
    if (end == std::string::npos) break;
    const std::string var = s.pattern.substr(i + 3, end - i - 3);
    if (const char* v = std::getenv(var.c_str())) h["env." + var] = v;
  }
  return h;
}

// --stats: `stepscope stats` of each kept trace, on stdout, as nsys prints its
// reports after the run.
void PrintStats(const std::vector<CollectedTrace>& results) {
  for (const CollectedTrace& t : results) {
    if (!t.kept) continue;
    std::fflush(stdout);
    std::printf("\n==> stepscope stats %s\n", t.path.c_str());
    std::fflush(stdout);
    std::string path = t.path;
    char* args[] = {path.data(), nullptr};
    RunStats(1, args);
  }
  std::fflush(stdout);
}
#endif

}  // namespace

int RunProfile(int argc, char** argv) {
  ArgParser p(
      "profile", "[options] [--] COMMAND [ARGS...]",
      "Run COMMAND with the stepscope tracer injected (no code change) and write one SQLite\n"
      "trace per process that uses CUDA or NVTX. The command's output and exit code are\n"
      "unchanged; the summary goes to stderr.");
  p.AcceptCommand();
  DeclareProfileFlags(&p);
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  const std::vector<std::string>& cmd = p.command();
  if (cmd.empty()) {
    return ReportError(
        "profile",
        InvalidInput("no command given; usage: stepscope profile [options] [--] COMMAND"));
  }
  auto settings = ReadProfileSettings(p);
  if (!settings.ok()) return ReportError("profile", settings.status());
  const ProfileSettings& s = *settings;
  if (Status st = CheckFixedOutput(s); !st.ok()) return ReportError("profile", st);
  // Read by the collector's host sampler (set before any thread starts).
  setenv(kEnvNativeHz, std::to_string(s.native_hz).c_str(), 1);
  const int64_t session_start = NowRealtimeNs();
  const std::string lib = TracerLibraryPath();
  bool traced = TracerLoads(lib);
#ifdef STEPSCOPE_HAVE_COLLECTOR
  std::unique_ptr<CollectorServer> collector;
  std::string collector_token;
  if (traced) {
    auto server = ListenForRun(lib, s.pattern, static_cast<int>(s.file_mode), &collector_token);
    if (!server.ok()) {
      std::fprintf(stderr, "stepscope: warning: %s; the program runs untraced\n",
                   server.status().message().c_str());
      traced = false;
    } else {
      collector = std::move(*server);
    }
  }
#else
  traced = false;
#endif
  if (traced) {
    SetTracerEnvironment(s, lib, session_start);
#ifdef STEPSCOPE_HAVE_COLLECTOR
    setenv(kEnvCollector, collector->name().c_str(), 1);
    setenv(kEnvCollectorToken, collector_token.c_str(), 1);
    // A kill -9 of this process cannot leave a trace that needs its -journal
    // (collector/journal_guard.h); without it traces are written as before.
    char exe[4096];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) journal_guard::Start(std::string(exe, static_cast<size_t>(n)));
    collector->StartThread();
#endif
  }
  // Spawn, signals, wait: cli/launcher.h.
  ProgramExit exit;
  std::function<void(int)> on_started;
#ifdef STEPSCOPE_HAVE_COLLECTOR
  // The program's threads are sampled from its start, CUDA or not: a program
  // that never loads the tracer still gets a trace of its samples.
  if (collector && s.sample_hz > 0) {
    on_started = [&](int pid) {
      collector->SampleChild(pid, static_cast<int>(s.sample_hz),
                             SamplerHello(pid, s, cmd, session_start));
    };
  }
#endif
  if (auto run = RunProgram(cmd, {}, on_started); run.ok()) {
    exit = *run;
  } else {
    std::fprintf(stderr, "stepscope profile: error: %s\n", run.status().message().c_str());
    exit.wait_status = 127 << 8;  // as exit(127), a shell's 'cannot run'
  }
#ifdef STEPSCOPE_HAVE_COLLECTOR
  if (collector) {
    // Every trace is finalized once its process is gone; traced processes
    // that outlive the command get 3 s, then are finalized as they are.
    std::vector<CollectedTrace> results = collector->Finish(3000);
    collector.reset();
    journal_guard::Stop();
    if (!p.Has("--quiet")) PrintRunSummary(results, stderr);
    if (s.stats) PrintStats(results);
  }
#endif
  return FinishLikeProgram(exit);
}

}  // namespace stepscope
