// ChromeTraceTokenizer: streaming bytes -> trace events for Chrome-trace JSON
// (torch.profiler / Kineto output), at any chunk boundary.
//
// The file is one JSON object; its "traceEvents" member is an array that can
// hold millions of events. The tokenizer keeps a small window of unconsumed
// bytes: each Feed() appends a chunk, then every complete value is cut off the
// front and handed to the sink, parsed by JsonValueParser:
//   * each element of "traceEvents" -> Sink::OnEvent;
//   * every other top-level member (deviceProperties, distributedInfo,
//     baseTimeNanoseconds, ...) -> Sink::OnTopLevel.
// A value cut by the chunk boundary stays in the window until the next chunk
// completes it (re-parsing is retried only once the window has doubled, so a
// huge value costs linear time). Memory is bounded by the largest single
// value, never by the file, and a single value is bounded too: an event or
// top-level member longer than kMaxValueBytes (a "string bomb": one 1 GB
// string compresses to 1 MB of gzip) is skipped by a byte scanner that keeps
// only its nesting state, and counted (skipped_values()); its bytes are not
// validated.
//
// The whole document is validated as strict JSON; a syntax error, a top level
// that is not an object, a "traceEvents" that is not an array, or data ending
// early is an InvalidInput error whose message starts with "byte N:" (N is the
// offset in the decoded byte stream). Events that are valid JSON but make no
// sense as trace events are the sink's business (counted, not fatal).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "importers/json_value.h"

namespace stepscope {

class ChromeTraceTokenizer {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    // One element of traceEvents (normally an object); `offset` is the byte
    // offset of its first byte. A non-OK status stops the import.
    virtual Status OnEvent(const JsonValueParser& event, uint64_t offset) = 0;
    // A member of the top-level object other than traceEvents.
    virtual Status OnTopLevel(std::string_view key, const JsonValueParser& value,
                              uint64_t offset) = 0;
  };

  // The largest event or top-level value parsed; longer ones are skipped.
  static constexpr size_t kDefaultMaxValueBytes = size_t{32} << 20;

  explicit ChromeTraceTokenizer(Sink* sink, size_t max_value_bytes = kDefaultMaxValueBytes)
      : sink_(sink), max_value_bytes_(max_value_bytes) {}

  Status Feed(const char* data, size_t size);
  // Call after the last Feed(): fails when the document is incomplete.
  Status Finish();

  uint64_t events() const { return events_; }
  uint64_t bytes() const { return base_offset_ + buf_.size(); }
  bool saw_trace_events() const { return saw_trace_events_; }
  // Events and top-level values skipped for being longer than the bound.
  uint64_t skipped_values() const { return skipped_values_; }

 private:
  enum class State { kStart, kFirstKey, kKey, kFirstEvent, kEvent, kAfterMember, kSkip, kDone };
  // Scans an oversized value without keeping it: true at its end (*used
  // bytes of `p` belong to it).
  struct Skipper {
    bool started = false, in_string = false, escape = false, scalar = false;
    int64_t depth = 0;
    bool Feed(const char* p, const char* end, size_t* used);
  };
  Status Process(bool final);
  // The value at `q` (a top-level member's, then kAfterMember; an event, then
  // kEvent): handed to the sink and the state set to `next`; counted as
  // skipped when longer than the bound; an incomplete one longer than the
  // bound is skipped as it arrives (kSkip, then `next`); *more when an
  // incomplete one needs more bytes.
  Status Value(const char* q, const char* end, State next, bool* more);
  Status SyntaxError(size_t pos, const std::string& what) const;

  Sink* sink_;
  JsonValueParser parser_;
  std::string buf_;           // unconsumed bytes (and already-consumed ones before pos_)
  size_t pos_ = 0;            // first unconsumed byte in buf_
  uint64_t base_offset_ = 0;  // stream offset of buf_[0]
  size_t retry_at_ = 0;       // an incomplete value is retried once buf_ reaches this size
  State state_ = State::kStart;
  uint64_t events_ = 0;
  bool saw_trace_events_ = false;
  std::string key_;
  size_t max_value_bytes_;
  Skipper skip_;
  State after_skip_ = State::kEvent;
  uint64_t skipped_values_ = 0;
};

}  // namespace stepscope
