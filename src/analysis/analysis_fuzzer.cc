// Fuzz target: the whole analysis (steps, every recipe, every rule, diff) on
// arbitrary records, as a corrupted or hostile trace would give it: ends
// before starts, unknown string ids, huge times, overlapping ranges, dangling
// correlations. Nothing may crash, hang or assert. The first bytes also feed
// the --time-range and --step-range parsers and the untraced-steps mark's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "analysis/diff.h"
#include "analysis/model/scope.h"
#include "analysis/model/steps.h"
#include "analysis/recipes/recipes.h"
#include "analysis/rules/rules.h"
#include "analysis/whatif/untraced.h"

namespace {

struct Reader {
  const uint8_t* p;
  size_t n;
  template <typename T>
  bool Get(T* out) {
    if (n < sizeof(T)) return false;
    std::memcpy(out, p, sizeof(T));
    p += sizeof(T);
    n -= sizeof(T);
    return true;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope;
  if (size < 2) return 0;
  const size_t text_len = data[0] % 24;
  if (size < 1 + text_len) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), text_len);
  (void)ParseUntracedSteps(text);
  Reader rd{data + 1 + text_len, size - 1 - text_len};
  TraceModel::Records r;
  r.strings = {"",
               "gemm",
               "nccl_AllReduce",
               "step 1",
               "ProfilerStep#2",
               "cudaLaunchKernel",
               "cudaStreamSynchronize",
               "data",
               "sgemm",
               "cudaMemcpy",
               "stepscope.untraced_steps_ns 2000000,1800000,1900000"};
  DeviceRecord dev{};
  dev.cc_major = 9;
  dev.global_memory_bytes = 1000;
  r.devices.push_back(dev);
  uint8_t kind = 0;
  while (rd.Get(&kind) && r.kernels.size() + r.apis.size() + r.nvtx.size() < 2000) {
    switch (kind % 7) {
      case 0: {
        KernelRecord k{};
        if (!rd.Get(&k)) break;
        k.device %= 4;
        r.kernels.push_back(k);
        break;
      }
      case 1: {
        ApiRecord a{};
        if (!rd.Get(&a)) break;
        r.apis.push_back(a);
        break;
      }
      case 2: {
        NvtxRecord v{};
        if (!rd.Get(&v)) break;
        v.kind = static_cast<NvtxKind>(1 + (static_cast<int>(v.kind) % 3));
        r.nvtx.push_back(v);
        break;
      }
      case 3: {
        MemcpyRecord c{};
        if (!rd.Get(&c)) break;
        c.device %= 4;
        r.memcpys.push_back(c);
        break;
      }
      case 4: {
        SyncRecord s{};
        if (!rd.Get(&s)) break;
        r.syncs.push_back(s);
        break;
      }
      case 5: {
        MemoryRecord m{};
        if (!rd.Get(&m)) break;
        r.memory.push_back(m);
        break;
      }
      case 6: {
        MemsetRecord s{};
        if (!rd.Get(&s)) break;
        s.device %= 4;
        r.memsets.push_back(s);
        break;
      }
    }
  }
  // The loaders return tables ordered by start time.
  auto by = [](auto& v, auto key) {
    std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  };
  by(r.kernels, [](const KernelRecord& k) { return k.start_ns; });
  by(r.apis, [](const ApiRecord& a) { return a.start_ns; });
  by(r.nvtx, [](const NvtxRecord& v) { return v.start_ns; });
  by(r.memcpys, [](const MemcpyRecord& c) { return c.start_ns; });
  by(r.memsets, [](const MemsetRecord& c) { return c.start_ns; });
  by(r.syncs, [](const SyncRecord& c) { return c.start_ns; });
  by(r.memory, [](const MemoryRecord& c) { return c.ts_ns; });
  auto model = TraceModel::FromRecords(std::move(r));
  ScopeSpec spec;
  spec.time_range = text;
  auto scope = Scope::Resolve(*model, spec);
  RecipeOptions o;
  if (scope.ok()) o.scope = *scope;
  for (const RecipeInfo& recipe : Recipes()) (void)recipe.run(*model, o);
  StepOptions so;
  so.range_regex = text;
  (void)DetectSteps(*model, so);
  AnalyzeOptions ao;
  ao.all = true;
  (void)Analyze(*model, ao);
  (void)DiffTraces(*model, *model, DiffOptions());
  return 0;
}
