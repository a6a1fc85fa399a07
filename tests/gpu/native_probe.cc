// native_probe: runs a command and samples the native stacks of its threads
// (collector/native_stack.h) for a while, then prints which functions the
// samples were under. A check of the native sampler on a real process (the
// GPU machines' PyTorch), and of where a host cost sits.
//
//   native_probe [--warmup S] [--seconds S] [--period-us N] [--match A,B] [--kill] -- CMD ARGS...
//
// --kill: end the command (SIGTERM) once sampled.
//
// Prints: per thread, its samples; over the two busiest threads, the top
// functions by inclusive share (on the stack anywhere) and by leaf share;
// the share of samples with a frame whose function contains any of --match.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collector/native_stack.h"
#include "common/strings.h"

using stepscope::NativeSample;
using stepscope::NativeSampler;

namespace {

std::vector<pid_t> Tasks(pid_t pid) {
  std::vector<pid_t> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    out.push_back(static_cast<pid_t>(atoi(e->d_name)));
  }
  closedir(d);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  double warmup = 10, seconds = 10;
  int period_us = 1000;
  bool kill_after = false;
  std::vector<std::string> match = {"SavedVariable",        "SavedTensor",    "saved_tensors",
                                    "PySavedVariableHooks", "call_pack_hook", "call_unpack_hook"};
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kill") {
      kill_after = true;
      continue;
    }
    if (a == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) break;
    if (a == "--warmup")
      warmup = atof(argv[++i]);
    else if (a == "--seconds")
      seconds = atof(argv[++i]);
    else if (a == "--period-us")
      period_us = atoi(argv[++i]);
    else if (a == "--match")
      match = stepscope::Split(argv[++i], ',');
  }
  if (i >= argc) {
    fprintf(stderr, "usage: native_probe [--warmup S] [--seconds S] [--period-us N] -- CMD...\n");
    return 2;
  }
  const pid_t child = fork();
  if (child == 0) {
    execvp(argv[i], argv + i);
    perror("exec");
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  std::string why;
  auto s = NativeSampler::Create(child, period_us, &why);
  if (!s) {
    fprintf(stderr, "native_probe: %s\n", why.c_str());
    kill(child, SIGTERM);
    waitpid(child, nullptr, 0);
    return 1;
  }
  std::vector<NativeSample> all;
  const auto t0 = std::chrono::steady_clock::now();
  int failed = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    for (pid_t t : Tasks(child))
      if (!s->watching(t) && !s->Watch(t)) ++failed;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s->Poll(&all);
    int st = 0;
    if (waitpid(child, &st, WNOHANG) == child) break;
  }
  s->Poll(&all);
  const auto& sc = s->unwinder();
  std::map<uint32_t, size_t> per_tid;
  for (const auto& x : all) per_tid[x.tid]++;
  std::vector<std::pair<size_t, uint32_t>> busy;
  for (auto [t, n] : per_tid) busy.push_back({n, t});
  std::sort(busy.rbegin(), busy.rend());
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double cpu_s =
      ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  printf(
      "samples %zu, threads watched %zu (open failures %d), lost %llu, frames known %zu; "
      "probe CPU %.3f s (%.1f us per sample)\n",
      all.size(), s->watched(), failed, static_cast<unsigned long long>(s->lost()), sc.frames(),
      cpu_s, all.empty() ? 0.0 : 1e6 * cpu_s / all.size());
  for (auto [n, t] : busy) printf("  tid %u: %zu samples\n", t, n);
  for (size_t b = 0; b < busy.size() && b < 2; ++b) {
    const uint32_t tid = busy[b].second;
    std::map<uint32_t, size_t> incl, leaf;
    size_t n = 0, matched = 0, empty = 0;
    std::map<std::string, size_t> by_match;
    for (const auto& x : all) {
      if (x.tid != tid) continue;
      ++n;
      if (x.frames.empty()) {
        ++empty;
        continue;
      }
      leaf[x.frames[0]]++;
      std::set<uint32_t> seen(x.frames.begin(), x.frames.end());
      for (uint32_t f : seen) incl[f]++;
      bool hit = false;
      std::set<std::string> hits;
      for (uint32_t f : seen)
        for (const auto& m : match)
          if (sc.frame(f).function.find(m) != std::string::npos) {
            hit = true;
            hits.insert(m);
          }
      matched += hit;
      for (const auto& h : hits) by_match[h]++;
    }
    printf("\n== tid %u: %zu samples (%zu without frames); matching %s: %zu (%.1f%%)\n", tid, n,
           empty, "--match", matched, n ? 100.0 * matched / n : 0.0);
    for (const auto& [m, c] : by_match)
      printf("   %-28s %zu (%.1f%%)\n", m.c_str(), c, 100.0 * c / n);
    auto top = [&](const std::map<uint32_t, size_t>& c, const char* what, size_t k) {
      std::vector<std::pair<size_t, uint32_t>> v;
      for (auto [f, m] : c) v.push_back({m, f});
      std::sort(v.rbegin(), v.rend());
      printf("-- top %s\n", what);
      for (size_t j = 0; j < v.size() && j < k; ++j) {
        std::string fn = sc.frame(v[j].second).function;
        if (fn.size() > 150) fn = fn.substr(0, 150) + "...";
        printf("  %5.1f%%  %-24s %s\n", 100.0 * v[j].first / n,
               sc.frame(v[j].second).module.substr(0, 24).c_str(), fn.c_str());
      }
    };
    top(incl, "inclusive", 70);
    top(leaf, "leaf", 25);
  }
  if (kill_after) kill(child, SIGTERM);
  int st = 0;
  waitpid(child, &st, 0);
  return kill_after || WIFEXITED(st) ? (kill_after ? 0 : WEXITSTATUS(st)) : 1;
}
