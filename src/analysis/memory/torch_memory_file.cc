#include "analysis/memory/torch_memory_file.h"

#include "common/file_util.h"
#include "common/json_reader.h"

namespace stepscope::memory {

namespace {
constexpr std::pair<TorchAction, const char*> kActions[] = {
    {TorchAction::kAlloc, "alloc"},
    {TorchAction::kFreeRequested, "free_requested"},
    {TorchAction::kFreeCompleted, "free_completed"},
    {TorchAction::kSegmentAlloc, "segment_alloc"},
    {TorchAction::kSegmentFree, "segment_free"},
    {TorchAction::kSegmentMap, "segment_map"},
    {TorchAction::kSegmentUnmap, "segment_unmap"},
    {TorchAction::kOom, "oom"},
    {TorchAction::kSnapshot, "snapshot"},
};
}  // namespace

TorchAction ParseTorchAction(std::string_view name) {
  for (const auto& [a, n] : kActions) {
    if (name == n) return a;
  }
  return TorchAction::kUnknown;
}

const char* TorchActionName(TorchAction a) {
  for (const auto& [x, n] : kActions) {
    if (x == a) return n;
  }
  return "unknown";
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : j_(text, name) {}

  StatusOr<TorchMemoryFile> Run() {
    std::string format;
    RETURN_IF_ERROR(j_.Object([&](std::string_view key) -> Status {
      if (key == "format") return j_.String(&format);
      if (key == "version") return j_.Int(&f_.version);
      if (key == "reason") return j_.String(&f_.reason);
      if (key == "pid") return j_.Int(&f_.pid);
      if (key == "written_unix_ns") return j_.Int(&f_.written_unix_ns);
      if (key == "max_entries") return j_.IntOrNull(&f_.max_entries, 0);
      if (key == "allocator") return Allocator();
      if (key == "frames") return j_.Array([&] { return Frame(); });
      if (key == "stacks") return j_.Array([&] { return Stack(); });
      if (key == "devices") return j_.Array([&] { return Device(); });
      if (key == "ooms") return j_.Array([&] { return Oom(); });
      return j_.Skip();
    }));
    RETURN_IF_ERROR(j_.End());
    if (format != "stepscope-torch-memory") {
      return j_.Error("not a stepscope PyTorch memory file (format is \"" + format + "\")");
    }
    if (f_.version != 1) {
      return j_.Error("PyTorch memory file version " + std::to_string(f_.version) +
                      ", this stepscope reads version 1");
    }
    // Stack and frame references must point inside the tables.
    for (auto& s : f_.stacks) {
      for (int32_t& fr : s) {
        if (fr < 0 || static_cast<size_t>(fr) >= f_.frames.size()) fr = -1;
      }
    }
    auto check = [&](int32_t& st) {
      if (st < -1 || st >= static_cast<int64_t>(f_.stacks.size())) st = -1;
    };
    for (auto& d : f_.devices) {
      for (auto& e : d.trace) check(e.stack);
      for (auto& s : d.segments) {
        for (auto& b : s.blocks) check(b.stack);
      }
    }
    return std::move(f_);
  }

 private:
  Status U64(uint64_t* out) {
    int64_t v = 0;
    RETURN_IF_ERROR(j_.Int(&v));
    *out = static_cast<uint64_t>(v);
    return OkStatus();
  }
  Status I32(int32_t* out) {
    int64_t v = 0;
    RETURN_IF_ERROR(j_.IntOrNull(&v, -1));
    *out = static_cast<int32_t>(v);
    return OkStatus();
  }

  Status Allocator() {
    return j_.Object([&](std::string_view key) -> Status {
      if (key == "expandable_segments") return j_.Bool(&f_.expandable_segments);
      if (key == "max_split_size") return j_.IntOrNull(&f_.max_split_size, -1);
      return j_.Skip();
    });
  }

  Status Frame() {
    TorchFrame fr;
    int i = 0;
    RETURN_IF_ERROR(j_.Array([&]() -> Status {
      switch (i++) {
        case 0:
          return j_.String(&fr.file);
        case 1:
          return j_.IntOrNull(&fr.line, 0);
        case 2:
          return j_.String(&fr.function);
        default:
          return j_.Skip();
      }
    }));
    f_.frames.push_back(std::move(fr));
    return OkStatus();
  }

  Status Stack() {
    std::vector<int32_t> s;
    RETURN_IF_ERROR(j_.Array([&]() -> Status {
      int32_t v = -1;
      RETURN_IF_ERROR(I32(&v));
      s.push_back(v);
      return OkStatus();
    }));
    f_.stacks.push_back(std::move(s));
    return OkStatus();
  }

  Status Counters(TorchCounters* c) {
    return j_.Object([&](std::string_view key) -> Status {
      if (key == "allocated") return j_.IntOrNull(&c->allocated, -1);
      if (key == "reserved") return j_.IntOrNull(&c->reserved, -1);
      if (key == "max_allocated") return j_.IntOrNull(&c->max_allocated, -1);
      if (key == "max_reserved") return j_.IntOrNull(&c->max_reserved, -1);
      if (key == "total") return j_.IntOrNull(&c->total, -1);
      return j_.Skip();
    });
  }

  Status Block(TorchSegment* seg) {
    TorchBlock b;
    int i = 0;
    RETURN_IF_ERROR(j_.Array([&]() -> Status {
      switch (i++) {
        case 0:
          return U64(&b.address);
        case 1:
          return U64(&b.size);
        case 2:
          return U64(&b.requested_size);
        case 3: {
          std::string s;
          RETURN_IF_ERROR(j_.String(&s));
          b.state = s == "active_allocated" ? TorchBlockState::kActiveAllocated
                    : s == "inactive"       ? TorchBlockState::kInactive
                                            : TorchBlockState::kActivePendingFree;
          return OkStatus();
        }
        case 4:
          return I32(&b.stack);
        default:
          return j_.Skip();
      }
    }));
    seg->blocks.push_back(b);
    return OkStatus();
  }

  Status Segment(TorchDevice* d) {
    TorchSegment s;
    RETURN_IF_ERROR(j_.Object([&](std::string_view key) -> Status {
      if (key == "address") return U64(&s.address);
      if (key == "total_size") return U64(&s.total_size);
      if (key == "stream") return U64(&s.stream);
      if (key == "segment_type") {
        std::string t;
        RETURN_IF_ERROR(j_.String(&t));
        s.small = t == "small";
        return OkStatus();
      }
      if (key == "is_expandable") return j_.Bool(&s.expandable);
      if (key == "blocks") return j_.Array([&] { return Block(&s); });
      return j_.Skip();
    }));
    d->segments.push_back(std::move(s));
    return OkStatus();
  }

  Status Entry(TorchDevice* d) {
    TorchTraceEntry e;
    int i = 0;
    RETURN_IF_ERROR(j_.Array([&]() -> Status {
      switch (i++) {
        case 0: {
          std::string a;
          RETURN_IF_ERROR(j_.String(&a));
          e.action = ParseTorchAction(a);
          return OkStatus();
        }
        case 1:
          return j_.Int(&e.time_us);
        case 2:
          return U64(&e.addr);
        case 3:
          return U64(&e.size);
        case 4:
          return U64(&e.stream);
        case 5:
          return I32(&e.stack);
        default:
          return j_.Skip();
      }
    }));
    d->trace.push_back(e);
    return OkStatus();
  }

  Status Device() {
    TorchDevice d;
    RETURN_IF_ERROR(j_.Object([&](std::string_view key) -> Status {
      if (key == "device") return I32(&d.device);
      if (key == "counters") return Counters(&d.counters);
      if (key == "segments") return j_.Array([&] { return Segment(&d); });
      if (key == "trace") return j_.Array([&] { return Entry(&d); });
      return j_.Skip();
    }));
    f_.devices.push_back(std::move(d));
    return OkStatus();
  }

  Status Oom() {
    TorchOom o;
    RETURN_IF_ERROR(j_.Object([&](std::string_view key) -> Status {
      if (key == "device") return I32(&o.device);
      if (key == "time_unix_ns") return j_.Int(&o.time_unix_ns);
      if (key == "requested") return j_.IntOrNull(&o.requested, -1);
      if (key == "device_allocated") return j_.IntOrNull(&o.device_allocated, -1);
      if (key == "device_free") return j_.IntOrNull(&o.device_free, -1);
      if (key == "total") return j_.IntOrNull(&o.total, -1);
      return j_.Skip();
    }));
    f_.ooms.push_back(o);
    return OkStatus();
  }

  JsonReader j_;
  TorchMemoryFile f_;
};

}  // namespace

StatusOr<TorchMemoryFile> ParseTorchMemoryFile(std::string_view text, const std::string& name) {
  return Parser(text, name).Run();
}

StatusOr<TorchMemoryFile> ReadTorchMemoryFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseTorchMemoryFile(text, path);
}

}  // namespace stepscope::memory
