#include "importers/json_tokenizer.h"

#include "common/json_scan.h"

namespace stepscope {

bool ChromeTraceTokenizer::Skipper::Feed(const char* p, const char* end, size_t* used) {
  for (const char* q = p; q < end; ++q) {
    const char c = *q;
    if (!started) {
      started = true;
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        depth = 1;
      } else {
        scalar = true;
      }
      continue;
    }
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) {
          *used = static_cast<size_t>(q + 1 - p);
          return true;
        }
      }
      continue;
    }
    if (scalar) {
      if (c == ',' || c == ']' || c == '}' || IsJsonWs(c)) {
        *used = static_cast<size_t>(q - p);
        return true;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      *used = static_cast<size_t>(q + 1 - p);
      return true;
    }
  }
  *used = static_cast<size_t>(end - p);
  return false;
}

Status ChromeTraceTokenizer::SyntaxError(size_t pos, const std::string& what) const {
  return InvalidInput("byte " + std::to_string(base_offset_ + pos) + ": " + what);
}

Status ChromeTraceTokenizer::Feed(const char* data, size_t size) {
  if (pos_ > 0) {
    // Drop consumed bytes; what remains is at most one partial value.
    buf_.erase(0, pos_);
    base_offset_ += pos_;
    retry_at_ = retry_at_ > pos_ ? retry_at_ - pos_ : 0;
    pos_ = 0;
  }
  buf_.append(data, size);
  if (buf_.size() < retry_at_) return OkStatus();
  return Process(false);
}

Status ChromeTraceTokenizer::Finish() {
  RETURN_IF_ERROR(Process(true));
  if (state_ == State::kDone) return OkStatus();
  if (state_ == State::kStart) {
    return InvalidInput(bytes() == 0 ? "byte 0: empty file: expected a Chrome-trace JSON object"
                                     : "byte " + std::to_string(bytes()) +
                                           ": no JSON value (the file holds only whitespace)");
  }
  const char* where = state_ == State::kFirstEvent || state_ == State::kEvent ||
                              (state_ == State::kSkip && after_skip_ == State::kEvent)
                          ? "inside the traceEvents array"
                          : "inside the top-level object";
  return InvalidInput("byte " + std::to_string(bytes()) + ": unexpected end of data " + where +
                      ": the JSON is truncated (was the trace fully written?)");
}

Status ChromeTraceTokenizer::Value(const char* q, const char* end, State next, bool* more) {
  const char* b = buf_.data();
  size_t consumed = 0;
  const JsonParseOutcome r = parser_.Parse(q, end, &consumed);
  if (r == JsonParseOutcome::kIncomplete) {
    if (static_cast<size_t>(end - q) <= max_value_bytes_) {
      *more = true;
      return OkStatus();
    }
    pos_ = static_cast<size_t>(q - b);
    skip_ = Skipper();
    after_skip_ = next;
    state_ = State::kSkip;
    return OkStatus();
  }
  if (r == JsonParseOutcome::kError) {
    return SyntaxError(static_cast<size_t>(q - b) + parser_.error_offset(), parser_.error());
  }
  const uint64_t offset = base_offset_ + static_cast<uint64_t>(q - b);
  if (consumed > max_value_bytes_) {
    ++skipped_values_;  // as if it had arrived in small chunks
  } else if (next == State::kEvent) {
    ++events_;
    RETURN_IF_ERROR(sink_->OnEvent(parser_, offset));
  } else {
    RETURN_IF_ERROR(sink_->OnTopLevel(key_, parser_, offset));
  }
  pos_ = static_cast<size_t>(q + consumed - b);
  state_ = next;
  return OkStatus();
}

Status ChromeTraceTokenizer::Process(bool final) {
  const char* b = buf_.data();
  const char* end = b + buf_.size();
  size_t consumed = 0;
  JsonParseOutcome r;
  while (true) {
    if (state_ == State::kSkip) {
      size_t used = 0;
      const bool done = skip_.Feed(b + pos_, end, &used);
      pos_ += used;
      if (!done) {
        retry_at_ = 0;  // the skipped bytes are dropped at the next Feed()
        return OkStatus();
      }
      ++skipped_values_;
      state_ = after_skip_;
      continue;
    }
    const char* p = SkipJsonWs(b + pos_, end);
    pos_ = static_cast<size_t>(p - b);
    if (p == end) return OkStatus();
    switch (state_) {
      case State::kStart:
        if (*p == '{') {
          ++pos_;
          state_ = State::kFirstKey;
          continue;
        }
        if (*p == '[') {
          return SyntaxError(pos_,
                             "the top level is a JSON array; expected a Chrome-trace object "
                             "{\"traceEvents\": [...], ...} as torch.profiler writes it");
        }
        return SyntaxError(pos_, "not a JSON object: expected '{' at the start of a Chrome trace");
      case State::kFirstKey:
      case State::kKey: {
        if (*p == '}' && state_ == State::kFirstKey) {
          ++pos_;
          state_ = State::kDone;
          continue;
        }
        if (*p != '"') return SyntaxError(pos_, "expected a member name in double quotes");
        r = parser_.Parse(p, end, &consumed);
        if (r == JsonParseOutcome::kIncomplete) {
          if (static_cast<size_t>(end - p) <= max_value_bytes_) goto need_more;
          return SyntaxError(pos_, "a member name longer than " +
                                       std::to_string(max_value_bytes_ >> 20) +
                                       " MiB: not a Chrome trace");
        }
        if (r == JsonParseOutcome::kError)
          return SyntaxError(pos_ + parser_.error_offset(), parser_.error());
        key_.assign(parser_.root().text);
        const char* q = SkipJsonWs(p + consumed, end);
        if (q == end) goto need_more;
        if (*q != ':')
          return SyntaxError(static_cast<size_t>(q - b), "expected ':' after a member name");
        q = SkipJsonWs(q + 1, end);
        if (q == end) goto need_more;
        if (key_ == "traceEvents") {
          if (*q != '[')
            return SyntaxError(static_cast<size_t>(q - b), "\"traceEvents\" is not an array");
          saw_trace_events_ = true;
          pos_ = static_cast<size_t>(q + 1 - b);
          state_ = State::kFirstEvent;
          continue;
        }
        bool more = false;
        RETURN_IF_ERROR(Value(q, end, State::kAfterMember, &more));
        if (more) goto need_more;
        continue;
      }
      case State::kFirstEvent:
      case State::kEvent: {
        const char* q = p;
        if (*q == ']') {
          ++pos_;
          state_ = State::kAfterMember;
          continue;
        }
        if (state_ == State::kEvent) {
          if (*q != ',')
            return SyntaxError(pos_, "expected ',' or ']' after an event in traceEvents");
          q = SkipJsonWs(q + 1, end);
          if (q == end) goto need_more;
          if (*q == ']')
            return SyntaxError(static_cast<size_t>(q - b),
                               "trailing ',' before ']' in traceEvents");
        }
        bool more = false;
        RETURN_IF_ERROR(Value(q, end, State::kEvent, &more));
        if (more) goto need_more;
        continue;
      }
      case State::kAfterMember:
        if (*p == ',') {
          ++pos_;
          state_ = State::kKey;
          continue;
        }
        if (*p == '}') {
          ++pos_;
          state_ = State::kDone;
          continue;
        }
        return SyntaxError(pos_, "expected ',' or '}' after a top-level member");
      case State::kDone:
        return SyntaxError(pos_, "unexpected data after the end of the top-level JSON object");
      case State::kSkip:
        break;  // handled above the switch
    }
  }
need_more:
  // Wait until the unconsumed window has doubled before parsing it again.
  if (!final) retry_at_ = buf_.size() + (buf_.size() - pos_);
  return OkStatus();
}

}  // namespace stepscope
