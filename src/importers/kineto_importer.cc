#include "importers/kineto_importer.h"

#include <algorithm>
#include <cstring>

#include "importers/exact_decimal.h"
#include "importers/input_stream.h"
#include "importers/kineto_host.h"
#include "store/trace_fixups.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

constexpr uint64_t kCommitEveryRows = 1000000;

struct CategoryInfo {
  const char* stat;
  const char* doc;
};
// Indexed by KinetoImporter::Category.
constexpr CategoryInfo kCategories[] = {
    {"kineto_kernel_events", "events with cat 'kernel' ('Kernel' before 1.10; stored in kernels)"},
    {"kineto_gpu_memcpy_events", "events with cat 'gpu_memcpy' ('Memcpy'; stored in memcpy)"},
    {"kineto_gpu_memset_events", "events with cat 'gpu_memset' ('Memset'; stored in memset)"},
    {"kineto_cuda_runtime_events",
     "events with cat 'cuda_runtime' ('Runtime'; stored in api, domain runtime)"},
    {"kineto_cuda_driver_events", "events with cat 'cuda_driver' (stored in api, domain driver)"},
    {"kineto_cuda_sync_events", "events with cat 'cuda_sync' (stored in sync)"},
    {"kineto_cpu_op_events",
     "events with cat 'cpu_op' ('Operator'; stored in nvtx, domain cpu_op)"},
    {"kineto_user_annotation_events", "events with cat 'user_annotation' (stored in nvtx)"},
    {"kineto_python_function_events", "events with cat 'python_function' (stored in nvtx)"},
    {"kineto_gpu_user_annotation_events",
     "events with cat 'gpu_user_annotation' (stored in nvtx, tid = stream)"},
    {"kineto_overhead_events", "events with cat 'overhead' (stored in overhead)"},
    {"kineto_ac2g_events",
     "ac2g flow events ('s' and 'f': launch -> GPU work; 'async', 'async_gpu', "
     "'async_cpu_to_gpu' in older traces), counted and matched by id"},
    {"kineto_fwdbwd_events",
     "fwdbwd flow events (forward -> backward op links), counted, not stored"},
    {"kineto_trace_span_events", "profiler span events (cat 'Trace'), counted, not stored"},
    {"kineto_metadata_events",
     "metadata events (ph 'M': process/thread names), thread names stored in threads"},
    {"kineto_instant_events", "instant events (ph 'i'/'I'), counted, not stored"},
    {"import_unknown_events", "events of a phase or category the importer does not map (skipped)"},
};
static_assert(sizeof(kCategories) / sizeof(kCategories[0]) == 17, "one entry per Category");

constexpr CategoryInfo kMalformed[] = {
    {"import_malformed_not_object", "elements of traceEvents that are not JSON objects"},
    {"import_malformed_missing_ph", "events without a string 'ph'"},
    {"import_malformed_bad_ts",
     "events whose ts is missing, not a number, or outside the int64 ns range"},
    {"import_malformed_bad_dur", "complete events whose dur is missing, negative or not a number"},
    {"import_malformed_bad_args",
     "events whose args are not an object or whose correlation/device/stream is not an integer"},
    {"import_malformed_bad_tid", "CPU-side events whose tid is not an integer"},
    {"import_malformed_bad_flow_id", "flow events without an integer id"},
    {"import_malformed_bad_top_level",
     "deviceProperties/distributedInfo/baseTimeNanoseconds of the wrong shape"},
};

std::string SanitizeStatName(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) {
    out.push_back((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c
                                                                                             : '_');
  }
  return out.empty() ? "_" : out;
}

// "stream 7" / "7" / 7 -> 7: Kineto wrote GPU tids as strings in older versions.
bool TrailingInt(const JsonNode* n, int64_t* out) {
  if (n == nullptr) return false;
  if (n->type == JsonType::kNumber) return JsonToInt64(n, out);
  if (n->type != JsonType::kString) return false;
  std::string_view t = n->text;
  size_t e = t.size();
  while (e > 0 && t[e - 1] == ' ') --e;
  size_t b = e;
  while (b > 0 && t[b - 1] >= '0' && t[b - 1] <= '9') --b;
  if (b == e || e - b > 18) return false;
  int64_t v = 0;
  for (size_t i = b; i < e; ++i) v = v * 10 + (t[i] - '0');
  *out = v;
  return true;
}

CopyKind ParseCopyKind(std::string_view k) {
  static const struct {
    const char* name;
    CopyKind kind;
  } kKinds[] = {{"HtoD", CopyKind::kHostToDevice},  {"DtoH", CopyKind::kDeviceToHost},
                {"HtoA", CopyKind::kHostToArray},   {"AtoH", CopyKind::kArrayToHost},
                {"AtoA", CopyKind::kArrayToArray},  {"AtoD", CopyKind::kArrayToDevice},
                {"DtoA", CopyKind::kDeviceToArray}, {"DtoD", CopyKind::kDeviceToDevice},
                {"HtoH", CopyKind::kHostToHost},    {"PtoP", CopyKind::kPeerToPeer}};
  for (const auto& e : kKinds) {
    if (k == e.name) return e.kind;
  }
  return CopyKind::kUnknown;
}

MemoryKind ParseMemoryKind(std::string_view k) {
  static const struct {
    const char* name;
    MemoryKind kind;
  } kKinds[] = {{"Pageable", MemoryKind::kPageable},
                {"Pinned", MemoryKind::kPinned},
                {"Device", MemoryKind::kDevice},
                {"Array", MemoryKind::kArray},
                {"Managed", MemoryKind::kManaged},
                {"Device Static", MemoryKind::kDeviceStatic},
                {"Managed Static", MemoryKind::kManagedStatic}};
  for (const auto& e : kKinds) {
    if (k == e.name) return e.kind;
  }
  return MemoryKind::kUnknown;
}

// "Memcpy HtoD (Pinned -> Device)": Kineto's name carries the copy kind and
// the source/destination memory kinds. "Memset (Device)": the memory kind.
void ParseMemcpyName(std::string_view name, CopyKind* kind, MemoryKind* src, MemoryKind* dst) {
  *kind = CopyKind::kUnknown;
  *src = *dst = MemoryKind::kUnknown;
  if (name.substr(0, 7) != "Memcpy ") return;
  std::string_view rest = name.substr(7);
  size_t sp = rest.find(' ');
  *kind = ParseCopyKind(rest.substr(0, sp));
  size_t open = rest.find('('), arrow = rest.find(" -> "), close = rest.rfind(')');
  if (open == std::string_view::npos || arrow == std::string_view::npos ||
      close == std::string_view::npos || !(open < arrow && arrow < close)) {
    return;
  }
  *src = ParseMemoryKind(rest.substr(open + 1, arrow - open - 1));
  *dst = ParseMemoryKind(rest.substr(arrow + 4, close - arrow - 4));
}

MemoryKind ParseMemsetKind(std::string_view name) {
  size_t open = name.find('('), close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return MemoryKind::kUnknown;
  }
  return ParseMemoryKind(name.substr(open + 1, close - open - 1));
}

SyncType ParseSyncType(std::string_view name) {
  if (name == "Event Sync") return SyncType::kEventSynchronize;
  if (name == "Stream Wait Event") return SyncType::kStreamWaitEvent;
  if (name == "Stream Sync") return SyncType::kStreamSynchronize;
  if (name == "Context Sync") return SyncType::kContextSynchronize;
  return SyncType::kUnknown;
}

}  // namespace

// The members of one event that the mapping reads (nullptr when absent).
struct KinetoImporter::Fields {
  const JsonNode *ph = nullptr, *cat = nullptr, *name = nullptr, *pid = nullptr, *tid = nullptr,
                 *ts = nullptr, *dur = nullptr, *id = nullptr, *args = nullptr;
  std::string_view Name() const {
    return name && name->type == JsonType::kString ? name->text : "";
  }
};

KinetoImporter::KinetoImporter(TraceWriter* w, ImportStats* stats)
    : w_(w), stats_(stats), strings_(w) {
  total_idx_ = stats_->Add("kineto_trace_events", "elements of the traceEvents array");
  for (int c = 0; c < kNumCategories; ++c)
    cat_idx_[c] = stats_->Add(kCategories[c].stat, kCategories[c].doc);
  unknown_idx_ = cat_idx_[kUnknown];
  malformed_idx_ = stats_->Add("import_malformed_events",
                               "events skipped because a field needed to store them was missing or "
                               "of the wrong type (sum of the import_malformed_* reasons)");
  for (int m = 0; m < kNumMalformed; ++m)
    bad_idx_[m] = stats_->Add(kMalformed[m].stat, kMalformed[m].doc);
  rounded_idx_ = stats_->Add("kineto_timestamps_rounded",
                             "ts/dur values with digits below 1 ns, rounded to the nearest ns");
  kernel_time_idx_ =
      stats_->Add("import_kernel_time_ns", "sum of the durations of the imported kernels, ns");
  tid_truncated_idx_ =
      stats_->Add("kineto_tid_truncated", "thread ids wider than 32 bits (low 32 bits kept)");
  bad_optional_idx_ = stats_->Add(
      "kineto_bad_optional_args",
      "optional args (grid, block, registers, bytes, ...) of the wrong type, stored as 0");
  stats_->Add("kineto_ac2g_flow_starts", "ac2g flow starts ('s', at the launching API call)");
  stats_->Add("kineto_ac2g_flow_ends", "ac2g flow ends ('f', at the GPU work or the API call)");
  stats_->Add("kineto_ac2g_linked", "flow ids with both a start and an end");
  stats_->Add("kineto_ac2g_linked_gpu",
              "linked flow ids whose id is the correlation of an imported kernel/memcpy/memset "
              "(launch -> GPU work links that api.correlation reproduces)");
  stats_->Add("import_nvtx_out_of_order",
              "ranges that arrived out of start order on their thread (depth recomputed)");
  stats_->Add("import_nvtx_partial_overlaps",
              "ranges that overlap an enclosing range without nesting in it");
}

void KinetoImporter::Bad(Malformed why) {
  stats_->Bump(malformed_idx_);
  stats_->Bump(bad_idx_[why]);
}

void KinetoImporter::Track(int64_t start, int64_t end) {
  if (start < min_ns_) min_ns_ = start;
  if (end > max_ns_) max_ns_ = end;
}

KinetoImporter::Category KinetoImporter::Classify(const Fields& f) const {
  std::string_view ph = f.ph->text;
  std::string_view cat = f.cat && f.cat->type == JsonType::kString ? f.cat->text : "";
  if (ph == "X") {
    if (cat == "cpu_op") return kCpuOp;
    if (cat == "cuda_runtime") return kCudaRuntime;
    if (cat == "kernel") return kKernel;
    if (cat == "cuda_driver") return kCudaDriver;
    if (cat == "gpu_memset") return kGpuMemset;
    if (cat == "gpu_memcpy") return kGpuMemcpy;
    if (cat == "python_function") return kPythonFunction;
    if (cat == "user_annotation") return kUserAnnotation;
    if (cat == "gpu_user_annotation") return kGpuUserAnnotation;
    if (cat == "cuda_sync") return kCudaSync;
    if (cat == "overhead") return kOverhead;
    if (cat == "Trace") return kTraceSpan;
    // The names Kineto wrote before PyTorch 1.10 (HTA and the TensorBoard
    // plugin read them too): Kernel, Runtime, Driver, Memcpy, Memset, Operator,
    // Python, User annotation / GPU user annotation.
    if (cat == "Kernel") return kKernel;
    if (cat == "Runtime") return kCudaRuntime;
    if (cat == "Operator") return kCpuOp;
    if (cat == "Memcpy") return kGpuMemcpy;
    if (cat == "Memset") return kGpuMemset;
    if (cat == "Driver") return kCudaDriver;
    if (cat == "Python") return kPythonFunction;
    if (cat == "User annotation" || cat == "user annotation") return kUserAnnotation;
    if (cat == "GPU user annotation" || cat == "gpu user annotation") return kGpuUserAnnotation;
    return kUnknown;
  }
  if (ph == "s" || ph == "f" || ph == "t") {
    // Launch -> GPU flows: "ac2g" since 1.10; "async", "async_gpu" and
    // "async_cpu_to_gpu" in older traces.
    if (cat == "ac2g" || cat == "async" || cat == "async_gpu" || cat == "async_cpu_to_gpu")
      return kAc2g;
    if (cat == "fwdbwd") return kFwdbwd;
    return kUnknown;
  }
  if (ph == "M") return kMetadata;
  if (ph == "i" || ph == "I") return kInstant;
  return kUnknown;
}

bool KinetoImporter::Times(const Fields& f, int64_t* start, int64_t* end) {
  auto convert = [this](const JsonNode* n, int64_t* out) {
    if (n == nullptr || (n->type != JsonType::kNumber && n->type != JsonType::kString))
      return false;
    DecimalStatus s = DecimalToScaledInt(n->text, 3, out);
    if (s == DecimalStatus::kRounded) stats_->Bump(rounded_idx_);
    return s == DecimalStatus::kOk || s == DecimalStatus::kRounded;
  };
  if (!convert(f.ts, start)) {
    Bad(kBadTs);
    return false;
  }
  int64_t dur = 0;
  if (!convert(f.dur, &dur) || dur < 0 || *start > INT64_MAX - dur) {
    Bad(kBadDur);
    return false;
  }
  *end = *start + dur;
  return true;
}

bool KinetoImporter::CpuTid(const Fields& f, uint32_t* tid) {
  int64_t v = 0;
  // Kineto writes thread ids above 2^31 as negative int32 (-549452224):
  // the low 32 bits are the thread id.
  if (!TrailingInt(f.tid, &v) || v < INT32_MIN) {
    Bad(kBadTid);
    return false;
  }
  if (v < 0) v = static_cast<uint32_t>(static_cast<int32_t>(v));
  if (v > UINT32_MAX) stats_->Bump(tid_truncated_idx_);
  *tid = static_cast<uint32_t>(v);
  int64_t pid = 0;
  if (cpu_pid_ < 0 && TrailingInt(f.pid, &pid)) cpu_pid_ = pid;
  cpu_tids_.insert(*tid);
  return true;
}

Status KinetoImporter::OnEvent(const JsonValueParser& doc, uint64_t offset) {
  stats_->Bump(total_idx_);
  const JsonNode& root = doc.root();
  if (root.type != JsonType::kObject) {
    Bad(kNotObject);
    return OkStatus();
  }
  doc_ = &doc;
  Fields f;
  for (uint32_t i = root.first_child; i != 0; i = doc.node(i).next) {
    const JsonNode& n = doc.node(i);
    std::string_view k = n.key;
    switch (k.size()) {
      case 2:
        if (k == "ph")
          f.ph = &n;
        else if (k == "ts")
          f.ts = &n;
        else if (k == "id")
          f.id = &n;
        break;
      case 3:
        if (k == "cat")
          f.cat = &n;
        else if (k == "tid")
          f.tid = &n;
        else if (k == "pid")
          f.pid = &n;
        else if (k == "dur")
          f.dur = &n;
        break;
      case 4:
        if (k == "name")
          f.name = &n;
        else if (k == "args")
          f.args = &n;
        break;
      default:
        break;
    }
  }
  if (f.ph == nullptr || f.ph->type != JsonType::kString) {
    Bad(kMissingPh);
    return OkStatus();
  }
  if (f.args != nullptr && f.args->type != JsonType::kObject) {
    Bad(kBadArgs);
    return OkStatus();
  }
  Category c = Classify(f);
  stats_->Bump(cat_idx_[c]);
  Status st;
  switch (c) {
    case kKernel:
    case kGpuMemcpy:
    case kGpuMemset:
    case kCudaSync:
      st = MapGpu(c, f);
      break;
    case kCudaRuntime:
    case kCudaDriver:
      st = MapApi(c, f);
      break;
    case kCpuOp:
    case kUserAnnotation:
    case kPythonFunction:
    case kGpuUserAnnotation:
      st = MapRange(c, f);
      break;
    case kUnknown: {
      std::string_view cat = f.cat && f.cat->type == JsonType::kString ? f.cat->text : f.ph->text;
      std::string name = "kineto_unknown_" + SanitizeStatName(cat);
      if (unknown_cats_.size() < 32 || unknown_cats_.count(name)) {
        if (!unknown_raw_.count(name)) unknown_raw_[name] = std::string(cat.substr(0, 40));
        auto it = unknown_cats_.find(name);
        if (it == unknown_cats_.end()) {
          it = unknown_cats_
                   .emplace(name, stats_->Add(name, "events of this unmapped category/phase"))
                   .first;
        }
        stats_->Bump(it->second);
      }
      break;
    }
    default:
      st = MapOther(c, f);
      break;
  }
  if (!st.ok()) return st.WithContext("byte " + std::to_string(offset));
  if (w_->rows() - last_commit_rows_ >= kCommitEveryRows) {
    last_commit_rows_ = w_->rows();
    RETURN_IF_ERROR(w_->Commit());
  }
  return OkStatus();
}

namespace {
// Reads an integer member of args. Absent: `def`. Wrong type: false.
bool ArgInt(const JsonValueParser& doc, const JsonNode* args, std::string_view key, int64_t def,
            int64_t* out) {
  const JsonNode* n = args ? doc.Find(*args, key) : nullptr;
  if (n == nullptr || n->type == JsonType::kNull) {
    *out = def;
    return true;
  }
  return JsonToInt64(n, out);
}
}  // namespace

Status KinetoImporter::MapGpu(Category c, const Fields& f) {
  int64_t start, end;
  if (!Times(f, &start, &end)) return OkStatus();
  const JsonValueParser& doc = *doc_;
  int64_t pid = 0, tid = 0, device, stream, correlation, context;
  TrailingInt(f.pid, &pid);
  TrailingInt(f.tid, &tid);
  if (!ArgInt(doc, f.args, "device", pid, &device) ||
      !ArgInt(doc, f.args, "stream", tid, &stream) ||
      !ArgInt(doc, f.args, "correlation", 0, &correlation) ||
      !ArgInt(doc, f.args, "context", 0, &context)) {
    Bad(kBadArgs);
    return OkStatus();
  }
  auto optional = [&](std::string_view key) -> int64_t {
    int64_t v = 0;
    if (!ArgInt(doc, f.args, key, 0, &v)) {
      stats_->Bump(bad_optional_idx_);
      return 0;
    }
    return v;
  };
  Track(start, end);
  uint32_t dev = static_cast<uint32_t>(device), strm = static_cast<uint32_t>(stream);
  uint32_t corr = static_cast<uint32_t>(correlation), ctx = static_cast<uint32_t>(context);
  if (c == kKernel) {
    KernelRecord k{};
    k.start_ns = start;
    k.end_ns = end;
    k.device = dev;
    k.context = ctx;
    k.stream = strm;
    k.correlation = corr;
    k.name = strings_.Get(f.Name());
    int32_t* dims[2][3] = {{&k.grid_x, &k.grid_y, &k.grid_z}, {&k.block_x, &k.block_y, &k.block_z}};
    const char* keys[2] = {"grid", "block"};
    for (int d = 0; d < 2; ++d) {
      const JsonNode* a = f.args ? doc.Find(*f.args, keys[d]) : nullptr;
      if (a == nullptr) continue;
      if (a->type != JsonType::kArray) {
        stats_->Bump(bad_optional_idx_);
        continue;
      }
      int i = 0;
      for (uint32_t e = a->first_child; e != 0 && i < 3; e = doc.node(e).next, ++i) {
        int64_t v = 0;
        if (!JsonToInt64(&doc.node(e), &v)) stats_->Bump(bad_optional_idx_);
        *dims[d][i] = static_cast<int32_t>(v);
      }
    }
    k.registers_per_thread = static_cast<uint32_t>(optional("registers per thread"));
    // Kineto writes static + dynamic shared memory as one sum.
    k.dynamic_smem_bytes = static_cast<int32_t>(optional("shared memory"));
    w_->AddKernel(k);
    stats_->Bump(kernel_time_idx_, end - start);
    gpu_correlations_.push_back(corr);
  } else if (c == kGpuMemcpy) {
    MemcpyRecord m{};
    m.start_ns = start;
    m.end_ns = end;
    m.device = dev;
    m.dst_device = dev;
    m.context = ctx;
    m.stream = strm;
    m.correlation = corr;
    m.bytes = static_cast<uint64_t>(optional("bytes"));
    ParseMemcpyName(f.Name(), &m.copy_kind, &m.src_kind, &m.dst_kind);
    w_->AddMemcpy(m);
    gpu_correlations_.push_back(corr);
  } else if (c == kGpuMemset) {
    MemsetRecord m{};
    m.start_ns = start;
    m.end_ns = end;
    m.device = dev;
    m.context = ctx;
    m.stream = strm;
    m.correlation = corr;
    m.bytes = static_cast<uint64_t>(optional("bytes"));
    m.memory_kind = ParseMemsetKind(f.Name());
    w_->AddMemset(m);
    gpu_correlations_.push_back(corr);
  } else {  // kCudaSync
    SyncRecord s{};
    s.start_ns = start;
    s.end_ns = end;
    s.correlation = corr;
    s.context = ctx;
    s.stream = static_cast<uint32_t>(stream);  // -1 (not stream-specific) -> 0xffffffff
    s.event = static_cast<uint32_t>(optional("wait_on_cuda_event_id"));
    s.type = ParseSyncType(f.Name());
    w_->AddSync(s);
  }
  return OkStatus();
}

Status KinetoImporter::MapApi(Category c, const Fields& f) {
  int64_t start, end;
  if (!Times(f, &start, &end)) return OkStatus();
  uint32_t tid;
  if (!CpuTid(f, &tid)) return OkStatus();
  int64_t correlation, cbid;
  if (!ArgInt(*doc_, f.args, "correlation", 0, &correlation) ||
      !ArgInt(*doc_, f.args, "cbid", 0, &cbid)) {
    Bad(kBadArgs);
    return OkStatus();
  }
  Track(start, end);
  ApiRecord a{};
  a.start_ns = start;
  a.end_ns = end;
  a.tid = tid;
  a.correlation = static_cast<uint32_t>(correlation);
  a.cbid = static_cast<uint32_t>(cbid);
  a.name = strings_.Get(f.Name());
  a.domain = c == kCudaDriver ? ApiDomain::kDriver : ApiDomain::kRuntime;
  w_->AddApi(a);
  return OkStatus();
}

Status KinetoImporter::MapRange(Category c, const Fields& f) {
  int64_t start, end;
  if (!Times(f, &start, &end)) return OkStatus();
  uint32_t tid;
  int group = 0;  // depth is computed per CPU thread over all CPU-side categories
  int domain_slot = c == kCpuOp ? 0 : c == kUserAnnotation ? 1 : c == kPythonFunction ? 2 : 3;
  if (c == kGpuUserAnnotation) {
    // On the GPU timeline: tid is the stream.
    int64_t stream = 0;
    if (!TrailingInt(f.tid, &stream) && !ArgInt(*doc_, f.args, "stream", 0, &stream)) {
      Bad(kBadTid);
      return OkStatus();
    }
    tid = static_cast<uint32_t>(stream);
    group = 1;
  } else if (!CpuTid(f, &tid)) {
    return OkStatus();
  }
  static const char* kDomains[4] = {"cpu_op", "user_annotation", "python_function",
                                    "gpu_user_annotation"};
  if (domain_ids_[domain_slot] == 0) domain_ids_[domain_slot] = strings_.Get(kDomains[domain_slot]);
  Track(start, end);
  NvtxRecord r{};
  r.start_ns = start;
  r.end_ns = end;
  r.tid = tid;
  r.end_tid = tid;
  r.domain = domain_ids_[domain_slot];
  r.name = strings_.Get(f.Name());
  r.kind = NvtxKind::kPushPop;
  r.depth =
      depth_.Depth((static_cast<uint64_t>(tid) << 1) | static_cast<uint64_t>(group), start, end);
  w_->AddNvtx(r);
  return OkStatus();
}

Status KinetoImporter::MapOther(Category c, const Fields& f) {
  if (c == kAc2g) {
    int64_t id = 0;
    if (!JsonToInt64Lenient(f.id, &id)) {
      Bad(kBadFlowId);
      return OkStatus();
    }
    (f.ph->text == "s" ? flow_starts_ : flow_ends_).push_back(static_cast<uint64_t>(id));
  } else if (c == kOverhead) {
    int64_t start, end, tid = 0;
    if (!Times(f, &start, &end)) return OkStatus();
    TrailingInt(f.tid, &tid);
    Track(start, end);
    OverheadRecord o{};
    o.start_ns = start;
    o.end_ns = end;
    o.tid = static_cast<uint32_t>(tid);
    o.kind = strings_.Get(f.Name());
    w_->AddOverhead(o);
  } else if (c == kMetadata) {
    MapMetadata(f);
  }
  return OkStatus();
}

void KinetoImporter::MapMetadata(const Fields& f) {
  const JsonNode* args = f.args;
  int64_t pid = 0, tid = 0;
  if (f.Name() == "thread_name" && args != nullptr) {
    const JsonNode* n = doc_->Find(*args, "name");
    if (n && n->type == JsonType::kString && TrailingInt(f.pid, &pid) && TrailingInt(f.tid, &tid)) {
      if (tid < 0 && tid >= INT32_MIN) tid = static_cast<uint32_t>(static_cast<int32_t>(tid));
      thread_names_[{pid, tid}] = std::string(n->text);
    }
  } else if (f.Name() == "process_name" && args != nullptr) {
    const JsonNode* n = doc_->Find(*args, "name");
    if (n && n->type == JsonType::kString && TrailingInt(f.pid, &pid))
      process_names_[pid] = std::string(n->text);
  } else if (f.Name() == "process_labels" && args != nullptr) {
    const JsonNode* l = doc_->Find(*args, "labels");
    if (l && l->type == JsonType::kString && l->text == "CPU" && TrailingInt(f.pid, &pid) &&
        cpu_pid_ < 0) {
      cpu_pid_ = pid;
    }
  }
}

void KinetoImporter::MapDevices(const JsonValueParser& doc) {
  const JsonNode& root = doc.root();
  if (root.type != JsonType::kArray) {
    Bad(kBadTopLevel);
    return;
  }
  for (uint32_t i = root.first_child; i != 0; i = doc.node(i).next) {
    const JsonNode& d = doc.node(i);
    int64_t id;
    if (d.type != JsonType::kObject || !JsonToInt64(doc.Find(d, "id"), &id)) {
      Bad(kBadTopLevel);
      continue;
    }
    auto get = [&](const char* key) {
      int64_t v = 0;
      return JsonToInt64(doc.Find(d, key), &v) ? v : 0;
    };
    DeviceRecord r{};
    r.id = static_cast<uint32_t>(id);
    const JsonNode* name = doc.Find(d, "name");
    r.name = strings_.Get(name && name->type == JsonType::kString ? name->text : "");
    r.cc_major = static_cast<uint32_t>(get("computeMajor"));
    r.cc_minor = static_cast<uint32_t>(get("computeMinor"));
    r.sm_count = static_cast<uint32_t>(get("numSms"));
    r.global_memory_bytes = static_cast<uint64_t>(get("totalGlobalMem"));
    r.l2_cache_bytes = static_cast<uint32_t>(get("l2CacheSize"));
    r.max_threads_per_block = static_cast<uint32_t>(get("maxThreadsPerBlock"));
    r.max_shared_memory_per_block = static_cast<uint32_t>(get("sharedMemPerBlock"));
    int64_t warp = get("warpSize");
    r.max_warps_per_sm =
        warp > 0 ? static_cast<uint32_t>(get("maxThreadsPerMultiprocessor") / warp) : 0;
    w_->AddDevice(r);
  }
}

Status KinetoImporter::OnTopLevel(std::string_view key, const JsonValueParser& doc,
                                  uint64_t offset) {
  if (key == "deviceProperties") {
    MapDevices(doc);
  } else if (key == "distributedInfo") {
    const JsonNode& root = doc.root();
    int64_t rank, world;
    if (root.type != JsonType::kObject) {
      Bad(kBadTopLevel);
    } else {
      if (JsonToInt64Lenient(doc.Find(root, "rank"), &rank))
        w_->SetMeta("rank", std::to_string(rank));
      if (JsonToInt64Lenient(doc.Find(root, "world_size"), &world)) {
        w_->SetMeta("world_size", std::to_string(world));
      }
    }
  } else if (key == "baseTimeNanoseconds") {
    if (!JsonToInt64Lenient(&doc.root(), &base_time_ns_)) Bad(kBadTopLevel);
  }
  return OkStatus();
}

Status KinetoImporter::Finish() {
  // Flows: an id with both a start and an end is one launch -> GPU link.
  std::sort(flow_starts_.begin(), flow_starts_.end());
  std::sort(flow_ends_.begin(), flow_ends_.end());
  std::vector<uint64_t> linked;
  std::set_intersection(flow_starts_.begin(), flow_starts_.end(), flow_ends_.begin(),
                        flow_ends_.end(), std::back_inserter(linked));
  linked.erase(std::unique(linked.begin(), linked.end()), linked.end());
  std::sort(gpu_correlations_.begin(), gpu_correlations_.end());
  int64_t linked_gpu = 0;
  for (uint64_t id : linked) {
    if (id <= UINT32_MAX && std::binary_search(gpu_correlations_.begin(), gpu_correlations_.end(),
                                               static_cast<uint32_t>(id))) {
      ++linked_gpu;
    }
  }
  stats_->Set(stats_->Add("kineto_ac2g_flow_starts", ""),
              static_cast<int64_t>(flow_starts_.size()));
  stats_->Set(stats_->Add("kineto_ac2g_flow_ends", ""), static_cast<int64_t>(flow_ends_.size()));
  stats_->Set(stats_->Add("kineto_ac2g_linked", ""), static_cast<int64_t>(linked.size()));
  stats_->Set(stats_->Add("kineto_ac2g_linked_gpu", ""), linked_gpu);

  for (const auto& [key, name] : thread_names_) {
    if (key.first == cpu_pid_ && key.second >= 0 && key.second <= UINT32_MAX &&
        cpu_tids_.count(static_cast<uint32_t>(key.second))) {
      w_->SetThreadName(static_cast<uint32_t>(key.second), strings_.Get(name));
    }
  }
  // Threads with CPU events but no thread_name metadata still get a row.
  for (uint32_t tid : cpu_tids_) {
    if (!thread_names_.count({cpu_pid_, tid})) w_->SetThreadName(tid, kNoString);
  }

  uint64_t partial = depth_.partial_overlaps();
  for (uint64_t key : depth_.unordered_keys()) {
    uint32_t tid = static_cast<uint32_t>(key >> 1);
    std::vector<StringId> domains;
    if (key & 1) {
      domains = {domain_ids_[3]};
    } else {
      for (int i = 0; i < 3; ++i) {
        if (domain_ids_[i] != 0) domains.push_back(domain_ids_[i]);
      }
    }
    RETURN_IF_ERROR(RecomputeNvtxDepth(w_->db(), tid, domains, &partial));
  }
  RETURN_IF_ERROR(ImportKinetoPythonStacks(w_, domain_ids_[2], stats_));
  stats_->Set(stats_->Add("import_nvtx_out_of_order", ""),
              static_cast<int64_t>(depth_.out_of_order()));
  stats_->Set(stats_->Add("import_nvtx_partial_overlaps", ""), static_cast<int64_t>(partial));

  WarnDropped();
  w_->SetMeta("source", "kineto-json");
  w_->SetMeta("clock", "kineto");
  w_->SetMeta("wall_clock_offset_ns", std::to_string(base_time_ns_ < 0 ? 0 : base_time_ns_));
  if (min_ns_ <= max_ns_) {
    w_->SetMeta("start_ns", std::to_string(min_ns_));
    w_->SetMeta("end_ns", std::to_string(max_ns_));
  }
  if (cpu_pid_ >= 0) w_->SetMeta("pid", std::to_string(cpu_pid_));
  if (auto it = process_names_.find(cpu_pid_); it != process_names_.end() && !it->second.empty())
    w_->SetMeta("process_name", it->second);
  return w_->status();
}

// Every dropped event is counted; this turns the counts into warnings, and a
// file with events but no GPU activity into a loud one.
void KinetoImporter::NoteOversized(uint64_t n, size_t bound) {
  const size_t idx = stats_->Add(
      "import_json_value_too_large",
      "events or top-level members longer than the JSON value bound (32 MiB), skipped unparsed");
  stats_->Set(idx, static_cast<int64_t>(n));
  if (n > 0) {
    stats_->Warn("skipped " + std::to_string(n) + " events/values longer than " +
                 std::to_string(bound >> 20) + " MiB each (stats import_json_value_too_large)");
  }
}

void KinetoImporter::WarnDropped() {
  for (const auto& [name, idx] : unknown_cats_) {
    const int64_t n = stats_->value(idx);
    if (n > 0) {
      stats_->Warn("skipped " + std::to_string(n) + " events of an unmapped category or phase ('" +
                   unknown_raw_[name] + "'; stats " + name + ")");
    }
  }
  const int64_t bad = stats_->value(malformed_idx_);
  if (bad > 0) {
    std::string why;
    for (int m = 0; m < kNumMalformed; ++m) {
      const int64_t n = stats_->value(bad_idx_[m]);
      if (n > 0)
        why +=
            (why.empty() ? "" : ", ") + std::string(kMalformed[m].stat) + " " + std::to_string(n);
    }
    stats_->Warn("skipped " + std::to_string(bad) + " malformed events (" + why + ")");
  }
  const int64_t gpu = stats_->value(cat_idx_[kKernel]) + stats_->value(cat_idx_[kGpuMemcpy]) +
                      stats_->value(cat_idx_[kGpuMemset]);
  const int64_t total = stats_->value(total_idx_);
  if (gpu == 0 && total > 0) {
    stats_->Warn("no GPU activity imported (no kernel, gpu_memcpy or gpu_memset event among " +
                 std::to_string(total) + " events" +
                 (stats_->value(unknown_idx_) > 0
                      ? "; " + std::to_string(stats_->value(unknown_idx_)) +
                            " events of unmapped categories were skipped: if they are GPU work, "
                            "this Kineto version's category names are not supported"
                      : std::string("; the trace was recorded without CUDA activities")) +
                 ")");
  }
}

Status ImportKinetoJson(InputStream* in, TraceWriter* w, ImportStats* stats) {
  KinetoImporter importer(w, stats);
  ChromeTraceTokenizer tokenizer(&importer);
  ReadAhead reader(in);
  while (true) {
    ASSIGN_OR_RETURN(std::string_view chunk, reader.Next());
    if (chunk.empty()) break;
    RETURN_IF_ERROR(tokenizer.Feed(chunk.data(), chunk.size()));
  }
  RETURN_IF_ERROR(tokenizer.Finish());
  importer.NoteOversized(tokenizer.skipped_values(), ChromeTraceTokenizer::kDefaultMaxValueBytes);
  if (!tokenizer.saw_trace_events()) {
    return InvalidInput("byte " + std::to_string(tokenizer.bytes()) +
                        ": the JSON object has no \"traceEvents\" array: not a torch.profiler / "
                        "Chrome trace");
  }
  return importer.Finish();
}

}  // namespace stepscope
