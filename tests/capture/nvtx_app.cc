// A small program that uses NVTX v3 the way training code does, for the
// launcher/NVTX integration tests (no GPU needed: NVTX is host-only).
//
//   nvtx_app ranges          nested push/pop, domains, marks, start/end across threads
//   nvtx_app fork            ranges in the parent, a fork()ed child that records too
//   nvtx_app exit N          exit with status N after one range
//   nvtx_app signal          raise SIGTERM on itself
//   nvtx_app sleep S         one range, then sleep S seconds (for signal forwarding)
//   nvtx_app killself S      K ranges of 10 ms, sleep S seconds, then SIGKILL itself
//   nvtx_app many N          N push/pop pairs as fast as possible; prints the time and VmRSS
//   nvtx_app closefds FILE   one range, close fds 3-1023 (daemon clean-up), then open FILE
//                            and write text to it while recording more ranges
//   nvtx_app open MODE       ranges "layer_0_fwd" > "layer_1_fwd" left open, then
//                            MODE: exit (return 0), kill (SIGKILL itself), segv
//   nvtx_app steps N MS      N ranges "step i" of MS ms each, printing "step i" when it ends
//   nvtx_app threads T K     T threads at once, each naming itself and doing K iterations of
//                            nested push/pop, a mark, and a start/end range ended by the next
//                            thread (the tracer's producers racing: the TSan test)
//   nvtx_app handles         reads a byte through a domain and a registered-string handle, as
//                            NCCL's NVTX path does, then ranges with them; prints "ok"
//   nvtx_app bogus           handles the tracer never issued (domains, registered strings,
//                            range ids), NULL and short attributes, then one real range
//                            "after bogus"; prints "ok" (bare NVTX: all no-ops, exit 0)
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static void Busy(int ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
  }
}

static void Ranges() {
  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "trainer-main");
  for (int step = 0; step < 3; ++step) {
    std::string name = "step " + std::to_string(step);
    nvtxRangePushA(name.c_str());
    nvtxRangePushA("forward");
    Busy(2);
    nvtxRangePop();
    nvtxRangePushA("backward");
    Busy(3);
    nvtxRangePop();
    nvtxRangePop();
  }
  nvtxMarkA("checkpoint saved");
  nvtxDomainHandle_t dom = nvtxDomainCreateA("my_library");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered op");
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 7;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF00FF00;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  nvtxDomainRangePushEx(dom, &a);
  Busy(1);
  nvtxDomainRangePop(dom);
  nvtxRangePushW(L"wide \u00e9t\u00e9");
  nvtxRangePop();
  nvtxRangeId_t id = nvtxRangeStartA("cross-thread");
  std::thread t([id] {
    nvtxRangePushA("worker range");
    Busy(1);
    nvtxRangePop();
    nvtxRangeEnd(id);
  });
  t.join();
}

// Every NVTX entry point that takes a handle, given ones nobody issued: the
// program must not notice (bare NVTX ignores them all).
static void Bogus() {
  static char not_a_handle[64] = "not a handle";
  const uintptr_t bad[] = {1, 0x10, 0xdeadbeef, 0xffffffffffff0000ull,
                           reinterpret_cast<uintptr_t>(not_a_handle)};
  nvtxDomainHandle_t real = nvtxDomainCreateA("bogus_test");
  for (uintptr_t v : bad) {
    auto dom = reinterpret_cast<nvtxDomainHandle_t>(v);
    auto str = reinterpret_cast<nvtxStringHandle_t>(v);
    nvtxEventAttributes_t a;
    std::memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = str;  // a registered string never issued
    nvtxMarkEx(&a);
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangeEnd(nvtxRangeStartEx(&a));
    nvtxDomainMarkEx(real, &a);
    nvtxDomainMarkEx(dom, &a);
    nvtxDomainRangePushEx(dom, &a);
    nvtxDomainRangePop(dom);
    nvtxDomainRangePop(dom);  // more pops than pushes
    nvtxDomainRangeEnd(dom, nvtxDomainRangeStartEx(dom, &a));
    nvtxRangeEnd(static_cast<nvtxRangeId_t>(v));  // range ids never issued
    nvtxDomainRangeEnd(dom, static_cast<nvtxRangeId_t>(v));
    nvtxDomainRangeEnd(real, static_cast<nvtxRangeId_t>(v));
    nvtxDomainRegisterStringA(dom, "on a bogus domain");
    nvtxDomainNameCategoryA(dom, 1, "category");
    nvtxDomainResourceDestroy(reinterpret_cast<nvtxResourceHandle_t>(v));
    nvtxDomainDestroy(dom);
  }
  // NULL attributes, NULL strings, attributes too short for their fields.
  nvtxMarkEx(nullptr);
  nvtxRangePushEx(nullptr);
  nvtxRangePop();
  nvtxRangeEnd(nvtxRangeStartEx(nullptr));
  nvtxDomainMarkEx(real, nullptr);
  nvtxDomainRangePushEx(real, nullptr);
  nvtxDomainRangePop(real);
  nvtxDomainRangeEnd(real, nvtxDomainRangeStartEx(real, nullptr));
  nvtxMarkA(nullptr);
  nvtxRangePushA(nullptr);
  nvtxRangePop();
  nvtxDomainRegisterStringA(real, nullptr);
  nvtxDomainCreateA(nullptr);
  nvtxNameOsThreadA(0, nullptr);
  nvtxEventAttributes_t tiny;
  std::memset(&tiny, 0, sizeof(tiny));
  tiny.version = NVTX_VERSION;
  tiny.size = 4;  // says: nothing past the version and size fields
  tiny.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  tiny.message.registered = reinterpret_cast<nvtxStringHandle_t>(0xdeadbeef);
  nvtxMarkEx(&tiny);
  nvtxDomainRangeEnd(nullptr, 0);
  nvtxRangeEnd(0);
  nvtxDomainDestroy(real);
  nvtxDomainDestroy(nullptr);
  nvtxRangePushA("after bogus");
  Busy(1);
  nvtxRangePop();
  std::printf("ok\n");
}

// A library that reads through the handles it got (NCCL's NVTX path does: a
// DDP job died at its first collective when the tracer's handles were not
// addresses). Bare NVTX returns null handles: nothing to read.
void Handles() {
  nvtxDomainHandle_t d = nvtxDomainCreateA("handles_test");
  nvtxStringHandle_t str = nvtxDomainRegisterStringA(d, "registered");
  volatile unsigned char sink = 0;
  if (d) sink = sink + *reinterpret_cast<const volatile unsigned char*>(d);
  if (str) sink = sink + *reinterpret_cast<const volatile unsigned char*>(str);
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = str;
  nvtxDomainRangePushEx(d, &a);
  Busy(1);
  nvtxDomainRangePop(d);
  std::printf("ok\n");
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (std::string(argv[1]) == "handles") {
    Handles();
    return 0;
  }
  std::string mode = argv[1];
  if (mode == "ranges") {
    Ranges();
    return 0;
  }
  if (mode == "bogus") {
    Bogus();
    return 0;
  }
  if (mode == "fork") {
    nvtxRangePushA("parent before fork");
    nvtxRangePop();
    pid_t pid = fork();
    if (pid == 0) {
      nvtxRangePushA("child range");
      Busy(1);
      nvtxRangePop();
      std::exit(0);  // runs atexit handlers in the child: must not touch the parent's trace
    }
    int st = 0;
    waitpid(pid, &st, 0);
    nvtxRangePushA("parent after fork");
    nvtxRangePop();
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  if (mode == "exit") {
    nvtxRangePushA("exiting");
    nvtxRangePop();
    return argc > 2 ? std::atoi(argv[2]) : 0;
  }
  if (mode == "signal") {
    nvtxRangePushA("before signal");
    nvtxRangePop();
    raise(SIGTERM);
    return 0;
  }
  if (mode == "sleep") {
    nvtxRangePushA("sleeping");
    nvtxRangePop();
    std::fprintf(stdout, "ready\n");
    std::fflush(stdout);
    sleep(argc > 2 ? std::atoi(argv[2]) : 30);
    return 0;
  }
  if (mode == "killself") {
    for (int i = 0; i < 20; ++i) {
      std::string name = "step " + std::to_string(i);
      nvtxRangePushA(name.c_str());
      Busy(10);
      nvtxRangePop();
    }
    usleep(static_cast<useconds_t>((argc > 2 ? std::atof(argv[2]) : 1.5) * 1e6));
    kill(getpid(), SIGKILL);
    return 0;
  }
  if (mode == "closefds") {
    nvtxRangePushA("before close");
    nvtxRangePop();
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    int fd = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) return 3;
    for (int i = 0; i < 50; ++i) {
      std::string name = "after close " + std::to_string(i);
      nvtxRangePushA(name.c_str());
      std::string line = "line " + std::to_string(i) + "\n";
      if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return 4;
      nvtxRangePop();
      usleep(2000);
    }
    close(fd);
    return 0;
  }
  if (mode == "open") {
    std::string how = argc > 2 ? argv[2] : "exit";
    nvtxRangePushA("step 0");
    nvtxRangePushA("layer_0_fwd");
    nvtxRangePop();
    nvtxRangePushA("layer_1_fwd");
    nvtxRangeStartA("async open");
    usleep(300000);
    if (how == "kill") kill(getpid(), SIGKILL);
    if (how == "segv") raise(SIGSEGV);
    return 0;
  }
  if (mode == "steps") {
    int n = argc > 2 ? std::atoi(argv[2]) : 100;
    int ms = argc > 3 ? std::atoi(argv[3]) : 10;
    for (int i = 0; i < n; ++i) {
      std::string name = "step " + std::to_string(i);
      nvtxRangePushA(name.c_str());
      Busy(ms);
      nvtxRangePop();
      std::printf("step %d %.6f\n", i,
                  std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                      .count());
      std::fflush(stdout);
    }
    return 0;
  }
  if (mode == "threads") {
    const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
    const long iters = argc > 3 ? std::atol(argv[3]) : 1000;
    // NVTX's own lazy initialization (nvtxInitOnce in NVIDIA's header, compiled into this
    // program) reads its state without synchronization when threads race to the first
    // call: TSan reports it, and it is not the tracer's code. Initialize on this thread.
    nvtxMarkA("threads: start");
    std::vector<std::thread> pool;
    std::vector<std::atomic<nvtxRangeId_t>> handoff(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([t, threads, iters, &handoff] {
        const std::string me = "worker-" + std::to_string(t);
        nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), me.c_str());
        for (long i = 0; i < iters; ++i) {
          nvtxRangePushA("outer");
          nvtxRangePushA(me.c_str());
          nvtxMarkA("tick");
          nvtxRangePop();
          nvtxRangePop();
          // A start/end range opened here and ended by the next thread.
          nvtxRangeId_t mine = nvtxRangeStartA("handoff");
          nvtxRangeId_t prev = handoff[static_cast<size_t>((t + 1) % threads)].exchange(mine);
          if (prev != 0) nvtxRangeEnd(prev);
        }
      });
    }
    for (auto& th : pool) th.join();
    for (auto& h : handoff) {
      if (nvtxRangeId_t id = h.exchange(0); id != 0) nvtxRangeEnd(id);
    }
    std::printf("threads %d x %ld iterations done\n", threads, iters);
    return 0;
  }
  if (mode == "many") {
    long n = argc > 2 ? std::atol(argv[2]) : 100000;
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
      nvtxRangePushA("op");
      nvtxRangePop();
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%ld ranges in %.3f s: %.1f ns per push+pop\n", n, s,
                s * 1e9 / static_cast<double>(n));
    FILE* f = std::fopen("/proc/self/status", "r");
    char line[256];
    while (f && std::fgets(line, sizeof(line), f)) {
      if (std::strncmp(line, "VmRSS:", 6) == 0) std::printf("rss_kb %ld\n", std::atol(line + 6));
    }
    if (f) std::fclose(f);
    return 0;
  }
  return 2;
}
