// The entry point of libstepscope_roofline_inject.so (see inject.h), and the
// helpers around the range profiler.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <cuda.h>
#include <cupti.h>

#include "common/env_contract.h"
#include "common/log.h"
#include "roofline/ceilings.h"
#include "roofline/inject/inject.h"
#include "roofline/profile_io.h"

namespace stepscope::inject {

namespace {

std::atomic<bool> g_active{false};
std::mutex g_results_mu;
FILE* g_results = nullptr;
bool g_reported = false;
pid_t g_pid = 0;  // the process we were initialized in (not a fork() child)

// Every entry point runs behind an exception barrier: nothing reaches the
// program (DisableAfterError: one warning, no more profiling).
void CUPTIAPI Callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const void* data) {
  try {
    if (g_active.load(std::memory_order_relaxed)) ProfileCallback(domain, cbid, data);
  } catch (...) {
    DisableAfterError("the CUPTI callback");
  }
}

void AtExit() {
  try {
    // A fork() child that exits through exit() must not write the parent's files.
    if (::getpid() != g_pid) return;
    if (g_active) ProfileFinish();
    std::lock_guard<std::mutex> lock(g_results_mu);
    if (g_results) std::fclose(g_results);
    g_results = nullptr;
  } catch (...) {
    DisableAfterError("exit");
  }
}

}  // namespace

void DisableAfterError(const char* where) {
  static std::atomic<bool> warned{false};
  g_active = false;
  if (!warned.exchange(true)) {
    stepscope::LogWarn("roofline: internal error in %s; the program runs on unprofiled", where);
  }
}

void WriteResultLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_results_mu);
  if (!g_results) {
    const char* path = std::getenv(kEnvRooflineResults);
    if (!path || !*path) return;
    g_results = std::fopen(path, "a");
    if (!g_results) return;
  }
  std::fputs(line.c_str(), g_results);
  std::fflush(g_results);
}

void ReportError(const std::string& message, int code) {
  {
    std::lock_guard<std::mutex> lock(g_results_mu);
    if (g_reported) return;
    g_reported = true;
  }
  LogWarn("roofline: %s", message.c_str());
  WriteResultLine(MessageLine({true, code, message}));
}

bool MpsActive() {
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::string dir = pipe && *pipe ? pipe : "/tmp/nvidia-mps";
  struct stat st;
  return ::stat((dir + "/control").c_str(), &st) == 0;
}

void DeviceIdentity(int ordinal, std::string* name, std::string* uuid) {
  // libcuda is loaded (this library runs inside cuInit); look the functions
  // up instead of linking it, so the library has no hard driver dependency.
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) return;
  using GetFn = CUresult (*)(CUdevice*, int);
  using NameFn = CUresult (*)(char*, int, CUdevice);
  using UuidFn = CUresult (*)(CUuuid*, CUdevice);
  auto get = reinterpret_cast<GetFn>(::dlsym(cuda, "cuDeviceGet"));
  auto get_name = reinterpret_cast<NameFn>(::dlsym(cuda, "cuDeviceGetName"));
  auto get_uuid = reinterpret_cast<UuidFn>(::dlsym(cuda, "cuDeviceGetUuid_v2"));
  if (!get_uuid) get_uuid = reinterpret_cast<UuidFn>(::dlsym(cuda, "cuDeviceGetUuid"));
  CUdevice dev = 0;
  if (get && get(&dev, ordinal) == CUDA_SUCCESS) {
    char buf[256] = {0};
    if (get_name && get_name(buf, sizeof(buf) - 1, dev) == CUDA_SUCCESS) *name = buf;
    CUuuid u;
    if (get_uuid && get_uuid(&u, dev) == CUDA_SUCCESS) {
      *uuid = FormatGpuUuid(reinterpret_cast<const unsigned char*>(u.bytes));
    }
  }
  ::dlclose(cuda);
}

bool IsDriverLaunch(CUpti_CallbackId cbid) {
  for (CUpti_CallbackId id : kDriverLaunchCbids) {
    if (id == cbid) return true;
  }
  return false;
}

CUptiResult EnableDriverLaunchCallbacks(CUpti_SubscriberHandle sub) {
  for (CUpti_CallbackId id : kDriverLaunchCbids) {
    CUptiResult r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
    if (r != CUPTI_SUCCESS) return r;
  }
  return CUPTI_SUCCESS;
}

namespace {
// cuLaunchKernel's and cuLaunchCooperativeKernel's parameters name the
// dimensions alike; cuLaunchKernelEx's config struct too.
template <typename P>
void CopyDims(const P& p, int32_t grid[3], int32_t block[3]) {
  grid[0] = static_cast<int32_t>(p.gridDimX);
  grid[1] = static_cast<int32_t>(p.gridDimY);
  grid[2] = static_cast<int32_t>(p.gridDimZ);
  block[0] = static_cast<int32_t>(p.blockDimX);
  block[1] = static_cast<int32_t>(p.blockDimY);
  block[2] = static_cast<int32_t>(p.blockDimZ);
}
}  // namespace

bool LaunchDims(CUpti_CallbackId cbid, const void* params, int32_t grid[3], int32_t block[3]) {
  if (!params) return false;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      CopyDims(*static_cast<const cuLaunchKernel_params*>(params), grid, block);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      CopyDims(*static_cast<const cuLaunchCooperativeKernel_params*>(params), grid, block);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      if (!p->config) return false;
      CopyDims(*p->config, grid, block);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace stepscope::inject

using namespace stepscope::inject;

namespace {
int InitializeInjectionImpl();
}  // namespace

// Called by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH names
// this library. Returns 1 (success) even when profiling cannot start: the
// program must run on.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    return InitializeInjectionImpl();
  } catch (...) {
    DisableAfterError("the CUDA injection entry point");
    return 1;
  }
}

namespace {
int InitializeInjectionImpl() {
  static bool done = false;
  if (done) return 1;
  done = true;
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r =
      cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(Callback), nullptr);
  if (r != CUPTI_SUCCESS) {
    ReportError(stepscope::ExplainCuptiError(static_cast<int>(r), "cuptiSubscribe", MpsActive()),
                static_cast<int>(r));
    return 1;
  }
  if (!ProfileStart(subscriber)) {
    cuptiUnsubscribe(subscriber);
    return 1;
  }
  g_active = true;
  g_pid = ::getpid();
  std::atexit(AtExit);
  return 1;
}
}  // namespace
