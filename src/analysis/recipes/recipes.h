// Recipes: the summary tables of `stepscope stats`, one small unit each with a
// documented output schema (docs/recipes.md: definition, columns, units).
//
// Every recipe reads a TraceModel through a Scope (the --time-range, --nvtx,
// --step and --device filters, see scope.h) and returns a Table, so that text,
// CSV and JSON output and the rank/file columns of multi-trace runs come for
// free. Times are integer nanoseconds; times of day are "ns since the trace
// start" (TraceModel::origin_ns()).
#pragma once

#include <string>
#include <vector>

#include "analysis/model/scope.h"
#include "analysis/model/steps.h"
#include "analysis/model/trace_model.h"
#include "common/status.h"
#include "common/table.h"

namespace stepscope {

struct RecipeOptions {
  Scope scope;
  int buckets = 20;   // gpu_time_util: number of time buckets
  std::string name;   // cuda_gpu_kern_pace / nvtx_pace: the kernel / range (empty: pick)
  StepOptions steps;  // nvtx_pace picks the step ranges by default
};

using RecipeFn = StatusOr<Table> (*)(const TraceModel&, const RecipeOptions&);

struct RecipeInfo {
  const char* name;
  const char* summary;
  bool in_default_set;  // run by `stats` without --report
  RecipeFn run;
};

const std::vector<RecipeInfo>& Recipes();
const RecipeInfo* FindRecipe(const std::string& name);

// The recipes (declared for tests and other front-ends).
StatusOr<Table> CudaGpuKernSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> CudaApiSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> CudaGpuMemTimeSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> CudaGpuMemSizeSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> NvtxSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> NvtxGpuProjSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> CudaGpuKernPace(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> NvtxPace(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> GpuTimeUtil(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> UmSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> UmTotalSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> UmCpuPageFaultsSum(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> UmStepShare(const TraceModel& m, const RecipeOptions& o);
StatusOr<Table> OsrtSum(const TraceModel& m, const RecipeOptions& o);  // recipes_host.cc
StatusOr<Table> PythonHotspotsRecipe(const TraceModel& m,
                                     const RecipeOptions& o);               // recipes_host.cc
StatusOr<Table> ThreadStates(const TraceModel& m, const RecipeOptions& o);  // recipes_host.cc
StatusOr<Table> GpuMetricsSum(const TraceModel& m,
                              const RecipeOptions& o);  // recipes_gpu_metrics.cc

// Shared by the recipes: the nsys-style statistic columns
// (time_pct, total_ns, instances, avg_ns, med_ns, min_ns, max_ns, stddev_ns).
// The titles are the column names of nsys's report of the same kind (what
// `stats --nsys-names` writes as CSV headers); `count_title` is the count's:
// "Instances" (kernels, NVTX ranges), "Num Calls" (API and OS-runtime calls),
// "Count" (memory operations).
std::vector<Column> StatColumns(const char* count_title = "Instances");
std::vector<Cell> StatCells(const DurationStats& s, int64_t grand_total);

}  // namespace stepscope
