#include "common/json_reader.h"

#include "common/json_scan.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace stepscope {

Status JsonReader::Error(const std::string& what) const {
  return InvalidInput((name_.empty() ? "" : name_ + ": ") + "byte " + std::to_string(pos_) + ": " +
                      what);
}

void JsonReader::Ws() { pos_ = static_cast<size_t>(SkipJsonWs(At(), Limit()) - s_.data()); }

Status JsonReader::Scanned(JsonScan r, const char* stop, const char* error) {
  pos_ = static_cast<size_t>(stop - s_.data());
  return r == JsonScan::kOk ? OkStatus() : Error(error);
}

Status JsonReader::Literal(std::string_view* word) {
  const char* stop = nullptr;
  const char* error = "";
  const JsonScan r = ScanJsonLiteral(At(), Limit(), word, &stop, &error);
  return Scanned(r, stop, error);
}

JsonReader::Type JsonReader::Peek() {
  Ws();
  if (pos_ >= s_.size()) return Type::kEnd;
  char c = s_[pos_];
  switch (c) {
    case '{':
      return Type::kObject;
    case '[':
      return Type::kArray;
    case '"':
      return Type::kString;
    case 't':
    case 'f':
      return Type::kBool;
    case 'n':
      return Type::kNull;
    default:
      return (c == '-' || (c >= '0' && c <= '9')) ? Type::kNumber : Type::kBad;
  }
}

Status JsonReader::Object(const std::function<Status(std::string_view key)>& member) {
  if (Peek() != Type::kObject) return Error("expected an object");
  if (++depth_ > kMaxDepth) return Error("nesting deeper than " + std::to_string(kMaxDepth));
  ++pos_;
  Ws();
  if (pos_ < s_.size() && s_[pos_] == '}') {
    ++pos_;
    --depth_;
    return OkStatus();
  }
  for (;;) {
    if (Peek() != Type::kString) return Error("expected a member name in quotes");
    std::string key;
    RETURN_IF_ERROR(String(&key));
    Ws();
    if (pos_ >= s_.size() || s_[pos_] != ':') return Error("expected ':'");
    ++pos_;
    RETURN_IF_ERROR(member(key));
    Ws();
    if (pos_ < s_.size() && s_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      --depth_;
      return OkStatus();
    }
    return Error(pos_ >= s_.size() ? "unexpected end of input inside an object"
                                   : "expected ',' or '}'");
  }
}

Status JsonReader::Array(const std::function<Status()>& element) {
  if (Peek() != Type::kArray) return Error("expected an array");
  if (++depth_ > kMaxDepth) return Error("nesting deeper than " + std::to_string(kMaxDepth));
  ++pos_;
  Ws();
  if (pos_ < s_.size() && s_[pos_] == ']') {
    ++pos_;
    --depth_;
    return OkStatus();
  }
  for (;;) {
    size_t before = pos_;
    RETURN_IF_ERROR(element());
    if (pos_ == before) RETURN_IF_ERROR(Skip());  // the callback ignored the element
    Ws();
    if (pos_ < s_.size() && s_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      --depth_;
      return OkStatus();
    }
    return Error(pos_ >= s_.size() ? "unexpected end of input inside an array"
                                   : "expected ',' or ']'");
  }
}

Status JsonReader::String(std::string* out) {
  if (Peek() != Type::kString) return Error("expected a string");
  std::string_view text;
  const char* stop = nullptr;
  const char* error = "";
  scratch_.clear();
  const JsonScan r = ScanJsonString(At(), Limit(), &scratch_, &text, &stop, &error);
  RETURN_IF_ERROR(Scanned(r, stop, error));
  out->assign(text);
  return OkStatus();
}

Status JsonReader::Number(std::string_view* text) {
  if (Peek() != Type::kNumber) return Error("expected a number");
  const char* start = At();
  const char* stop = nullptr;
  const char* error = "";
  const JsonScan r = ScanJsonNumber(start, Limit(), &stop, &error);
  RETURN_IF_ERROR(Scanned(r, stop, error));
  *text = std::string_view(start, static_cast<size_t>(stop - start));
  if (text->size() > 64) return Error("number longer than 64 characters");
  return OkStatus();
}

Status JsonReader::Int(int64_t* out) {
  std::string_view t;
  RETURN_IF_ERROR(Number(&t));
  std::string buf(t);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(buf.c_str(), &end, 10);
  if (*end == '\0' && errno == 0) {
    *out = v;
    return OkStatus();
  }
  double d = std::strtod(buf.c_str(), &end);
  if (*end != '\0' || !std::isfinite(d) || std::fabs(d) > 9.2e18) return Error("bad integer");
  *out = static_cast<int64_t>(d);
  return OkStatus();
}

Status JsonReader::Double(double* out) {
  std::string_view t;
  RETURN_IF_ERROR(Number(&t));
  std::string buf(t);
  char* end = nullptr;
  *out = std::strtod(buf.c_str(), &end);
  if (*end != '\0') return Error("bad number");
  return OkStatus();
}

Status JsonReader::Bool(bool* out) {
  if (Peek() != Type::kBool) return Error("expected true or false");
  std::string_view word;
  RETURN_IF_ERROR(Literal(&word));
  *out = word == "true";
  return OkStatus();
}

Status JsonReader::IntOrNull(int64_t* out, int64_t fallback) {
  if (Peek() == Type::kNull) {
    *out = fallback;
    return Null();
  }
  return Int(out);
}

Status JsonReader::Null() {
  if (Peek() != Type::kNull) return Error("expected null");
  std::string_view word;
  return Literal(&word);
}

Status JsonReader::Skip() {
  switch (Peek()) {
    case Type::kObject:
      return Object([&](std::string_view) { return Skip(); });
    case Type::kArray:
      return Array([&]() { return Skip(); });
    case Type::kString: {
      std::string_view ignored;
      const char* stop = nullptr;
      const char* error = "";
      scratch_.clear();
      const JsonScan r = ScanJsonString(At(), Limit(), &scratch_, &ignored, &stop, &error);
      return Scanned(r, stop, error);
    }
    case Type::kNumber: {
      std::string_view t;
      return Number(&t);
    }
    case Type::kBool: {
      bool b;
      return Bool(&b);
    }
    case Type::kNull:
      return Null();
    case Type::kEnd:
      return Error("unexpected end of file");
    default:
      return Error("unexpected character");
  }
}

Status JsonReader::End() {
  Ws();
  if (pos_ != s_.size()) return Error("trailing data after the JSON value");
  return OkStatus();
}

}  // namespace stepscope
