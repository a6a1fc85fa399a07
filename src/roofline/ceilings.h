// Ceilings: the measured peak rates of one GPU (what `stepscope bench`
// writes and `stepscope roofline` reads).
//
// The store is one JSON file (default ~/.cache/stepscope/ceilings.json)
// holding the ceilings of every GPU measured on this machine, keyed by
// "<gpu name>|<uuid>", so that a rerun on the same GPU replaces its entry and
// other GPUs' entries stay:
//
//   {"format": "stepscope-ceilings", "version": 1,
//    "gpus": {"NVIDIA H100 80GB HBM3|GPU-5f3c...": {
//        "name": ..., "uuid": ..., "cc": "9.0", "sm_count": 132, "measured_at": "2025-...",
//        "ceilings": {"dram_bw": {"value": 3.0e12, "unit": "B/s", "detail": "..."}, ...}}}}
//
// Rates are in base units: bytes/s for bandwidths, FLOP/s for compute.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/table.h"

namespace stepscope {

// The ceiling keys, with what they measure. Compute keys name the precision
// whose FLOPs they bound (see Precision in roofline_model.h).
struct CeilingKey {
  const char* key;
  const char* label;  // for tables and the chart
  const char* unit;   // "B/s" or "FLOP/s"
  const char* what;   // how bench measures it
};
const std::vector<CeilingKey>& CeilingKeys();
const CeilingKey* FindCeilingKey(const std::string& key);

struct Ceiling {
  double value = 0;    // bytes/s or FLOP/s
  std::string detail;  // e.g. "cuBLASLt 8192x8192x8192, median of 20"
};

struct Ceilings {
  std::string gpu_name;
  std::string uuid;  // "GPU-..."; empty when unknown
  std::string cc;    // "9.0"
  int sm_count = 0;
  std::string measured_at;  // ISO-8601 UTC
  std::string host;         // the machine bench ran on; "" in files written before it was kept
  std::map<std::string, Ceiling> values;

  std::string StoreKey() const { return gpu_name + "|" + uuid; }
  // Value of `key`, or 0 when not measured.
  double Get(const std::string& key) const;
};

// The whole store: every GPU's ceilings.
struct CeilingsStore {
  std::map<std::string, Ceilings> gpus;  // by StoreKey()
};

std::string DefaultCeilingsPath();  // $XDG_CACHE_HOME or ~/.cache + /stepscope/ceilings.json
StatusOr<CeilingsStore> ParseCeilingsStore(const std::string& json, const std::string& path);
StatusOr<CeilingsStore> LoadCeilingsStore(const std::string& path);  // missing file: empty store
std::string CeilingsStoreJson(const CeilingsStore& store);
Status SaveCeilings(const std::string& path,
                    const Ceilings& c);       // merges into the file, atomically
std::string CeilingsJson(const Ceilings& c);  // one GPU's entry
StatusOr<Ceilings> CeilingsFromJson(const std::string& json);

// Finds the ceilings for a GPU: exact uuid match first, then a unique entry
// with the same name. `how` tells which ("uuid", "name"); not found:
// kNotFound with a message telling to run `stepscope bench`.
StatusOr<Ceilings> FindCeilings(const CeilingsStore& store, const std::string& gpu_name,
                                const std::string& uuid, std::string* how);

// Published host<->device copy figures the bench table is printed next to.
struct ReferenceFigure {
  const char* key;     // ceiling key
  const char* system;  // "x86 + H100 (PCIe Gen5)"
  double value;        // bytes/s
};
const std::vector<ReferenceFigure>& ReferenceFigures();

// The bench table: ceiling, measured value, unit, reference figures, detail.
Table CeilingsTable(const Ceilings& c);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from the 16 raw UUID bytes.
std::string FormatGpuUuid(const unsigned char bytes[16]);

}  // namespace stepscope
