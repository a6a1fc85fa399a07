// The files `stepscope roofline` and the injected profiler
// (libstepscope_roofline_inject.so) exchange. Both are JSON so one parser
// (roofline/json.h) serves both sides.
//
// Targets (CLI -> profiler), one JSON document, path in
// STEPSCOPE_ROOFLINE_TARGETS:
//   {"version": 1, "instances": K, "skip": S, "kernels": [
//      {"name": demangled, "mangled": ..., "grid": [x,y,z], "block": [x,y,z]}, ...]}
//
// Results (profiler -> CLI), JSON lines appended to STEPSCOPE_ROOFLINE_RESULTS,
// each line flushed when written so a crash loses at most the line in flight:
//   {"type": "device", "name": ..., "uuid": ..., "chip": ..., "passes": N, "metrics": [...]}
//   {"type": "instance", "target": i, "launch_index": n, "name": ..., "grid": [..], "block": [..],
//    "ranges": r, "counters": {"gpu__time_duration.sum": ..., ...}}
//   {"type": "error", "code": CUPTI result, "message": "..."}
//   {"type": "note", "message": "..."}
// A line that does not parse (a truncated last line) is counted, not fatal.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "roofline/kernel_target.h"

namespace stepscope {

struct ProfileTargets {
  int instances = 1;  // at most this many profiled launches per kernel
  int skip = 0;       // matching launches to let pass before profiling
  std::vector<KernelTarget> kernels;
};

std::string TargetsJson(const ProfileTargets& t);
StatusOr<ProfileTargets> ParseTargets(const std::string& json);

struct ProfileDevice {
  std::string name, uuid, chip;
  int passes = 0;  // counter passes per instance (of the first device line)
  // Counter passes of each profiling run, in the order of their device lines
  // (one line per run: "all" metrics, then "memory").
  std::vector<int> run_passes;
  std::vector<std::string> metrics;
};

struct ProfileInstance {
  int target = -1;
  int64_t launch_index = -1;
  std::string name;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int ranges = 0;
  std::string group = "all";  // "all" metrics, or "memory": time + memory only, one pass
  std::map<std::string, double> counters;
};

struct ProfileMessage {
  bool error = false;
  int code = 0;
  std::string message;
};

struct ProfileResults {
  bool has_device = false;
  ProfileDevice device;
  std::vector<ProfileInstance> instances;
  std::vector<ProfileMessage> messages;
  int bad_lines = 0;
};

ProfileResults ParseResults(const std::string& text);

// Writers used by the injected profiler (one line each, '\n'-terminated).
std::string DeviceLine(const ProfileDevice& d);
std::string InstanceLine(const ProfileInstance& i);
std::string MessageLine(const ProfileMessage& m);

// The message for a CUPTI profiling failure, naming the fix when there is one
// (permissions: NVreg_RestrictProfilingToAdminUsers=0 or root; MPS; MIG; vGPU...).
std::string ExplainCuptiError(int cupti_result, const std::string& during, bool mps_active);

}  // namespace stepscope
