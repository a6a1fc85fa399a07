#include "export/chrome_json_writer.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "common/json_writer.h"

namespace stepscope {

ChromeJsonWriter::ChromeJsonWriter(OutputFile* out, std::string source)
    : out_(out), source_(std::move(source)) {}

void ChromeJsonWriter::SetTimeOrigin(int64_t origin_ns) {
  origin_ = origin_ns;
  buf_.append(
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"stepscope export\",\"source\":");
  AppendJsonString(&buf_, JsonEscaping::kCompact, source_);
  buf_.append(",\"time_origin_ns\":\"" + std::to_string(origin_ns) + "\"},\n\"traceEvents\":[");
  header_written_ = true;
}

void ChromeJsonWriter::StartEvent() {
  if (!header_written_) SetTimeOrigin(0);
  buf_.append(first_event_ ? "\n{" : ",\n{");
  first_event_ = false;
}

void ChromeJsonWriter::AppendTs(const char* key, int64_t ns) { AppendMicros(key, ns - origin_); }

void ChromeJsonWriter::AppendMicros(const char* key, int64_t rel) {
  char b[48];
  const char* sign = rel < 0 ? "-" : "";
  uint64_t mag = rel < 0 ? static_cast<uint64_t>(-rel) : static_cast<uint64_t>(rel);
  std::snprintf(b, sizeof(b), ",\"%s\":%s%" PRIu64 ".%03" PRIu64, key, sign, mag / 1000,
                mag % 1000);
  buf_.append(b);
}

void ChromeJsonWriter::AppendWhere(uint64_t track) {
  const Where& w = track < tracks_.size() ? tracks_[track] : Where{};
  buf_.append(",\"pid\":" + std::to_string(w.pid) + ",\"tid\":" + std::to_string(w.tid));
}

void ChromeJsonWriter::Flush() {
  if (buf_.size() > (1 << 20)) {
    out_->Write(buf_);
    buf_.clear();
  }
}

void ChromeJsonWriter::AddTrack(const TrackInfo& t) {
  if (t.uuid >= tracks_.size()) tracks_.resize(t.uuid + 1);
  Where& w = tracks_[t.uuid];
  w.pid = t.chrome_pid;
  w.tid = t.chrome_tid;
  const char* meta = nullptr;
  switch (t.kind) {
    case TrackKind::kProcess:
    case TrackKind::kGpuDevice:
      meta = "process_name";
      break;
    case TrackKind::kThread:
    case TrackKind::kGpuStream:
    case TrackKind::kOverlapLane:
    case TrackKind::kHost:
      meta = "thread_name";
      break;
    case TrackKind::kCounter:
      w.counter_name = t.name;
      break;
  }
  if (!meta) return;
  StartEvent();
  buf_.append("\"ph\":\"M\",\"name\":\"");
  buf_.append(meta);
  buf_.append("\",\"pid\":" + std::to_string(w.pid) + ",\"tid\":" + std::to_string(w.tid) +
              ",\"args\":{\"name\":");
  AppendJsonString(&buf_, JsonEscaping::kCompact, t.name);
  buf_.append("}}");
  Flush();
}

void ChromeJsonWriter::AppendName(std::string_view name) {
  if (name.size() <= kMaxNameBytes) {
    AppendJsonString(&buf_, JsonEscaping::kCompact, name);
    return;
  }
  size_t cut = kMaxNameBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  ++names_truncated_;
  AppendJsonString(&buf_, JsonEscaping::kCompact, std::string(name.substr(0, cut)) + "...");
}

void ChromeJsonWriter::BeginSlice(const SliceEvent& e) {
  StartEvent();
  buf_.append("\"ph\":\"X\",\"cat\":");
  AppendJsonString(&buf_, JsonEscaping::kCompact, e.category);
  buf_.append(",\"name\":");
  AppendName(e.name);
  AppendWhere(e.track);
  AppendTs("ts", e.start_ns);
  AppendMicros("dur", e.end_ns - e.start_ns);
  if (e.arg_count) {
    buf_.append(",\"args\":{");
    for (size_t i = 0; i < e.arg_count; ++i) {
      if (i) buf_.push_back(',');
      AppendJsonString(&buf_, JsonEscaping::kCompact, e.args[i].key);
      buf_.push_back(':');
      if (e.args[i].is_string) {
        AppendJsonString(&buf_, JsonEscaping::kCompact, e.args[i].string_value);
      } else {
        buf_.append(std::to_string(e.args[i].int_value));
      }
    }
    buf_.push_back('}');
  }
  buf_.push_back('}');
  char id[32];
  for (size_t i = 0; i < e.flow_out_count; ++i) {
    StartEvent();
    std::snprintf(id, sizeof(id), "0x%" PRIx64, e.flows_out[i]);
    buf_.append(std::string("\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":\"") + id +
                "\"");
    AppendWhere(e.track);
    AppendTs("ts", e.start_ns);
    buf_.push_back('}');
  }
  if (e.flow_in) {
    StartEvent();
    std::snprintf(id, sizeof(id), "0x%" PRIx64, e.flow_in);
    buf_.append(
        std::string("\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":\"") +
        id + "\"");
    AppendWhere(e.track);
    AppendTs("ts", e.start_ns);
    buf_.push_back('}');
  }
  Flush();
}

void ChromeJsonWriter::Instant(uint64_t track, int64_t ts_ns, std::string_view name,
                               const char* category) {
  StartEvent();
  buf_.append("\"ph\":\"i\",\"s\":\"t\",\"cat\":");
  AppendJsonString(&buf_, JsonEscaping::kCompact, category);
  buf_.append(",\"name\":");
  AppendName(name);
  AppendWhere(track);
  AppendTs("ts", ts_ns);
  buf_.push_back('}');
  Flush();
}

void ChromeJsonWriter::Counter(uint64_t track, int64_t ts_ns, double value) {
  StartEvent();
  buf_.append("\"ph\":\"C\",\"name\":");
  AppendJsonString(&buf_, JsonEscaping::kCompact,
                   track < tracks_.size() ? tracks_[track].counter_name : "counter");
  AppendWhere(track);
  AppendTs("ts", ts_ns);
  char b[64];
  if (!std::isfinite(value)) value = 0;
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(b, sizeof(b), ",\"args\":{\"value\":%" PRId64 "}}", static_cast<int64_t>(value));
  } else {
    std::snprintf(b, sizeof(b), ",\"args\":{\"value\":%.4f}}", value);
  }
  buf_.append(b);
  Flush();
}

Status ChromeJsonWriter::Finish() {
  if (!header_written_) SetTimeOrigin(0);
  buf_.append("\n]}\n");
  out_->Write(buf_);
  buf_.clear();
  return OkStatus();
}

}  // namespace stepscope
