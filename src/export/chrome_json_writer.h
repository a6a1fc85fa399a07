// ChromeJsonWriter: a TimelineSink that writes the Chrome trace-event JSON
// format (the "JSON Object Format" with a traceEvents array), streaming.
//
// Slices become complete events ("ph":"X"), flows "s"/"f" pairs (binding to
// the enclosing slice at the GPU end), counters "C" events and track names
// "M" metadata. Chrome JSON has no track ids: every track maps to the
// (pid, tid) pair chosen by the timeline (GPU devices are pseudo processes,
// streams their threads). Times are microseconds with three decimals,
// relative to the trace's first timestamp (otherData.time_origin_ns holds it)
// so that nanoseconds survive a JavaScript double.
#pragma once

#include <string>
#include <vector>

#include "export/output_file.h"
#include "export/timeline.h"

namespace stepscope {

class ChromeJsonWriter : public TimelineSink {
 public:
  ChromeJsonWriter(OutputFile* out, std::string source);

  void SetTimeOrigin(int64_t origin_ns) override;
  void AddTrack(const TrackInfo& track) override;
  void BeginSlice(const SliceEvent& e) override;
  void EndSlice(uint64_t track, int64_t ts_ns) override {}
  void Instant(uint64_t track, int64_t ts_ns, std::string_view name, const char* category) override;
  void Counter(uint64_t track, int64_t ts_ns, double value) override;
  Status Finish() override;

  // Chrome JSON has no string table: every event repeats its name, so a name of
  // 200 kB on 14,000 slices made a 25 MB trace a 2.6 GB file (13 s; the fuzz
  // campaign, issue 36). Longer names are cut here, at a UTF-8 boundary, with
  // "..." and counted; the Perfetto format interns names and keeps them whole.
  static constexpr size_t kMaxNameBytes = 16384;
  int64_t names_truncated() const { return names_truncated_; }

 private:
  struct Where {
    int64_t pid = 0, tid = 0;
    std::string counter_name;
  };
  void StartEvent();
  void AppendTs(const char* key, int64_t ns);  // relative to the origin
  void AppendMicros(const char* key, int64_t ns);
  void AppendWhere(uint64_t track);
  void Flush();
  void AppendName(std::string_view name);
  int64_t names_truncated_ = 0;

  OutputFile* out_;
  std::string source_;
  int64_t origin_ = 0;
  bool first_event_ = true;
  bool header_written_ = false;
  std::string buf_;
  std::vector<Where> tracks_;  // by uuid
};

}  // namespace stepscope
