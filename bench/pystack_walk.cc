// Figure: what one Python stack read costs (docs/PERFORMANCE.md, "Python
// stack walks: pages, not frames"): µs and process_vm_readv calls per walk
// of a python3 child parked under DEPTH frames of a recursive function with
// LOCALS locals each, read one process_vm_readv per frame (the reference) and
// through windows of whole pages of several sizes. Modes are interleaved,
// ROUNDS rounds of WALKS walks each; the median round is printed. A walk is
// one AllStacks() of the child (its only thread) less the thread-list reads
// (AllStacks at depth 0, timed the same way). `--body N` puts N statements on
// N lines before each level's call, as in a long forward() or nn.Module's
// _call_impl: the call's instruction then sits deep in a long line table.
//
//   pystack_walk [--depth 60] [--locals 1] [--body 0] [--via-call] [--distinct] [--walks 2000]
//                [--rounds 7]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "capture/pystack/py_stack.h"

namespace {

using stepscope::pystack::PyRuntime;
using stepscope::pystack::ThreadStack;
using stepscope::pystack::WalkOptions;

// `via_call`: each level calls the next through an object's __call__ (a C
// call, as nn.Module calls are): on 3.12 every level adds a shim frame on
// the C stack between two data-stack frames. `distinct`: each level is its
// own code object (compiled again), as in a real stack, where the walk's
// stamp read covers as many code objects as frames; else all levels share one.
pid_t StartChild(int depth, int locals, int body, bool via_call, bool distinct) {
  const std::string next = via_call ? "M()(n - 1)" : "F[n - 1](n - 1)";
  const std::string levels = std::to_string(depth);
  const std::string script =
      "import sys, time\n"
      "src = 'def rec(n):\\n' + ''.join('    v%d = n\\n' % i for i in range(" +
      std::to_string(locals) + ")) + ''.join('    w = n + %d\\n' % i for i in range(" +
      std::to_string(body) + ")) + '    if n == 0:\\n        park()\\n    return " + next +
      "\\n'\n"
      "F = []\n"
      "for k in range(" +
      levels + "):\n" + (distinct ? "    exec(src)\n" : "    k or exec(src)\n") +
      "    F.append(rec)\n"
      "class M:\n"
      "    def __call__(self, n):\n"
      "        return F[n](n)\n"
      "def park():\n"
      "    sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
      "    time.sleep(1000)\n"
      "F[" +
      std::to_string(depth - 3) + "](" + std::to_string(depth - 3) + ")\n";
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::execlp("python3", "python3", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[16] = {0};
  const ssize_t got = ::read(fds[0], buf, sizeof(buf));
  ::close(fds[0]);
  if (got <= 0) return -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // into time.sleep
  return pid;
}

struct Round {
  double us = 0;
  double reads = 0;
  size_t frames = 0;
};

Round Measure(PyRuntime* rt, const WalkOptions& o, size_t depth, int walks) {
  rt->set_walk_options(o);
  std::vector<ThreadStack> stacks;
  Round r;
  const uint64_t before = rt->memory().reads();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < walks; ++i) rt->AllStacks(&stacks, depth);
  const auto t1 = std::chrono::steady_clock::now();
  r.us = std::chrono::duration<double, std::micro>(t1 - t0).count() / walks;
  r.reads = static_cast<double>(rt->memory().reads() - before) / walks;
  r.frames = stacks.empty() ? 0 : stacks[0].frames.size();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int depth = 60, locals = 1, body = 0, walks = 2000, rounds = 7;
  bool via_call = false, distinct = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--via-call")) via_call = true;
    if (!std::strcmp(argv[i], "--distinct")) distinct = true;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    const int v = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--depth")) depth = std::max(3, v);
    if (!std::strcmp(argv[i], "--locals")) locals = std::max(1, v);
    if (!std::strcmp(argv[i], "--body")) body = std::max(0, v);
    if (!std::strcmp(argv[i], "--walks")) walks = std::max(1, v);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, v);
  }
  const pid_t pid = StartChild(depth, locals, body, via_call, distinct);
  if (pid < 0) {
    std::fprintf(stderr, "python3 did not start\n");
    return 1;
  }
  auto rt = stepscope::pystack::PyRuntime::Attach(pid);
  if (!rt.ok()) {
    std::fprintf(stderr, "%s\n", rt.status().message().c_str());
    ::kill(pid, SIGKILL);
    return 1;
  }
  struct Mode {
    const char* name;
    WalkOptions o;
    std::vector<Round> rounds;
  };
  std::vector<Mode> modes = {{"thread list only", {}, {}},
                             {"per frame", {.per_frame = true}, {}},
                             {"window 4 KiB", {.window_bytes = 4096}, {}},
                             {"window 16 KiB", {.window_bytes = 16384}, {}},
                             {"window 64 KiB", {.window_bytes = 65536}, {}}};
  for (Mode& m : modes) Measure(rt->get(), m.o, 128, 100);  // warm: code objects cached
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < modes.size(); ++i) {
      modes[i].rounds.push_back(Measure(rt->get(), modes[i].o, i == 0 ? 0 : 128, walks));
    }
  }
  auto median = [](std::vector<Round> v) {
    std::sort(v.begin(), v.end(), [](const Round& a, const Round& b) { return a.us < b.us; });
    return v[v.size() / 2];
  };
  const Round base = median(modes[0].rounds);
  std::printf(
      "python %s, %d levels deep%s%s, %d locals and %d lines before the call per frame, %d walks "
      "x %d rounds (median)\n",
      (*rt)->version().c_str(), depth, via_call ? " (each through __call__)" : "",
      distinct ? ", a code object each" : "", locals, body, walks, rounds);
  std::printf("%-18s %8s %8s %10s %10s\n", "mode", "frames", "us/read", "us/walk", "reads/walk");
  for (size_t i = 0; i < modes.size(); ++i) {
    const Round m = median(modes[i].rounds);
    const double us = i == 0 ? m.us : m.us - base.us;
    const double reads = i == 0 ? m.reads : m.reads - base.reads;
    std::printf("%-18s %8zu %8.2f %10.2f %10.1f\n", modes[i].name, m.frames, m.us, us, reads);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return 0;
}
