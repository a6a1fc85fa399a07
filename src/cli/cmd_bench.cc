// stepscope bench: measure this GPU's ceilings (or show stored ones).
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "roofline/bench_runner.h"
#include "roofline/ceilings.h"

namespace stepscope {

namespace {

// The text heading of one GPU's ceilings.
std::string CeilingsHeading(const Ceilings& c) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "GPU: %s (%s), compute capability %s, %d SMs, measured %s\n\n",
                c.gpu_name.c_str(), c.uuid.empty() ? "uuid unknown" : c.uuid.c_str(), c.cc.c_str(),
                c.sm_count, c.measured_at.c_str());
  return buf;
}

// Text: a heading and a table per GPU. CSV/JSON: one "ceilings" table, a
// gpu column when there are several GPUs.
int PrintCeilings(const ArgParser& p, const std::vector<const Ceilings*>& gpus,
                  const OutputSpec& output, const std::string& footer = "") {
  if (output.format == OutputFormat::kText) {
    std::string s;
    for (size_t i = 0; i < gpus.size(); ++i) {
      s += (i ? "\n" : "") + CeilingsHeading(*gpus[i]) + CeilingsTable(*gpus[i]).RenderText();
    }
    return EmitText("bench", p, s + footer);
  }
  Table all;
  for (const Ceilings* c : gpus) {
    Table t = CeilingsTable(*c);
    if (gpus.size() > 1) t.PrependColumn({"gpu", "GPU", false}, Cell(c->gpu_name + " " + c->uuid));
    if (all.columns().empty()) {
      for (const Column& col : t.columns()) all.AddColumn(col);
    }
    for (const auto& row : t.rows()) all.AddRow(row);
  }
  return EmitTables("bench", p, {{"ceilings", "Ceilings", all, ""}}, output);
}

bool ParseGemm(const std::string& s, BenchOptions* o) {
  std::vector<std::string> p = Split(s, ',');
  if (p.size() != 3) return false;
  int64_t v[3];
  for (int i = 0; i < 3; ++i) {
    if (!ParseInt64(p[static_cast<size_t>(i)], &v[i]) || v[i] < 16 || v[i] > 65536) return false;
  }
  o->gemm_m = static_cast<int>(v[0]);
  o->gemm_n = static_cast<int>(v[1]);
  o->gemm_k = static_cast<int>(v[2]);
  return true;
}

}  // namespace

int RunBench(int argc, char** argv) {
  ArgParser p(
      "bench", "[options]",
      "Measure this GPU's ceilings, the roofs of `stepscope roofline`: DRAM bandwidth (a "
      "large device-to-device copy, bytes read + written), L2 bandwidth (repeated reads of "
      "a buffer that fits in L2), tensor-core throughput for bf16, fp16, tf32, fp8 and fp64 "
      "(cuBLASLt GEMMs on random data), fp32/fp64/fp16 CUDA-core peaks (FMA kernels) and "
      "host<->device copy bandwidth for pinned and pageable memory. Each figure is the "
      "median of --iterations timed repetitions (CUDA events) after --warmup untimed ones.\n\n"
      "The result is stored in the ceilings file keyed by GPU name and UUID (other GPUs' "
      "entries are kept) and printed next to published reference figures.");
  p.Flag("--ceilings", "FILE",
         "ceilings file to update or show (default ~/.cache/stepscope/ceilings.json)");
  p.Flag("--gemm", "M,N,K", "GEMM shape of the tensor-core measurements", "8192,8192,8192");
  p.Flag("--iterations", "N", "timed repetitions per measurement (the median is reported)", "20");
  p.Flag("--warmup", "N", "untimed repetitions before them", "5");
  p.Flag("--device", "N", "CUDA device ordinal", "0");
  p.Flag("--copy-mib", "MIB", "size of each buffer of the device copy", "1024");
  p.Flag("--host-mib", "MIB", "size of the host<->device copies", "256");
  p.Flag("--only", "KEYS",
         "measure only these ceilings (comma-separated keys, e.g. tensor_bf16,dram_bw)");
  p.Switch("--show", "print the stored ceilings instead of measuring (no GPU needed)");
  p.Switch("--no-store", "measure and print, but do not update the ceilings file");
  p.TableOutput("write the table to FILE instead of stdout");
  p.Epilog(
      "examples:\n"
      "  stepscope bench                          # measure, store, print\n"
      "  stepscope bench --gemm 4096,4096,4096 --iterations 50\n"
      "  stepscope bench --only tensor_bf16,dram_bw --no-store\n"
      "  stepscope bench --show                   # stored ceilings of every GPU measured here\n"
      "  stepscope bench --show --format json -o ceilings_table.json\n"
      "\nkeys: dram_bw l2_bw tensor_bf16 tensor_fp16 tensor_tf32 tensor_fp8 tensor_fp64 fp32 fp64 "
      "fp16 h2d_pinned d2h_pinned h2d_pageable d2h_pageable. See docs/roofline.md.\n");
  if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
  OutputSpec output;
  if (Status st = p.ParseTableOutput(&output); !st.ok()) return ReportError("bench", st);
  const OutputFormat fmt = output.format;
  std::string path = p.Has("--ceilings") ? p.Get("--ceilings") : DefaultCeilingsPath();

  if (p.Has("--show")) {
    auto store = LoadCeilingsStore(path);
    if (!store.ok()) return ReportError("bench", store.status());
    if (store->gpus.empty()) {
      // A file named with --ceilings is the input: missing, it is bad input.
      const std::string what =
          path + ": no stored ceilings; run 'stepscope bench' on a GPU machine";
      return ReportError("bench", p.Has("--ceilings") ? InvalidInput(what) : NotFound(what));
    }
    std::vector<const Ceilings*> gpus;
    for (const auto& [key, c] : store->gpus) gpus.push_back(&c);
    return PrintCeilings(p, gpus, output);
  }

  BenchOptions o;
  int64_t v = 0;
  if (!ParseGemm(p.Get("--gemm"), &o)) {
    return ReportError("bench", InvalidInput("--gemm '" + p.Get("--gemm") +
                                             "': want M,N,K, each 16..65536, e.g. 8192,8192,8192"));
  }
  auto positive = [&](const char* flag, int64_t lo, int64_t hi, int64_t* out) {
    if (!ParseInt64(p.Get(flag), out) || *out < lo || *out > hi) {
      ReportError("bench", InvalidInput(std::string(flag) + " '" + p.Get(flag) + "': want " +
                                        std::to_string(lo) + ".." + std::to_string(hi)));
      return false;
    }
    return true;
  };
  if (!positive("--iterations", 1, 100000, &v)) return 2;
  o.iterations = static_cast<int>(v);
  if (!positive("--warmup", 0, 100000, &v)) return 2;
  o.warmup = static_cast<int>(v);
  if (!positive("--device", 0, 1023, &v)) return 2;
  o.device = static_cast<int>(v);
  if (!positive("--copy-mib", 1, 1 << 20, &v)) return 2;
  o.dram_bytes = v << 20;
  if (!positive("--host-mib", 1, 1 << 20, &v)) return 2;
  o.host_bytes = v << 20;
  o.only = p.Get("--only");
  for (const std::string& k : Split(o.only, ',')) {
    if (!k.empty() && !FindCeilingKey(k)) {
      return ReportError(
          "bench", InvalidInput("--only: unknown ceiling '" + k + "'; see --help for the keys"));
    }
  }

  std::string notes;
  auto c = MeasureCeilings(o, &notes);
  if (!c.ok()) return ReportError("bench", c.status());
  for (const std::string& n : Split(notes, '\n')) {
    if (!n.empty()) CliNote("bench", "note: " + n);
  }
  if (!p.Has("--no-store")) {
    Status st = SaveCeilings(path, *c);
    if (!st.ok()) return ReportError("bench", st);
  }
  return PrintCeilings(p, {&*c}, output,
                       fmt == OutputFormat::kText && !p.Has("--no-store")
                           ? "\nstored in " + path + "\n"
                           : std::string());
}

}  // namespace stepscope
