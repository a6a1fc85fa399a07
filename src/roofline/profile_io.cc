#include "roofline/profile_io.h"

#include "common/json_value.h"
#include "common/strings.h"

namespace stepscope {

namespace {

JsonValue Dim3Json(const int32_t d[3]) {
  JsonValue a = JsonValue::Array();
  for (int i = 0; i < 3; ++i) a.Append(JsonValue::Double(d[i]));
  return a;
}

bool Dim3From(const JsonValue* v, int32_t out[3]) {
  if (!v || !v->is_array() || v->items().size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    const JsonValue& x = v->items()[static_cast<size_t>(i)];
    if (!x.is_number() || x.AsDouble() < 0 || x.AsDouble() > 2147483647.0) return false;
    out[i] = static_cast<int32_t>(x.AsDouble());
  }
  return true;
}

}  // namespace

std::string TargetsJson(const ProfileTargets& t) {
  JsonValue o = JsonValue::Object();
  o.Set("version", JsonValue::Double(1));
  o.Set("instances", JsonValue::Double(t.instances));
  o.Set("skip", JsonValue::Double(t.skip));
  JsonValue ks = JsonValue::Array();
  for (const KernelTarget& k : t.kernels) {
    JsonValue e = JsonValue::Object();
    e.Set("name", JsonValue::String(k.name));
    e.Set("mangled", JsonValue::String(k.mangled));
    e.Set("grid", Dim3Json(k.grid));
    e.Set("block", Dim3Json(k.block));
    ks.Append(std::move(e));
  }
  o.Set("kernels", std::move(ks));
  return o.Dump() + "\n";
}

StatusOr<ProfileTargets> ParseTargets(const std::string& json) {
  ASSIGN_OR_RETURN(JsonValue v, ParseJson(json));
  if (!v.is_object()) return InvalidInput("targets: not a JSON object");
  ProfileTargets t;
  t.instances = static_cast<int>(v.NumberOr("instances", 1));
  t.skip = static_cast<int>(v.NumberOr("skip", 0));
  const JsonValue* ks = v.Get("kernels");
  if (!ks || !ks->is_array()) return InvalidInput("targets: no \"kernels\" array");
  for (const JsonValue& e : ks->items()) {
    KernelTarget k;
    k.name = e.StringOr("name", "");
    k.mangled = e.StringOr("mangled", "");
    if (!Dim3From(e.Get("grid"), k.grid) || !Dim3From(e.Get("block"), k.block)) {
      return InvalidInput("targets: kernel '" + k.name + "' needs \"grid\" and \"block\" [x,y,z]");
    }
    t.kernels.push_back(std::move(k));
  }
  return t;
}

ProfileResults ParseResults(const std::string& text) {
  ProfileResults r;
  for (const std::string& raw : Split(text, '\n')) {
    std::string line = Trim(raw);
    if (line.empty()) continue;
    auto v = ParseJson(line);
    if (!v.ok() || !v->is_object()) {
      ++r.bad_lines;
      continue;
    }
    std::string type = v->StringOr("type", "");
    if (type == "device") {
      const int passes = static_cast<int>(v->NumberOr("passes", 0));
      r.device.run_passes.push_back(passes);
      if (r.has_device) continue;  // a later run's line: same device, a subset of the metrics
      r.has_device = true;
      r.device.name = v->StringOr("name", "");
      r.device.uuid = v->StringOr("uuid", "");
      r.device.chip = v->StringOr("chip", "");
      r.device.passes = passes;
      if (const JsonValue* m = v->Get("metrics"); m && m->is_array()) {
        for (const JsonValue& x : m->items()) {
          if (x.is_string()) r.device.metrics.push_back(x.AsString());
        }
      }
    } else if (type == "instance") {
      ProfileInstance i;
      i.target = static_cast<int>(v->NumberOr("target", -1));
      i.launch_index = static_cast<int64_t>(v->NumberOr("launch_index", -1));
      i.name = v->StringOr("name", "");
      i.ranges = static_cast<int>(v->NumberOr("ranges", 0));
      i.group = v->StringOr("group", "all");
      Dim3From(v->Get("grid"), i.grid);
      Dim3From(v->Get("block"), i.block);
      const JsonValue* c = v->Get("counters");
      if (!c || !c->is_object() || i.target < 0) {
        ++r.bad_lines;
        continue;
      }
      for (const auto& [k, x] : c->members()) {
        if (x.is_number()) i.counters[k] = x.AsDouble();
      }
      r.instances.push_back(std::move(i));
    } else if (type == "error" || type == "note") {
      r.messages.push_back(
          {type == "error", static_cast<int>(v->NumberOr("code", 0)), v->StringOr("message", "")});
    } else {
      ++r.bad_lines;
    }
  }
  return r;
}

std::string DeviceLine(const ProfileDevice& d) {
  JsonValue o = JsonValue::Object();
  o.Set("type", JsonValue::String("device"));
  o.Set("name", JsonValue::String(d.name));
  o.Set("uuid", JsonValue::String(d.uuid));
  o.Set("chip", JsonValue::String(d.chip));
  o.Set("passes", JsonValue::Double(d.passes));
  JsonValue m = JsonValue::Array();
  for (const std::string& s : d.metrics) m.Append(JsonValue::String(s));
  o.Set("metrics", std::move(m));
  return o.Dump() + "\n";
}

std::string InstanceLine(const ProfileInstance& i) {
  JsonValue o = JsonValue::Object();
  o.Set("type", JsonValue::String("instance"));
  o.Set("target", JsonValue::Double(i.target));
  o.Set("launch_index", JsonValue::Double(static_cast<double>(i.launch_index)));
  o.Set("name", JsonValue::String(i.name));
  o.Set("grid", Dim3Json(i.grid));
  o.Set("block", Dim3Json(i.block));
  o.Set("ranges", JsonValue::Double(i.ranges));
  o.Set("group", JsonValue::String(i.group));
  JsonValue c = JsonValue::Object();
  for (const auto& [k, v] : i.counters) c.Set(k, JsonValue::Double(v));
  o.Set("counters", std::move(c));
  return o.Dump() + "\n";
}

std::string MessageLine(const ProfileMessage& m) {
  JsonValue o = JsonValue::Object();
  o.Set("type", JsonValue::String(m.error ? "error" : "note"));
  o.Set("code", JsonValue::Double(m.code));
  o.Set("message", JsonValue::String(m.message));
  return o.Dump() + "\n";
}

std::string ExplainCuptiError(int code, const std::string& during, bool mps) {
  std::string what = during + " failed (CUPTI error " + std::to_string(code) + ")";
  switch (code) {
    case 35:  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
    case 40:  // CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES
      return what +
             ": no permission to read GPU performance counters. Run as root, or allow all users: "
             "load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 (e.g. a line "
             "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/, then "
             "reboot); in a container, start it with --cap-add SYS_ADMIN";
    case 43:  // CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED
      return what +
             ": counter profiling is not supported on this MIG instance; profile on a full GPU";
    case 33:  // CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED
      return what +
             ": counter profiling is not enabled for this virtual GPU (vGPU profiling must be "
             "enabled by the hypervisor)";
    case 41:  // CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED
      return what + ": the GPU is in confidential-computing mode, which forbids counter profiling";
    case 42:  // CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED
      return what + ": counter profiling is not supported on this (CMP) device";
    case 45:  // CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED
      return what + ": counter profiling is not supported under WSL on this driver";
    case 39:  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
      return what +
             ": another CUPTI client is attached to this process (Nsight Systems/Compute, "
             "stepscope profile, or torch.profiler); run roofline without it";
    case 36:  // CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED
    case 26:  // CUPTI_ERROR_HARDWARE_BUSY
      return what + ": the GPU's counters are in use by another profiling session" +
             (mps ? " (MPS is active: profile without the MPS server)" : "");
    case 27:  // CUPTI_ERROR_NOT_SUPPORTED
    case 46:  // CUPTI_ERROR_INVALID_CHIP_NAME
      return what + ": this GPU or configuration does not support the CUPTI range profiler" +
             (mps ? " (MPS is active: counter profiling under MPS needs Volta or newer and one "
                    "client; stop the MPS server and retry)"
                  : "");
    default:
      return what +
             (mps ? " (MPS is active, which may be the cause: retry without the MPS server)" : "");
  }
}

}  // namespace stepscope
