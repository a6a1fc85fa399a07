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

#include "capture/config.h"
#include "capture/output_path.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/launcher.h"
#include "cli/traced_run.h"
#ifdef STEPSCOPE_HAVE_COLLECTOR
#include "collector/collector_server.h"
#include "collector/journal_guard.h"
#include "collector/run_summary.h"
#endif
#include "common/env_contract.h"
#include "common/file_util.h"
#include "common/proc_stat.h"
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
// (long options and nsys's spellings alike). What the tracer is told is a
// CaptureConfig (handed over by TracedRun as CaptureConfig::ToEnv()); the
// rest is the launcher's and the collector's.
struct ProfileSettings {
  CaptureConfig tracer;  // -o, --trace (nsys names mapped), rates, stacks, the window
  int64_t native_hz = 0;
  bool loader_ranges = true;
  bool iteration_ranges = true;
  bool pytorch_memory = false;
  int64_t window_steps = 0;  // --steps N: record N training iterations...
  int64_t warmup_steps = 0;  // ...after this many (--warmup-steps)
  long file_mode = 0600;
  bool force = false;
  bool stats = false;  // --stats: print `stepscope stats` of each trace after the run

  const std::string& pattern() const { return tracer.output_pattern; }
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
  p->Flag("--gpu-metrics", "off|on|INTERVAL",
          "GPU metrics over time by CUPTI PM sampling, every INTERVAL (on: 1ms; 10us to 1s) "
          "while recording, on each GPU the program uses: SM active, tensor pipes active, DRAM "
          "read/write, PCIe and NVLink where present (table gpu_metrics; stats "
          "gpu_metrics_sum; analyze's tensor_idle and memory_bound; the report's lanes). Off by "
          "default: its cost is not resolved below 2% yet (docs/PERFORMANCE.md). With a window "
          "CUPTI stays attached outside it. Needs permission to read GPU counters "
          "(ERR_NVGPUCTRPERM); without it, one warning and a trace without them",
          "off");
  p->Flag("--gpu-metrics-devices", "all|none",
          "nsys's spelling: all is --gpu-metrics on (the GPUs this process uses), none is off");
  p->Flag("--gpu-metrics-frequency", "HZ",
          "nsys's spelling of the interval: samples per second (1 to 100000)");
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
          "holds N whole steps of a long job; outside it CUPTI is not in the process "
          "(--detach-outside-window)");
  p->Flag("--warmup-steps", "W", "iterations before the --steps window (1 or more)", "5");
  p->Flag("--detach-outside-window", "on|off",
          "with a recording window (--steps, --delay/--duration, --capture-range): CUPTI is "
          "detached from the program outside it (attached when the window opens, detached after "
          "its records are flushed), so the steps around the window run as without the tracer; "
          "off: CUPTI stays attached for the whole run, recording nothing outside the window",
          "on");
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
      "  stepscope profile --gpu-metrics 500us -- python train.py  # SM/tensor/DRAM activity\n"
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
  std::string ours;
  for (const std::string& cat : Split(list, ',')) {
    if (IsTraceCategory(cat)) {
      ours += cat + ",";
    } else if (cat == "osrt") {
      ours += "host,";
    } else if (OneOf(cat, kNsysLibraryCategories) || cat == "none") {
      continue;  // their kernels and copies are cuda's records
    } else {
      std::string names;
      for (std::string_view c : kTraceCategories)
        names += (names.empty() ? "" : ", ") + std::string(c);
      return InvalidInput("unknown --trace category '" + cat + "' (use " + names +
                          "; or nsys's osrt, cublas, cudnn, nccl, none)");
    }
  }
  s->tracer.SetTraceCategories(ours, nullptr);
  return OkStatus();
}

Status ReadRates(const ArgParser& p, ProfileSettings* s) {
  int64_t sample_hz = 0;
  if (!ParseInt64(p.Get("--sample-hz"), &sample_hz) || sample_hz < 0 || sample_hz > 10000) {
    return InvalidInput("--sample-hz: not a rate from 0 to 10000: " + p.Get("--sample-hz"));
  }
  s->tracer.sample_hz = static_cast<int>(sample_hz);
  const std::string sample = p.Get("--sample");
  if (sample == "none") {
    s->tracer.sample_hz = 0;
  } else if (!sample.empty() && sample != "cpu" && sample != "process-tree") {
    return InvalidInput(
        "--sample: use none, cpu or process-tree (this process and its "
        "children), not '" +
        sample + "'");
  }
  if (!s->tracer.host) s->tracer.sample_hz = 0;
  if (!ParseInt64(p.Get("--native-hz"), &s->native_hz) || s->native_hz < 0 ||
      s->native_hz > 10000) {
    return InvalidInput("--native-hz: not a rate from 0 to 10000: " + p.Get("--native-hz"));
  }
  if (s->tracer.sample_hz == 0) s->native_hz = 0;  // native samples ride on the host sampler
  return OkStatus();
}

Status ReadHooks(const ArgParser& p, ProfileSettings* s) {
  const std::string py_stacks = p.Get("--python-stacks");
  int64_t launch_every = 0;
  if (py_stacks != "on" && py_stacks != "off" &&
      !(StartsWith(py_stacks, "launches=") && ParseInt64(py_stacks.substr(9), &launch_every) &&
        launch_every > 0)) {
    return InvalidInput("--python-stacks: use on, off or launches=N (N >= 1), not '" + py_stacks +
                        "'");
  }
  s->tracer.python_stacks = py_stacks != "off";
  s->tracer.python_stack_launch_every = static_cast<int>(std::min<int64_t>(launch_every, 1 << 30));
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
  if (s->tracer.range != CaptureConfig::Range::kNone) {
    return InvalidInput("--steps and --capture-range both choose the recording window; use one");
  }
  if (!s->iteration_ranges) {
    return InvalidInput("--steps needs the iteration hook: drop --iteration-ranges off");
  }
  s->tracer.range = CaptureConfig::Range::kCudaProfilerApi;
  return OkStatus();
}

// --gpu-metrics (with nsys's --gpu-metrics-devices/-frequency).
Status ReadGpuMetrics(const ArgParser& p, ProfileSettings* s) {
  std::string spec = p.Get("--gpu-metrics");
  const std::string devices = p.Get("--gpu-metrics-devices");
  if (!devices.empty() && devices != "all" && devices != "none") {
    return InvalidInput(
        "--gpu-metrics-devices: use all (the GPUs this process uses) or none, not '" + devices +
        "'");
  }
  if (devices == "all" && (spec.empty() || spec == "off")) spec = "on";
  if (devices == "none") spec = "off";
  int64_t& ns = s->tracer.gpu_metrics_interval_ns;
  if (!CaptureConfig::ParseGpuMetrics(spec.empty() ? "off" : spec, &ns)) {
    return InvalidInput(
        "--gpu-metrics: use off, on or an interval from 10us to 1s (500us, 1ms), "
        "not '" +
        spec + "'");
  }
  if (p.Has("--gpu-metrics-frequency")) {
    int64_t hz = 0;
    if (!ParseInt64(p.Get("--gpu-metrics-frequency"), &hz) || hz < 1 || hz > 100000) {
      return InvalidInput("--gpu-metrics-frequency: not a rate from 1 to 100000: " +
                          p.Get("--gpu-metrics-frequency"));
    }
    if (ns > 0 || devices.empty()) ns = 1'000'000'000 / hz;
  }
  return OkStatus();
}

// --delay, --duration, --capture-range (with nsys's -c nvtx -p NAME).
Status ReadWindow(const ArgParser& p, ProfileSettings* s) {
  if (p.Has("--delay") && !ParseDurationNs(p.Get("--delay"), &s->tracer.delay_ns)) {
    return InvalidInput("--delay: not a duration: " + p.Get("--delay"));
  }
  if (p.Has("--duration") && (!ParseDurationNs(p.Get("--duration"), &s->tracer.duration_ns) ||
                              s->tracer.duration_ns == 0)) {
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
  if (range == "cudaProfilerApi") {
    s->tracer.range = CaptureConfig::Range::kCudaProfilerApi;
  } else if (!range.empty()) {
    s->tracer.range = CaptureConfig::Range::kNvtx;
    s->tracer.range_nvtx_name = range.substr(5);
  }
  const std::string detach = p.Get("--detach-outside-window");
  if (detach != "on" && detach != "off") {
    return InvalidInput("--detach-outside-window: use on or off, not '" + detach + "'");
  }
  s->tracer.detach_outside_window = detach == "on";
  return ReadStepWindow(p, s);
}

Status ReadOutput(const ArgParser& p, ProfileSettings* s) {
  std::string& pattern = s->tracer.output_pattern;
  pattern = p.Get("--output");
  if (EndsWith(pattern, "/")) pattern += "stepscope_%p";
  if (Status st = CheckOutputPattern(pattern); !st.ok()) return st;
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
  RETURN_IF_ERROR(ReadGpuMetrics(p, &s));
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
  if (PatternIsPerProcess(s.pattern())) return OkStatus();
  PatternContext ctx;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  ctx.host = host;
  auto expanded = ExpandOutputPattern(s.pattern(), ctx, 0);
  if (!expanded.ok()) return OkStatus();
  const std::string& fixed = *expanded;
  if (FileExists(fixed) && !s.force) {
    return InvalidInput(fixed + " exists; pass --force-overwrite or choose another -o");
  }
  // -f never replaces a trace that a live run is writing.
  return CheckNotBeingWritten(fixed);
}

#ifdef STEPSCOPE_HAVE_COLLECTOR
// The traced program inherits this process's environment: set here before
// the spawn; "" unsets.
void SetEnvironment(const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [name, value] : env) {
    if (value.empty()) {
      unsetenv(name.c_str());
    } else {
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
}

// `value` first on the colon list `name` (PYTHONPATH, LD_PRELOAD).
std::pair<std::string, std::string> Prepended(const char* name, const std::string& value) {
  const char* old = std::getenv(name);
  return {name, value + (old && *old ? ":" + std::string(old) : "")};
}

// The sitecustomize hook (python/stepscope_hook) for the PyTorch memory
// recorder, the DataLoader and the iteration ranges, on PYTHONPATH; it does
// nothing in a program that never imports torch.
std::vector<std::pair<std::string, std::string>> PythonHookEnvironment(const ProfileSettings& s,
                                                                       const std::string& lib_dir) {
  const bool loader_hook = s.loader_ranges && s.tracer.nvtx;
  const bool iteration_hook = (s.iteration_ranges && s.tracer.nvtx) || s.window_steps > 0;
  if (!s.pytorch_memory && !loader_hook && !iteration_hook) return {};
  std::string hook = FindPythonHookDir(lib_dir);
  if (hook.empty()) {
    std::fprintf(
        stderr, "stepscope: warning: python/stepscope_hook not found; %s\n",
        s.pytorch_memory ? "PyTorch memory is not recorded" : "no DataLoader or iteration ranges");
    return {};
  }
  std::vector<std::pair<std::string, std::string>> env = {Prepended("PYTHONPATH", hook)};
  if (loader_hook) env.emplace_back(kEnvLoaderRanges, "1");
  if (iteration_hook) env.emplace_back(kEnvIterationRanges, "1");
  if (s.window_steps > 0) {
    env.emplace_back(kEnvWindowSteps,
                     std::to_string(s.warmup_steps) + ":" + std::to_string(s.window_steps));
  }
  if (s.pytorch_memory) {
    const std::string& pattern = s.pattern();
    env.emplace_back(kEnvPytorchMemory, "1");
    env.emplace_back(kEnvOutputDir, pattern.find('/') == std::string::npos
                                        ? "."
                                        : pattern.substr(0, pattern.rfind('/')));
  }
  return env;
}

// What the traced program is told: the tracer and its settings
// (TracedRun::Environment), the host-mem interposer, the Python hook.
void SetTracerEnvironment(const ProfileSettings& s, const TracedRun& run) {
  const std::string& lib = run.library();
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"); other && *other && lib != other) {
    std::fprintf(
        stderr,
        "stepscope: warning: CUDA_INJECTION64_PATH was %s; replaced by stepscope's tracer\n",
        other);
  }
  SetEnvironment(run.Environment());
  const std::string lib_dir = lib.substr(0, lib.rfind('/'));
  if (s.tracer.host_mem) {
    std::string preload = lib_dir + "/libstepscope_hostmem.so";
    if (!FileExists(preload)) {
      std::fprintf(stderr, "stepscope: warning: %s not found; host memory is not traced\n",
                   preload.c_str());
    } else {
      SetEnvironment({Prepended("LD_PRELOAD", preload)});
    }
  }
  SetEnvironment(PythonHookEnvironment(s, lib_dir));
}

// The hello of the host sampler's trace for the program (the launcher sends
// it for the program, which may never load the tracer).
HelloMessage SamplerHello(int pid, const ProfileSettings& s, const std::vector<std::string>& cmd) {
  HelloMessage h;
  h.pid = pid;
  h.ppid = getpid();
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  h.host = host;
  char cwd[4096] = {0};
  h.cwd = getcwd(cwd, sizeof(cwd) - 1) ? cwd : ".";
  h.pattern = s.pattern();
  h.file_mode = static_cast<int>(s.file_mode);
  h.overwrite_before_ns = s.tracer.overwrite_before_ns;
  std::string line;
  for (const std::string& a : cmd) line += (line.empty() ? "" : " ") + a;
  h.command_line = line.substr(0, 16384);
  h.clock = "CLOCK_REALTIME";
  h.wall_clock_offset_ns = 0;
  h.start_ns = NowRealtimeNs();
  h.tool_version = kVersion;
  h.trace_categories = "host";
  h.sample_hz = s.tracer.sample_hz;
  h.commit_ms = 250;
  if (ProcStat stat; ReadProcStat(pid, &stat)) h.start_time_ticks = stat.start_time_ticks;
  for (const std::string& var : PatternVariables(s.pattern())) {
    if (const char* v = std::getenv(var.c_str())) h.env[var] = v;
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
  ProfileSettings& s = *settings;
  if (Status st = CheckFixedOutput(s); !st.ok()) return ReportError("profile", st);
  // Read by the collector's host sampler (set before any thread starts).
  setenv(kEnvNativeHz, std::to_string(s.native_hz).c_str(), 1);
  // -f replaces only files from before this run.
  if (s.force) s.tracer.overwrite_before_ns = NowRealtimeNs();
#ifdef STEPSCOPE_HAVE_COLLECTOR
  std::unique_ptr<TracedRun> traced;
  if (auto prepared = TracedRun::Prepare(s.tracer, static_cast<int>(s.file_mode)); prepared.ok()) {
    traced = std::move(*prepared);
    SetTracerEnvironment(s, *traced);
    // A kill -9 of this process cannot leave a trace that needs its -journal
    // (collector/journal_guard.h); without it traces are written as before.
    char exe[4096];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) journal_guard::Start(std::string(exe, static_cast<size_t>(n)));
    traced->collector().StartThread();
  } else {
    std::fprintf(stderr, "stepscope: warning: %s; the program runs untraced\n",
                 prepared.status().message().c_str());
  }
#endif
  // Spawn, signals, wait: cli/launcher.h.
  ProgramExit exit;
  std::function<void(int)> on_started;
#ifdef STEPSCOPE_HAVE_COLLECTOR
  // The program's threads are sampled from its start, CUDA or not: a program
  // that never loads the tracer still gets a trace of its samples.
  if (traced && s.tracer.sample_hz > 0) {
    on_started = [&](int pid) {
      traced->collector().SampleChild(pid, s.tracer.sample_hz, SamplerHello(pid, s, cmd));
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
  if (traced) {
    std::vector<CollectedTrace> results = traced->Finish(3000);
    traced.reset();
    journal_guard::Stop();
    if (!p.Has("--quiet")) PrintRunSummary(results, stderr);
    if (s.stats) PrintStats(results);
  }
#endif
  return FinishLikeProgram(exit);
}

}  // namespace stepscope
