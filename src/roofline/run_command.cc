#include "roofline/run_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "common/file_util.h"

namespace stepscope {

StatusOr<int> RunWithEnv(const std::vector<std::string>& command, const EnvVars& env) {
  if (command.empty()) return InvalidInput("no command to run (give it after '--')");
  // A pipe closed on exec tells the parent whether exec succeeded.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) return IoError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    int err = errno;
    (void)!::write(fds[1], &err, sizeof(err));
    ::_exit(127);
  }
  ::close(fds[1]);
  int exec_errno = 0;
  ssize_t n = ::read(fds[0], &exec_errno, sizeof(exec_errno));
  ::close(fds[0]);
  // Let Ctrl-C reach the program, not us, while it runs.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    return InvalidInput("cannot run '" + command[0] + "': " + std::strerror(exec_errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string InjectLibraryPath() {
  const char* env = std::getenv("STEPSCOPE_ROOFLINE_INJECT");
  if (env && *env) return env;
  return ExecutableDir() + "/../lib/libstepscope_roofline_inject.so";
}

EnvVars InjectEnv(const std::string& mode, const EnvVars& extra) {
  std::string lib = InjectLibraryPath();
  EnvVars env = {{"CUDA_INJECTION64_PATH", lib}, {"STEPSCOPE_ROOFLINE_MODE", mode}};
  if (mode == "survey") env.push_back({"NVTX_INJECTION64_PATH", lib});
  for (const auto& e : extra) env.push_back(e);
  return env;
}

}  // namespace stepscope
