#include "collector/run_summary.h"

#include <sys/stat.h>

#include "common/strings.h"
#include "store/summary_rows.h"
#include "store/trace_reader.h"

namespace stepscope {

void PrintTraceSummary(const std::string& path, FILE* out) {
  auto r = TraceReader::Open(path);
  struct stat st;
  std::string size =
      ::stat(path.c_str(), &st) == 0 ? FormatBytes(static_cast<uint64_t>(st.st_size)) : "?";
  if (!r.ok()) {
    std::fprintf(out, "  %s (%s): unreadable: %s\n", path.c_str(), size.c_str(),
                 r.status().message().c_str());
    return;
  }
  TraceReader& t = **r;
  int64_t kernels = 0, gpu_ns = 0, nvtx = 0;
  if (auto k = LoadKernelTotals(t.db()); k.ok()) {
    kernels = k->count;
    gpu_ns = k->gpu_ns;
  }
  if (auto n = CountNvtxRows(t.db()); n.ok()) nvtx = *n;
  // Drops per record kind (the collector was behind; stats dropped_*).
  int64_t dropped = 0;
  std::string per_kind;
  if (auto drops = LoadDropStats(t.db()); drops.ok()) {
    for (const StatsTableRow& d : *drops) {
      dropped += d.value;
      const std::string kind =
          d.name == "cupti_dropped_records" ? "cuda activity" : d.name.substr(8);
      per_kind += (per_kind.empty() ? "" : ", ") + kind + " " + FormatCount(d.value);
    }
  }
  const char* state = !t.finalized()                         ? ", NOT finalized"
                      : t.Meta("process_exit", "") == "died" ? ", the process died"
                                                             : "";
  std::fprintf(out, "  %s  (%s, pid %s%s)\n", path.c_str(), size.c_str(),
               t.Meta("pid", "?").c_str(), state);
  // The drop counters are written when the trace is finalized: a trace cut
  // off (killed, disk full) has none, and "0 dropped" would be a lie.
  const std::string drops = !t.finalized() && per_kind.empty()
                                ? "dropped records unknown (not finalized: rows written after the "
                                  "cut are lost)"
                                : FormatCount(dropped) + " dropped records";
  std::fprintf(out, "    %s kernels, GPU time %s, %s NVTX ranges, %s%s%s%s\n",
               FormatCount(kernels).c_str(), FormatDuration(gpu_ns).c_str(),
               FormatCount(nvtx).c_str(), drops.c_str(), per_kind.empty() ? "" : " (",
               per_kind.c_str(), per_kind.empty() ? "" : ")");
  // Unified memory, when the program used it (docs/um.md).
  if (auto um = LoadUmTotals(t.db()); um.ok() && um->rows > 0) {
    std::fprintf(out,
                 "    unified memory: %s host->device, %s device->host migrated, %s GPU fault "
                 "groups ('stepscope analyze' prices them)\n",
                 FormatBytes(static_cast<uint64_t>(um->htod_bytes)).c_str(),
                 FormatBytes(static_cast<uint64_t>(um->dtoh_bytes)).c_str(),
                 FormatCount(um->fault_groups).c_str());
  }
  if (kernels == 0) return;
  auto top = LoadTopKernelNames(t.db(), 3);
  if (!top.ok()) return;
  for (const KernelNameTotal& k : *top) {
    std::string name = t.String(static_cast<StringId>(k.name_id));
    if (name.size() > 90) name = name.substr(0, 87) + "...";
    double pct =
        gpu_ns > 0 ? 100.0 * static_cast<double>(k.total_ns) / static_cast<double>(gpu_ns) : 0;
    std::fprintf(out, "    %5.1f%%  %10s  x%-6s %s\n", pct, FormatDuration(k.total_ns).c_str(),
                 FormatCount(k.count).c_str(), name.c_str());
  }
}

void PrintRunSummary(const std::vector<CollectedTrace>& results, FILE* out) {
  std::vector<std::string> traces;
  int empty = 0;
  for (const CollectedTrace& r : results) {
    if (!r.kept) {
      ++empty;  // recorded nothing: no file kept
    } else {
      traces.push_back(r.path);
    }
  }
  if (empty > 0) {
    std::fprintf(
        out,
        "stepscope: %d process%s initialized CUDA or NVTX but recorded nothing (no trace kept)\n",
        empty, empty == 1 ? "" : "es");
  }
  if (traces.empty()) {
    std::fprintf(out,
                 "stepscope: no trace written (the command used neither CUDA nor NVTX, and ran no "
                 "Python to sample)\n");
    return;
  }
  std::fprintf(out, "stepscope: %zu trace%s written:\n", traces.size(),
               traces.size() == 1 ? "" : "s");
  for (const std::string& t : traces) PrintTraceSummary(t, out);
  std::fprintf(out, "stepscope: next: stepscope stats %s\n", traces[0].c_str());
}

}  // namespace stepscope
