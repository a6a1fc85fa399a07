#include "roofline/ceilings.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "analysis/model/machine_constants.h"
#include "common/file_util.h"
#include "common/json_value.h"
#include "common/json_writer.h"
#include "common/strings.h"

namespace stepscope {

const std::vector<CeilingKey>& CeilingKeys() {
  static const std::vector<CeilingKey> keys = {
      {"dram_bw", "DRAM bandwidth", "B/s", "device-to-device copy, bytes read + written"},
      {"l2_bw", "L2 bandwidth", "B/s", "repeated reads of a buffer that fits in L2"},
      {"tensor_bf16", "tensor bf16", "FLOP/s", "cuBLASLt GEMM, bf16 in, fp32 accumulate"},
      {"tensor_fp16", "tensor fp16", "FLOP/s", "cuBLASLt GEMM, fp16 in, fp32 accumulate"},
      {"tensor_tf32", "tensor tf32", "FLOP/s", "cuBLASLt GEMM, fp32 in, tf32 compute"},
      {"tensor_fp8", "tensor fp8", "FLOP/s", "cuBLASLt GEMM, e4m3 in, fp32 accumulate"},
      {"tensor_fp64", "tensor fp64", "FLOP/s", "cuBLASLt GEMM, fp64 (DMMA)"},
      {"fp32", "fp32 (CUDA cores)", "FLOP/s", "FMA kernel, 2 FLOPs per FMA"},
      {"fp64", "fp64 (CUDA cores)", "FLOP/s", "FMA kernel, 2 FLOPs per FMA"},
      {"fp16", "fp16 (CUDA cores)", "FLOP/s", "HFMA2 kernel, counted like the SASS counters"},
      {"h2d_pinned", "host->device pinned", "B/s", "cudaMemcpyAsync from cudaMallocHost memory"},
      {"d2h_pinned", "device->host pinned", "B/s", "cudaMemcpyAsync to cudaMallocHost memory"},
      {"h2d_pageable", "host->device pageable", "B/s", "cudaMemcpy from malloc memory"},
      {"d2h_pageable", "device->host pageable", "B/s", "cudaMemcpy to malloc memory"},
  };
  return keys;
}

const CeilingKey* FindCeilingKey(const std::string& key) {
  for (const CeilingKey& k : CeilingKeys()) {
    if (key == k.key) return &k;
  }
  return nullptr;
}

double Ceilings::Get(const std::string& key) const {
  auto it = values.find(key);
  return it == values.end() ? 0 : it->second.value;
}

std::string DefaultCeilingsPath() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string base;
  if (xdg && *xdg) {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = std::string(home && *home ? home : ".") + "/.cache";
  }
  return base + "/stepscope/ceilings.json";
}

namespace {

JsonValue EntryJson(const Ceilings& c) {
  JsonValue e = JsonValue::Object();
  e.Set("name", JsonValue::String(c.gpu_name));
  e.Set("uuid", JsonValue::String(c.uuid));
  e.Set("cc", JsonValue::String(c.cc));
  e.Set("sm_count", JsonValue::Double(c.sm_count));
  e.Set("measured_at", JsonValue::String(c.measured_at));
  if (!c.host.empty()) e.Set("host", JsonValue::String(c.host));
  JsonValue vals = JsonValue::Object();
  for (const auto& [key, v] : c.values) {
    JsonValue one = JsonValue::Object();
    one.Set("value", JsonValue::Double(v.value));
    const CeilingKey* k = FindCeilingKey(key);
    one.Set("unit", JsonValue::String(k ? k->unit : ""));
    one.Set("detail", JsonValue::String(v.detail));
    vals.Set(key, std::move(one));
  }
  e.Set("ceilings", std::move(vals));
  return e;
}

StatusOr<Ceilings> EntryFromJson(const JsonValue& e, const std::string& where) {
  if (!e.is_object()) return InvalidInput(where + ": GPU entry is not an object");
  Ceilings c;
  c.gpu_name = e.StringOr("name", "");
  c.uuid = e.StringOr("uuid", "");
  c.cc = e.StringOr("cc", "");
  c.sm_count = static_cast<int>(e.NumberOr("sm_count", 0));
  c.measured_at = e.StringOr("measured_at", "");
  c.host = e.StringOr("host", "");
  const JsonValue* vals = e.Get("ceilings");
  if (!vals || !vals->is_object())
    return InvalidInput(where + ": entry has no \"ceilings\" object");
  for (const auto& [key, v] : vals->members()) {
    if (!v.is_object() || !v.Get("value") || !v.Get("value")->is_number()) {
      return InvalidInput(where + ": ceiling \"" + key + "\" has no numeric \"value\"");
    }
    c.values[key] = Ceiling{v.NumberOr("value", 0), v.StringOr("detail", "")};
  }
  return c;
}

}  // namespace

std::string CeilingsJson(const Ceilings& c) { return EntryJson(c).Dump(); }

StatusOr<Ceilings> CeilingsFromJson(const std::string& json) {
  ASSIGN_OR_RETURN(JsonValue v, ParseJson(json));
  return EntryFromJson(v, "ceilings");
}

StatusOr<CeilingsStore> ParseCeilingsStore(const std::string& json, const std::string& path) {
  auto v = ParseJson(json);
  if (!v.ok()) return InvalidInput(path + ": " + v.status().message());
  if (!v->is_object() || v->StringOr("format", "") != "stepscope-ceilings") {
    return InvalidInput(path +
                        ": not a stepscope ceilings file (no \"format\": \"stepscope-ceilings\")");
  }
  CeilingsStore store;
  const JsonValue* gpus = v->Get("gpus");
  if (!gpus || !gpus->is_object()) return store;
  for (const auto& [key, entry] : gpus->members()) {
    ASSIGN_OR_RETURN(Ceilings c, EntryFromJson(entry, path + ": gpus[\"" + key + "\"]"));
    store.gpus[c.StoreKey()] = std::move(c);
  }
  return store;
}

StatusOr<CeilingsStore> LoadCeilingsStore(const std::string& path) {
  if (!FileExists(path)) return CeilingsStore{};
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseCeilingsStore(text, path);
}

std::string CeilingsStoreJson(const CeilingsStore& store) {
  // One GPU per line: small diffs when a machine is re-measured.
  std::string s = "{\"format\": \"stepscope-ceilings\", \"version\": 1, \"gpus\": {";
  bool first = true;
  for (const auto& [key, c] : store.gpus) {
    s += first ? "\n  " : ",\n  ";
    first = false;
    s += JsonQuote(key) + ": " + EntryJson(c).Dump();
  }
  s += "\n}}\n";
  return s;
}

Status SaveCeilings(const std::string& path, const Ceilings& c) {
  ASSIGN_OR_RETURN(CeilingsStore store, LoadCeilingsStore(path));
  store.gpus[c.StoreKey()] = c;
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    std::string dir = path.substr(0, slash);
    std::string partial;
    for (const std::string& part : Split(dir, '/')) {
      partial += (partial.empty() && dir[0] != '/') ? part : "/" + part;
      if (!part.empty() && !FileExists(partial)) {
        if (::mkdir(partial.c_str(), 0755) != 0 && !FileExists(partial)) {
          return IoError(partial + ": cannot create directory for the ceilings file");
        }
      }
    }
  }
  return WriteFileAtomic(path, CeilingsStoreJson(store));
}

StatusOr<Ceilings> FindCeilings(const CeilingsStore& store, const std::string& gpu_name,
                                const std::string& uuid, std::string* how) {
  if (!uuid.empty()) {
    for (const auto& [key, c] : store.gpus) {
      if (c.uuid == uuid) {
        if (how) *how = "uuid";
        return c;
      }
    }
  }
  const Ceilings* by_name = nullptr;
  int n = 0;
  for (const auto& [key, c] : store.gpus) {
    if (c.gpu_name == gpu_name) {
      by_name = &c;
      ++n;
    }
  }
  if (n >= 1) {
    if (how) *how = n == 1 ? "name" : "name (first of " + std::to_string(n) + ")";
    return *by_name;
  }
  return NotFound("no measured ceilings for GPU '" + gpu_name + "'" +
                  (uuid.empty() ? "" : " (" + uuid + ")") +
                  ": run 'stepscope bench' on this machine first, or pass --ceilings FILE");
}

const std::vector<ReferenceFigure>& ReferenceFigures() {
  // Host<->device copy figures of the two host attachments of an H100 (x86
  // over PCIe Gen5; Grace Hopper over NVLink-C2C), from the table of host
  // links the analysis prices copies with (analysis/model/machine_constants.cc), and
  // the figures recorded on the project's lent machines for the bench
  // acceptance.
  static const std::vector<ReferenceFigure> figs = [] {
    std::vector<ReferenceFigure> v;
    if (const HostLink* x = FindHostLink("x86+H100")) {
      v.push_back({"h2d_pinned", x->name, x->h2d_pinned});
      v.push_back({"d2h_pinned", x->name, x->d2h_pinned});
      v.push_back({"h2d_pageable", x->name, x->h2d_pageable});
      v.push_back({"d2h_pageable", x->name, x->d2h_pageable});
    }
    if (const HostLink* g = FindHostLink("GH200 C2C")) {
      v.push_back({"h2d_pinned", g->name, g->h2d_pinned});
      v.push_back({"d2h_pinned", g->name, g->d2h_pinned});
    }
    v.push_back({"tensor_bf16", "lent H100", 798e12});
    v.push_back({"dram_bw", "lent H100", 3.0e12});
    v.push_back({"tensor_bf16", "lent H200", 790e12});
    v.push_back({"dram_bw", "lent H200", 4.3e12});
    return v;
  }();
  return figs;
}

namespace {

// Display scale for a ceiling: host copies in GB/s, other bandwidths in TB/s,
// compute in TFLOP/s.
void DisplayScale(const std::string& key, const char* unit, double* scale, std::string* shown) {
  if (std::string(unit) == "FLOP/s") {
    *scale = 1e12;
    *shown = "TFLOP/s";
  } else if (key.find("h2d") == 0 || key.find("d2h") == 0) {
    *scale = 1e9;
    *shown = "GB/s";
  } else {
    *scale = 1e12;
    *shown = "TB/s";
  }
}

}  // namespace

Table CeilingsTable(const Ceilings& c) {
  Table t({{"ceiling", "ceiling", false},
           {"measured", "measured", true},
           {"unit", "unit", false},
           {"reference", "reference", false},
           {"detail", "how", false}});
  for (const CeilingKey& k : CeilingKeys()) {
    auto it = c.values.find(k.key);
    double scale = 1;
    std::string unit;
    DisplayScale(k.key, k.unit, &scale, &unit);
    std::string refs;
    for (const ReferenceFigure& r : ReferenceFigures()) {
      if (std::string(r.key) != k.key) continue;
      if (!refs.empty()) refs += "; ";
      refs += std::string(r.system) + " " + FormatFixed(r.value / scale, 2);
    }
    if (it == c.values.end()) {
      t.AddRow({k.label, "-", unit, refs, "not measured"});
    } else {
      t.AddRow({k.label, Cell(it->second.value / scale, 2), unit, refs, it->second.detail});
    }
  }
  return t;
}

std::string FormatGpuUuid(const unsigned char b[16]) {
  char buf[48];
  std::snprintf(buf, sizeof(buf),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

}  // namespace stepscope
