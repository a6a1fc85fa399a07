#include "cli/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture/output_path.h"

extern char** environ;

namespace stepscope {
namespace {

// Signals the launcher forwards to the program. SIGCONT is not among them:
// continuing a stopped program is the wait loop's job (FollowStop).
constexpr int kForwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP};
constexpr int kNumForwarded = sizeof(kForwarded) / sizeof(kForwarded[0]);

volatile sig_atomic_t g_program = 0;

// The last forwarded signal of each number: who sent it and when.
volatile pid_t g_last_sender[NSIG];
volatile int64_t g_last_ns[NSIG];
constexpr int64_t kCoalesceNs = 100'000'000;

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// One signal from one sender within 100 ms is forwarded once: `timeout`
// signals our pid and then our process group, which the program, bare,
// receives as one (a pending standard signal absorbs the second).
void ForwardToProgram(int sig, siginfo_t* info, void*) {
  int saved = errno;
  pid_t pid = g_program;
  int64_t now = MonotonicNs();
  bool from_process = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  bool repeat =
      from_process && g_last_sender[sig] == info->si_pid && now - g_last_ns[sig] < kCoalesceNs;
  if (pid > 0 && !repeat) {
    ::kill(pid, sig);
    g_last_sender[sig] = from_process ? info->si_pid : 0;
    g_last_ns[sig] = now;
  }
  errno = saved;
}

bool IsForeground(int tty, pid_t pgrp) { return tty >= 0 && ::tcgetpgrp(tty) == pgrp; }

// A process outside the foreground group may call tcsetpgrp only with
// SIGTTOU blocked (else the call stops it).
void SetForeground(int tty, pid_t pgrp) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &ttou, &old);
  (void)::tcsetpgrp(tty, pgrp);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

// The environment of the child: ours with `env` set on top. Built before
// fork, so the child only calls async-signal-safe functions.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    bool replaced = false;
    for (const auto& [k, v] : env) {
      if (std::strncmp(*e, k.c_str(), k.size()) == 0 && (*e)[k.size()] == '=') replaced = true;
    }
    if (!replaced) out.emplace_back(*e);
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The program stopped (Ctrl-Z, SIGSTOP, SIGTTIN...). Called by the wait loop.
// `has_terminal`: whether the program's group holds the terminal (updated).
void FollowStop(int stop_sig, pid_t program, int tty, pid_t own_pgrp, bool* has_terminal) {
  const bool had_terminal = *has_terminal && IsForeground(tty, program);
  const bool wants_terminal = stop_sig == SIGTTIN || stop_sig == SIGTTOU;
  if (!had_terminal && wants_terminal && IsForeground(tty, own_pgrp)) {
    // Our job came to the foreground (fg after starting in the background),
    // and the program wants the terminal: it gets it, as it would bare.
    SetForeground(tty, program);
    *has_terminal = true;
    ::kill(-program, SIGCONT);
    return;
  }
  // Stopped by someone else while in the background: left to whoever stopped
  // it (kill -CONT resumes it); the launcher keeps waiting.
  if (!had_terminal && !wants_terminal) return;
  // Ctrl-Z, or a background program reading the terminal: stop too, so that
  // the shell sees the job stopped. Ctrl-Z also reaches the rest of our group
  // (a script that runs us), as the terminal would have done.
  if (had_terminal) {
    SetForeground(tty, own_pgrp);
    *has_terminal = false;
    if (stop_sig == SIGTSTP) ::kill(0, SIGTSTP);
  }
  ::kill(::getpid(), SIGSTOP);
  // Continued by fg (the terminal is ours again: the program's) or bg.
  if (IsForeground(tty, own_pgrp)) {
    SetForeground(tty, program);
    *has_terminal = true;
  }
  ::kill(-program, SIGCONT);
}

}  // namespace

int ProgramExit::ExitCode() const {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

StatusOr<ProgramExit> RunProgram(const std::vector<std::string>& command,
                                 const std::vector<std::pair<std::string, std::string>>& env,
                                 const std::function<void(int pid)>& on_started) {
  if (command.empty()) return InvalidInput("no command to run (give it after '--')");
  std::vector<std::string> env_strings = ChildEnvironment(env);
  std::vector<char*> argv = CStrings(command);
  std::vector<char*> envp = CStrings(env_strings);

  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  const pid_t own_pgrp = ::getpgrp();
  const bool give_terminal = IsForeground(tty, own_pgrp);

  // Until the child's pid is known the forwarded signals wait (blocked).
  sigset_t block, orig_mask;
  sigemptyset(&block);
  for (int s : kForwarded) sigaddset(&block, s);
  sigaddset(&block, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &block, &orig_mask);
  struct sigaction old[kNumForwarded];
  bool handled[kNumForwarded];
  for (int i = 0; i < kNumForwarded; ++i) {
    ::sigaction(kForwarded[i], nullptr, &old[i]);
    // An ignored signal stays ignored: no handler, so the child inherits SIG_IGN.
    handled[i] = (old[i].sa_flags & SA_SIGINFO) || old[i].sa_handler != SIG_IGN;
    if (!handled[i]) continue;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = &ForwardToProgram;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kForwarded[i], &sa, nullptr);
  }
  auto restore = [&] {
    for (int i = 0; i < kNumForwarded; ++i) {
      if (handled[i]) ::sigaction(kForwarded[i], &old[i], nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &orig_mask, nullptr);
    if (tty >= 0) ::close(tty);
  };

  // A pipe closed on exec tells the parent whether exec succeeded.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    restore();
    return IoError(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    restore();
    return IoError(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);
    if (give_terminal) SetForeground(tty, ::getpid());
    // What exec would do to a caught signal, before one can arrive.
    for (int i = 0; i < kNumForwarded; ++i) {
      if (handled[i]) ::signal(kForwarded[i], SIG_DFL);
    }
    ::sigprocmask(SIG_SETMASK, &orig_mask, nullptr);
    ::execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    (void)!::write(fds[1], &err, sizeof(err));
    ::_exit(127);
  }
  // Both sides set the group, whichever runs first.
  ::setpgid(pid, pid);
  if (give_terminal) SetForeground(tty, pid);
  g_program = pid;
  ::close(fds[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(fds[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  ::close(fds[0]);
  if (n == 0 && on_started) on_started(pid);
  ::sigprocmask(SIG_SETMASK, &orig_mask, nullptr);  // forward what arrived meanwhile

  bool has_terminal = give_terminal;
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WUNTRACED);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (!WIFSTOPPED(status)) break;
    FollowStop(WSTOPSIG(status), pid, tty, own_pgrp, &has_terminal);
  }
  g_program = 0;
  ProgramExit result;
  result.wait_status = status;
  result.held_terminal = has_terminal;
  if (has_terminal) SetForeground(tty, own_pgrp);
  restore();
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    return InvalidInput("cannot run '" + command[0] + "': " + std::strerror(exec_errno));
  }
  return result;
}

Status CheckOutputPattern(const std::string& pattern) {
  PatternContext ctx;
  // The widest a traced process's pid can be (pid_max <= 2^22): the names
  // are checked at the length they can reach.
  ctx.pid = 9999999;
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  ctx.host = host;
  ctx.getenv = [](const std::string& v) {
    return static_cast<const char*>(std::getenv(v.c_str()));
  };
  auto path = ExpandOutputPattern(pattern, ctx, 99999);
  if (!path.ok()) {
    return InvalidInput(
        "-o " + pattern + ": " + path.status().message() +
        (pattern.find("%q{") != std::string::npos ? " (an unset %q{VAR} expands to nothing)" : ""));
  }
  if (Status st = CheckTracePathLength(*path); !st.ok()) {
    return InvalidInput("-o " + pattern + ": " + st.message());
  }
  const size_t slash = pattern.rfind('/');
  if (slash != std::string::npos && PatternIsPerProcess(pattern.substr(0, slash))) {
    // A directory per pid or sequence number cannot exist before the run
    // (nothing creates it); one per %q{VAR} may: checked by each process.
    bool per_pid = false;
    (void)ParseOutputPattern(pattern.substr(0, slash), [&](char kind, const std::string&) {
      per_pid |= kind == 'p' || kind == 'n';
    });
    if (per_pid) {
      return InvalidInput("-o " + pattern +
                          ": a directory named per process (%p, %n) does not exist before the "
                          "run; put the token in the file name");
    }
    return OkStatus();
  }
  const size_t pslash = path->rfind('/');
  const std::string dir =
      pslash == std::string::npos ? "." : (pslash == 0 ? "/" : path->substr(0, pslash));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidInput("-o " + pattern + ": directory " + dir +
                        " does not exist; create it first");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return InvalidInput("-o " + pattern + ": directory " + dir +
                        " is not writable: " + std::strerror(errno));
  }
  // Permissions are not all (root passes access(), /proc and read-only file
  // systems refuse): a file is created there and removed.
  std::string probe = dir + "/.stepscope-check-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    return InvalidInput("-o " + pattern + ": no file can be created in " + dir + ": " +
                        std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return OkStatus();
}

int FinishLikeProgram(const ProgramExit& exit) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int status = exit.wait_status;
  if (!WIFSIGNALED(status)) return exit.ExitCode();
  const int sig = WTERMSIG(status);
  // No core of our own: with a core_pattern without %p it would replace the
  // program's. Not dumpable covers pipe patterns too; RLIMIT_CORE file ones.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct rlimit rl;
  if (::getrlimit(RLIMIT_CORE, &rl) == 0) {
    rl.rlim_cur = 0;
    ::setrlimit(RLIMIT_CORE, &rl);
  }
  ::signal(sig, SIG_DFL);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, sig);
  ::sigprocmask(SIG_UNBLOCK, &s, nullptr);
  // Ctrl-C or Ctrl-\ while the program held the terminal: the terminal would
  // have signalled our whole group (e.g. a shell script looping over runs).
  if (exit.held_terminal && (sig == SIGINT || sig == SIGQUIT)) {
    ::kill(0, sig);
  } else {
    ::kill(::getpid(), sig);
  }
  return 128 + sig;
}

}  // namespace stepscope
