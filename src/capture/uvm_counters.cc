// See uvm_counters.h. Linux only; elsewhere Open() says so.
#include "capture/uvm_counters.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <vector>
#endif

namespace stepscope {

namespace {

// Counter indices in the driver's total array (uvm_types.h, UvmCounterName).
constexpr int kHtoD = 0, kDtoH = 1, kCpuFaults = 2, kPrefetchHtoD = 7, kPrefetchDtoH = 8,
              kGpuFaults = 9;
constexpr int kTotalCounters = 10;
// ioctl commands of /dev/nvidia-uvm-tools (plain numbers, not _IOWR codes).
constexpr unsigned long kInitEventTracker = 56;
constexpr unsigned long kEnableCounters = 60;
constexpr uint32_t kNvOk = 0;

#if defined(__linux__)
// UVM_TOOLS_INIT_EVENT_TRACKER parameters, at their byte offsets. The driver
// copies its own structure size in and out (newer drivers append version
// fields), so the call passes a zeroed 128-byte buffer that covers any of them.
struct InitTrackerParams {
  uint64_t queue_buffer;       // 0: no queue = a counter tracker
  uint64_t queue_buffer_size;  // 0
  uint64_t control_buffer;     // the counter page
  uint8_t processor_uuid[16];  // unused with all_processors
  uint32_t all_processors;
  uint32_t uvm_fd;
  uint32_t rm_status;  // out
};
static_assert(offsetof(InitTrackerParams, processor_uuid) == 24);
static_assert(offsetof(InitTrackerParams, all_processors) == 40);
static_assert(offsetof(InitTrackerParams, rm_status) == 48);

struct EnableCountersParams {
  uint64_t counter_type_flags;
  uint32_t rm_status;  // out
};

// The process's fds open on /dev/nvidia-uvm (the CUDA driver opens one for the
// address space and, on recent drivers, a second one of another type).
std::vector<int> UvmFds() {
  std::vector<int> fds;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return fds;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], target[256];
    std::snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
    const ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::strcmp(target, "/dev/nvidia-uvm") == 0) fds.push_back(std::atoi(e->d_name));
  }
  closedir(d);
  return fds;
}
#endif

}  // namespace

bool UvmToolsCounters::Open(std::string* why) {
#if !defined(__linux__)
  *why = "the driver's unified-memory tools interface is Linux only";
  return false;
#else
  if (counters_) return true;
  const std::vector<int> uvm_fds = UvmFds();
  if (uvm_fds.empty()) {
    *why = "no /dev/nvidia-uvm fd in this process (no CUDA context yet)";
    return false;
  }
  const int tools = open("/dev/nvidia-uvm-tools", O_RDWR | O_CLOEXEC);
  if (tools < 0) {
    *why = std::string("cannot open /dev/nvidia-uvm-tools: ") + std::strerror(errno);
    return false;
  }
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    close(tools);
    *why = "cannot map the counter page";
    return false;
  }
  std::memset(page, 0, 4096);
  uint32_t status = 0;
  bool tracking = false;
  for (const int fd : uvm_fds) {
    alignas(8) unsigned char buf[128] = {};
    InitTrackerParams p{};
    p.control_buffer = reinterpret_cast<uint64_t>(page);
    p.all_processors = 1;
    p.uvm_fd = static_cast<uint32_t>(fd);
    std::memcpy(buf, &p, sizeof(p));
    if (ioctl(tools, kInitEventTracker, buf) != 0) {
      status = 0xffffffffu;
      continue;
    }
    std::memcpy(&p, buf, sizeof(p));
    status = p.rm_status;
    if (status == kNvOk) {  // the address-space fd; the other type is refused
      tracking = true;
      break;
    }
  }
  if (!tracking) {
    close(tools);
    munmap(page, 4096);
    *why =
        status == 0xffffffffu
            ? std::string("the driver refused the counter tracker ioctl: ") + std::strerror(errno)
            : "the driver refused the counter tracker (NV status " + std::to_string(status) + ")";
    return false;
  }
  alignas(8) unsigned char buf[64] = {};
  EnableCountersParams e{};
  e.counter_type_flags = (1ull << kHtoD) | (1ull << kDtoH) | (1ull << kCpuFaults) |
                         (1ull << kPrefetchHtoD) | (1ull << kPrefetchDtoH) | (1ull << kGpuFaults);
  std::memcpy(buf, &e, sizeof(e));
  const int rc = ioctl(tools, kEnableCounters, buf);
  std::memcpy(&e, buf, sizeof(e));
  if (rc != 0 || e.rm_status != kNvOk) {
    close(tools);  // destroys the tracker and unpins the page
    munmap(page, 4096);
    *why = rc != 0 ? std::string("enabling the counters failed: ") + std::strerror(errno)
                   : "enabling the counters failed (NV status " + std::to_string(e.rm_status) + ")";
    return false;
  }
  // `tools` stays open for the life of the process (see the header).
  counters_ = static_cast<uint64_t*>(page);
  return true;
#endif
}

UvmTotals UvmToolsCounters::Read() const {
  UvmTotals t;
  if (!counters_) return t;
  auto at = [&](int i) { return __atomic_load_n(counters_ + i, __ATOMIC_RELAXED); };
  static_assert(kTotalCounters == 10);
  t.bytes_htod = at(kHtoD);
  t.bytes_dtoh = at(kDtoH);
  t.cpu_page_faults = at(kCpuFaults);
  t.prefetch_bytes_htod = at(kPrefetchHtoD);
  t.prefetch_bytes_dtoh = at(kPrefetchDtoH);
  t.gpu_page_faults = at(kGpuFaults);
  return t;
}

}  // namespace stepscope
