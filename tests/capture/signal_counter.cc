// A program for the launcher's signal tests (launcher_signals_test.py): it
// reports what signals it received and how it was started, so a test can
// compare `stepscope profile -- signal_counter ...` with the bare program.
//
//   signal_counter count SIGNO SECONDS   counts deliveries of SIGNO (a C-level
//       handler, so two deliveries count two); prints "ready", then SECONDS
//       after the first delivery (or after 20 s without one) "count N", exit 0
//   signal_counter ignored               prints "ignored:" and the ignored ones
//                                        among HUP INT QUIT TERM
//   signal_counter sleep SECONDS         prints "ready", sleeps, prints "alive"
//   signal_counter tty                   prints "foreground" when its process
//       group is its terminal's foreground, then reads a line from stdin and
//       prints "got LINE"
//   signal_counter abort                 dies of SIGABRT (core dump tests)
#include <signal.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

volatile sig_atomic_t g_count = 0;

void Count(int) { g_count = g_count + 1; }

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void Sleep(double seconds) {
  timespec ts{static_cast<time_t>(seconds),
              static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "count" && argc == 4) {
    int sig = std::atoi(argv[2]);
    double after = std::atof(argv[3]);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = &Count;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
    std::printf("ready\n");
    std::fflush(stdout);
    double deadline = Now() + 20;
    bool seen = false;
    while (Now() < deadline) {
      if (g_count > 0 && !seen) {
        seen = true;
        deadline = Now() + after;
      }
      Sleep(0.01);
    }
    std::printf("count %d\n", static_cast<int>(g_count));
    return 0;
  }
  if (mode == "ignored") {
    std::printf("ignored:");
    const std::pair<int, const char*> sigs[] = {
        {SIGHUP, "HUP"}, {SIGINT, "INT"}, {SIGQUIT, "QUIT"}, {SIGTERM, "TERM"}};
    for (const auto& [s, name] : sigs) {
      struct sigaction old;
      sigaction(s, nullptr, &old);
      if (old.sa_handler == SIG_IGN) std::printf(" %s", name);
    }
    std::printf("\n");
    return 0;
  }
  if (mode == "sleep" && argc == 3) {
    std::printf("ready\n");
    std::fflush(stdout);
    Sleep(std::atof(argv[2]));
    std::printf("alive\n");
    return 0;
  }
  if (mode == "tty") {
    if (tcgetpgrp(STDIN_FILENO) == getpgrp()) std::printf("foreground\n");
    std::printf("ready\n");
    std::fflush(stdout);
    std::string line;
    std::getline(std::cin, line);
    std::printf("got %s\n", line.c_str());
    return 0;
  }
  if (mode == "abort") {
    std::fflush(stdout);
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
    return 1;
  }
  std::fprintf(stderr, "usage: see the comment at the top of signal_counter.cc\n");
  return 2;
}
