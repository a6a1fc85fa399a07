#include "collector/journal_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "common/spawn_attr.h"
#include "store/sqlite_util.h"

extern char** environ;

namespace stepscope::journal_guard {
namespace {

std::atomic<int> g_fd{-1};
pid_t g_pid = -1;

void Send(char op, const std::string& path) {
  const int fd = g_fd.load();
  if (fd < 0) return;
  std::string line;
  line.reserve(path.size() + 2);
  line += op;
  line += path;
  line += '\n';
  // One write of at most PIPE_BUF bytes is atomic: lines of several trace
  // threads never interleave. A path that long is not kept.
  if (line.size() > PIPE_BUF || path.find('\n') != std::string::npos) return;
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
}

}  // namespace

bool Start(const std::string& exe) {
  if (g_fd.load() >= 0) return true;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  // A session of its own: a kill of the launcher's or the program's process
  // group (a job script's `kill -9 -- -PGID`, a terminal's hangup) misses it.
  posix_spawnattr_t attr;
  InitHelperSpawnAttr(&attr);
  std::string arg0 = exe;
  char guard[] = "_guard";
  char* argv[] = {arg0.data(), guard, nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    return false;
  }
  // Never block a trace thread: the keeper reads at once, a full pipe drops.
  ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  g_pid = pid;
  g_fd.store(fds[1]);
  return true;
}

void Opened(const std::string& path) { Send('+', path); }
void Closed(const std::string& path) { Send('-', path); }

void Stop() {
  const int fd = g_fd.exchange(-1);
  if (fd < 0) return;
  const char bye = '.';
  (void)!::write(fd, &bye, 1);
  ::close(fd);
  if (g_pid > 0) {
    int st = 0;
    while (::waitpid(g_pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  g_pid = -1;
}

bool Repair(const std::string& path) {
  const std::string journal = path + "-journal";
  struct stat st;
  if (::stat(journal.c_str(), &st) != 0) return true;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    // The first read takes a shared lock: SQLite finds the journal hot (no
    // writer holds a lock), rolls it back into the file and deletes it.
    (void)ProbeSchema(db);
  }
  sqlite3_close_v2(db);
  return ::stat(journal.c_str(), &st) != 0;
}

int RunKeeper(int fd) {
  for (int s : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
    ::signal(s, SIG_IGN);
  }
  const pid_t launcher = ::getppid();
  std::set<std::string> open;
  std::string buf;
  bool clean = false;
  char chunk[4096];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string line = buf.substr(start, nl - start);
      if (line.empty()) continue;
      if (line[0] == '+') open.insert(line.substr(1));
      if (line[0] == '-') open.erase(line.substr(1));
    }
    buf.erase(0, start);
    if (buf == ".") clean = true;
  }
  if (clean || open.empty()) return 0;
  // The pipe ends while the launcher is still exiting: its fds close in
  // order, and until its database fd is closed it holds SQLite's lock, so the
  // journal is not hot yet. Wait until it is gone (this process is then
  // reparented), and retry a little for a lock still held by a straggler.
  for (int i = 0; i < 200 && ::getppid() == launcher; ++i) ::usleep(10'000);
  int left = 0;
  for (const std::string& path : open) {
    bool ok = Repair(path);
    for (int i = 0; i < 100 && !ok; ++i) {
      ::usleep(20'000);
      ok = Repair(path);
    }
    if (!ok) ++left;
  }
  return left == 0 ? 0 : 1;
}

}  // namespace stepscope::journal_guard
