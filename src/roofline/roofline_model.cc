#include "roofline/roofline_model.h"

#include <algorithm>

#include "common/json_value.h"
#include "common/strings.h"

namespace stepscope {

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return "fp64";
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kTensorFp64:
      return "tensor_fp64";
    case Precision::kTensorTf32:
      return "tensor_tf32";
    case Precision::kTensorFp16:
      return "tensor_fp16";
    case Precision::kTensorBf16:
      return "tensor_bf16";
    case Precision::kTensorFp8:
      return "tensor_fp8";
    case Precision::kTensorOther:
      return "tensor_other";
    case Precision::kCount:
      break;
  }
  return "?";
}

double KernelWork::total_flops() const {
  double s = 0;
  for (double f : flops) s += f;
  return s;
}

void KernelWork::Add(const KernelWork& o) {
  instances += o.instances;
  duration_ns += o.duration_ns;
  for (int i = 0; i < kPrecisionCount; ++i) flops[i] += o.flops[i];
  tensor_int_ops += o.tensor_int_ops;
  dram_read_bytes += o.dram_read_bytes;
  dram_write_bytes += o.dram_write_bytes;
  l2_bytes += o.l2_bytes;
  l1_bytes += o.l1_bytes;
}

namespace {
constexpr const char* kSass = "sm__sass_thread_inst_executed_op_";
constexpr const char* kTensorPrefix = "sm__ops_path_tensor_src_";
}  // namespace

const std::vector<std::string>& FixedMetricNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"gpu__time_duration.sum", "dram__bytes_read.sum",
                                  "dram__bytes_write.sum", "lts__t_bytes.sum",
                                  "l1tex__t_bytes.sum"};
    for (const char* op :
         {"dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma"}) {
      n.push_back(std::string(kSass) + op + "_pred_on.sum");
    }
    return n;
  }();
  return names;
}

bool IsMemoryGroupMetric(const std::string& name) {
  return StartsWith(name, "gpu__time_duration") || StartsWith(name, "dram__") ||
         StartsWith(name, "lts__") || StartsWith(name, "l1tex__");
}

bool IsTensorOpsMetric(const std::string& name) {
  if (!StartsWith(name, kTensorPrefix)) return false;
  if (name.find("_sparsity_") != std::string::npos) return false;
  std::string base = EndsWith(name, ".sum") ? name.substr(0, name.size() - 4) : name;
  if (base.find('.') != std::string::npos) return false;  // another rollup (.avg, .max)
  return base.size() > std::string(kTensorPrefix).size();
}

namespace {

// "bf16_dst_fp32" -> source "bf16", dst "fp32"; "fp64" -> "fp64", "".
void SplitTensorName(const std::string& base, std::string* src, std::string* dst) {
  std::string rest = base.substr(std::string(kTensorPrefix).size());
  size_t d = rest.find("_dst_");
  *src = d == std::string::npos ? rest : rest.substr(0, d);
  *dst = d == std::string::npos ? "" : rest.substr(d + 5);
}

// Tensor source precision -> bucket; returns false for integer sources.
bool TensorBucket(const std::string& src, Precision* p) {
  if (StartsWith(src, "int") || StartsWith(src, "uint") || src == "b1") return false;
  if (src == "fp64") {
    *p = Precision::kTensorFp64;
  } else if (src == "tf32") {
    *p = Precision::kTensorTf32;
  } else if (src == "fp16") {
    *p = Precision::kTensorFp16;
  } else if (src == "bf16") {
    *p = Precision::kTensorBf16;
  } else if (StartsWith(src, "fp8") || src == "e4m3" || src == "e5m2") {
    *p = Precision::kTensorFp8;
  } else {
    *p = Precision::kTensorOther;
  }
  return true;
}

double Get(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

KernelWork WorkFromCounters(const std::map<std::string, double>& m, int instances) {
  KernelWork w;
  w.instances = instances;
  w.duration_ns = Get(m, "gpu__time_duration.sum");
  w.dram_read_bytes = Get(m, "dram__bytes_read.sum");
  w.dram_write_bytes = Get(m, "dram__bytes_write.sum");
  w.l2_bytes = Get(m, "lts__t_bytes.sum");
  w.l1_bytes = Get(m, "l1tex__t_bytes.sum");
  auto sass = [&](const char* op) { return Get(m, std::string(kSass) + op + "_pred_on.sum"); };
  w.flops[static_cast<int>(Precision::kFp64)] = sass("dadd") + sass("dmul") + 2 * sass("dfma");
  w.flops[static_cast<int>(Precision::kFp32)] = sass("fadd") + sass("fmul") + 2 * sass("ffma");
  w.flops[static_cast<int>(Precision::kFp16)] = sass("hadd") + sass("hmul") + 2 * sass("hfma");

  // Tensor ops: per source precision, the aggregate counter when present,
  // else the sum of its _dst_ variants.
  std::map<std::string, double> aggregate, by_dst;
  for (const auto& [name, value] : m) {
    if (!IsTensorOpsMetric(name)) continue;
    std::string base = EndsWith(name, ".sum") ? name.substr(0, name.size() - 4) : name;
    std::string src, dst;
    SplitTensorName(base, &src, &dst);
    if (dst.empty()) {
      aggregate[src] += value;
    } else {
      by_dst[src] += value;
    }
  }
  std::map<std::string, double> per_src = by_dst;
  for (const auto& [src, v] : aggregate) per_src[src] = v;
  for (const auto& [src, ops] : per_src) {
    Precision p;
    if (TensorBucket(src, &p)) {
      w.flops[static_cast<int>(p)] += ops;
    } else {
      w.tensor_int_ops += ops;
    }
  }
  return w;
}

RooflineResult Evaluate(const KernelWork& w, const Ceilings& c) {
  RooflineResult r;
  r.flops = w.total_flops();
  double dur_s = w.duration_ns * 1e-9;
  if (dur_s > 0) {
    r.flops_per_s = r.flops / dur_s;
    r.dram_bytes_per_s = w.dram_bytes() / dur_s;
  }
  if (w.dram_bytes() > 0) r.intensity_dram = r.flops / w.dram_bytes();
  if (w.l2_bytes > 0) r.intensity_l2 = r.flops / w.l2_bytes;
  if (w.l1_bytes > 0) r.intensity_l1 = r.flops / w.l1_bytes;

  // Compute roof: sum over precisions of flops_p / peak_p.
  double t_compute = 0, best_t = 0, most_flops = 0;
  std::string compute_key;
  for (int i = 0; i < kPrecisionCount; ++i) {
    double f = w.flops[i];
    if (f <= 0) continue;
    std::string key = PrecisionName(static_cast<Precision>(i));
    if (f > most_flops) {
      most_flops = f;
      r.precision = key;
    }
    double peak = c.Get(key);
    if (peak <= 0) {
      r.notes.push_back("no ceiling for " + key);
      continue;
    }
    double t = f / peak;
    t_compute += t;
    if (t > best_t) {
      best_t = t;
      compute_key = key;
    }
  }
  double t_dram = c.Get("dram_bw") > 0 ? w.dram_bytes() / c.Get("dram_bw") : 0;
  double t_l2 = c.Get("l2_bw") > 0 ? w.l2_bytes / c.Get("l2_bw") : 0;
  if (c.Get("dram_bw") <= 0 && w.dram_bytes() > 0) r.notes.push_back("no ceiling for dram_bw");
  if (c.Get("l2_bw") <= 0 && w.l2_bytes > 0) r.notes.push_back("no ceiling for l2_bw");

  // The bounding roof; ties go to compute, then DRAM (the classic roofline's order).
  double t_bound = 0;
  r.bound_kind = "unknown";
  if (t_compute > 0) {
    t_bound = t_compute;
    r.bound = compute_key;
    r.bound_kind = "compute";
  }
  if (t_dram > t_bound) {
    t_bound = t_dram;
    r.bound = "dram_bw";
    r.bound_kind = "memory";
  }
  if (t_l2 > t_bound) {
    t_bound = t_l2;
    r.bound = "l2_bw";
    r.bound_kind = "memory";
  }
  r.bound_time_ns = t_bound * 1e9;
  if (w.duration_ns > 0) r.pct_of_bound = 100.0 * r.bound_time_ns / w.duration_ns;

  // Attainable FLOP/s at this DRAM intensity (the roof above the chart point).
  if (t_compute > 0) {
    double compute_roof = r.flops / t_compute;  // effective peak of this precision mix
    double mem_roof = c.Get("dram_bw") > 0 && r.intensity_dram > 0
                          ? c.Get("dram_bw") * r.intensity_dram
                          : compute_roof;
    r.attainable_flops_per_s = std::min(compute_roof, mem_roof);
  }
  return r;
}

std::string CountersJson(const std::map<std::string, double>& counters) {
  JsonValue o = JsonValue::Object();
  for (const auto& [k, v] : counters) o.Set(k, JsonValue::Double(v));
  return o.Dump();
}

StatusOr<std::map<std::string, double>> CountersFromJson(const std::string& json) {
  ASSIGN_OR_RETURN(JsonValue v, ParseJson(json));
  if (!v.is_object()) return InvalidInput("counters: not a JSON object");
  std::map<std::string, double> m;
  for (const auto& [k, x] : v.members()) {
    if (x.is_number()) m[k] = x.AsDouble();
  }
  return m;
}

}  // namespace stepscope
