#include "roofline/bench_runner.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <memory>

#include "common/env_contract.h"
#include "common/file_util.h"
#include "roofline/bench_api.h"

namespace stepscope {

std::string BenchLibraryPath() {
  const char* env = std::getenv(kEnvBenchLib);
  if (env && *env) return env;
  return ExecutableDir() + "/../lib/libstepscope_bench.so";
}

std::string UtcNowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

StatusOr<Ceilings> MeasureCeilings(const BenchOptions& o, std::string* notes) {
  std::string path = BenchLibraryPath();
  if (!FileExists(path)) {
    return Unavailable(path +
                       " not found: this stepscope was built without the CUDA compiler "
                       "(nvcc), so it cannot measure ceilings; rebuild with CUDA, or pass "
                       "--ceilings FILE to commands that need them");
  }
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    return Unavailable(std::string("cannot load ") + path + ": " + ::dlerror() +
                       " (bench needs the CUDA runtime and cuBLASLt, libcudart.so.13 and "
                       "libcublasLt.so.13)");
  }
  auto run = reinterpret_cast<StepscopeBenchRunFn>(::dlsym(lib, "stepscope_bench_run"));
  if (!run) {
    ::dlclose(lib);
    return Unavailable(path + ": no stepscope_bench_run symbol (a library of another version?)");
  }
  StepscopeBenchOptions opt{};
  opt.abi = STEPSCOPE_BENCH_ABI;
  opt.device = o.device;
  opt.gemm_m = o.gemm_m;
  opt.gemm_n = o.gemm_n;
  opt.gemm_k = o.gemm_k;
  opt.iterations = o.iterations;
  opt.warmup = o.warmup;
  opt.dram_bytes = o.dram_bytes;
  opt.host_bytes = o.host_bytes;
  opt.only = o.only.c_str();
  auto result = std::make_unique<StepscopeBenchResult>();
  char error[512] = {0};
  int rc = run(&opt, result.get(), error, sizeof(error));
  // The library stays loaded: the CUDA runtime does not like being unloaded.
  if (rc == 2) return Unavailable(error);
  if (rc != 0) return Internal(std::string("bench failed: ") + error);
  Ceilings c;
  c.gpu_name = result->gpu_name;
  c.uuid = FormatGpuUuid(result->uuid);
  c.cc = std::to_string(result->cc_major) + "." + std::to_string(result->cc_minor);
  c.sm_count = result->sm_count;
  c.measured_at = UtcNowIso();
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0) c.host = host;
  for (int i = 0; i < result->count && i < STEPSCOPE_BENCH_MAX_VALUES; ++i) {
    const StepscopeBenchValue& v = result->values[i];
    if (v.value > 0) c.values[v.key] = Ceiling{v.value, v.detail};
  }
  if (notes) *notes = result->notes;
  return c;
}

}  // namespace stepscope
