#include "common/json_reader.h"

#include "common/json_value.h"
#include "common/strings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace stepscope {

Status JsonReader::Error(const std::string& what) const {
  return InvalidInput((name_.empty() ? "" : name_ + ": ") + "byte " + std::to_string(pos_) + ": " +
                      what);
}

void JsonReader::Ws() {
  while (pos_ < s_.size() &&
         (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) {
    ++pos_;
  }
}

bool JsonReader::Literal(std::string_view word) {
  if (s_.substr(pos_, word.size()) != word) return false;
  pos_ += word.size();
  return true;
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
  ++pos_;
  out->clear();
  while (pos_ < s_.size()) {
    char c = s_[pos_];
    if (c == '"') {
      ++pos_;
      return OkStatus();
    }
    if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
    if (c != '\\') {
      out->push_back(c);
      ++pos_;
      continue;
    }
    size_t used = 0;
    const char* error = "";
    JsonEscape e = DecodeJsonEscape(s_.substr(pos_), out, &used, &error);
    if (e == JsonEscape::kIncomplete) break;
    pos_ += used;
    if (e == JsonEscape::kBad) return Error(error);
  }
  return Error("unterminated string");
}

// JSON number syntax: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
Status JsonReader::Number(std::string_view* text) {
  if (Peek() != Type::kNumber) return Error("expected a number");
  const size_t start = pos_;
  auto digits = [&] {
    const size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ - b;
  };
  if (s_[pos_] == '-') ++pos_;
  if (pos_ < s_.size() && s_[pos_] == '0') {
    ++pos_;
  } else if (digits() == 0) {
    return Error("invalid number: expected a digit");
  }
  if (pos_ < s_.size() && s_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) return Error("invalid number: expected a digit after '.'");
  }
  if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
    if (digits() == 0) return Error("invalid number: expected a digit in the exponent");
  }
  *text = s_.substr(start, pos_ - start);
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
  Ws();
  if (Literal("true")) {
    *out = true;
  } else if (Literal("false")) {
    *out = false;
  } else {
    return Error("expected true or false");
  }
  return OkStatus();
}

Status JsonReader::IntOrNull(int64_t* out, int64_t fallback) {
  if (Peek() == Type::kNull) {
    Literal("null");
    *out = fallback;
    return OkStatus();
  }
  return Int(out);
}

Status JsonReader::Null() {
  Ws();
  if (!Literal("null")) return Error("expected null");
  return OkStatus();
}

Status JsonReader::Skip() {
  switch (Peek()) {
    case Type::kObject:
      return Object([&](std::string_view) { return Skip(); });
    case Type::kArray:
      return Array([&]() { return Skip(); });
    case Type::kString: {
      std::string ignored;
      return String(&ignored);
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
      if (Literal("null")) return OkStatus();
      return Error("bad literal");
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
