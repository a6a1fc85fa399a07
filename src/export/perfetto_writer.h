// PerfettoWriter: a TimelineSink that writes the Perfetto protobuf trace
// format (TracePacket / TrackDescriptor / TrackEvent), packet by packet.
//
// The file is a Trace message written incrementally: each packet goes out as
// field 1 (tag 0x0a, length, bytes) as soon as it is built, so memory stays
// flat however long the trace. Event names, categories and argument names are
// interned on one packet sequence (InternedData in the packet that first uses
// a name), which keeps a kernel name repeated a million times to one copy.
// Messages come from our own perfetto_trace.proto (libprotobuf-lite).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "export/output_file.h"
#include "export/perfetto_trace.pb.h"
#include "export/timeline.h"

namespace stepscope {

class PerfettoWriter : public TimelineSink {
 public:
  explicit PerfettoWriter(OutputFile* out);

  void SetTimeOrigin(int64_t origin_ns) override;
  void AddTrack(const TrackInfo& track) override;
  void BeginSlice(const SliceEvent& e) override;
  void EndSlice(uint64_t track, int64_t ts_ns) override;
  void Instant(uint64_t track, int64_t ts_ns, std::string_view name, const char* category) override;
  void Counter(uint64_t track, int64_t ts_ns, double value) override;
  Status Finish() override;

 private:
  // The packet sequence all packets go on.
  static constexpr uint32_t kSequenceId = 1;

  uint64_t Ts(int64_t ts_ns) const { return static_cast<uint64_t>(ts_ns - shift_); }
  uint64_t InternName(std::string_view name);
  uint64_t InternCategory(const char* category);
  uint64_t InternArgName(const char* key);
  pftrace::TracePacket* NewPacket(bool uses_interning);
  void WritePacket();

  OutputFile* out_;
  int64_t shift_ = 0;  // subtracted from every timestamp (only when the trace has negative times)
  pftrace::TracePacket packet_;
  std::string buffer_;
  std::unordered_map<std::string, uint64_t> names_, categories_, arg_names_;
  std::vector<bool> bytes_counter_;  // by track uuid
};

}  // namespace stepscope
