#include "common/json_value.h"

#include <cstdio>
#include "common/strings.h"
#include "common/table.h"

#include <cmath>
#include <cstdlib>

namespace stepscope {

JsonValue JsonValue::Bool(bool b) {
  JsonValue v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  return v;
}
JsonValue JsonValue::Int(int64_t i) {
  JsonValue v;
  v.type_ = Type::kInt;
  v.int_ = i;
  return v;
}
JsonValue JsonValue::Double(double d) {
  JsonValue v;
  v.type_ = Type::kDouble;
  v.double_ = d;
  return v;
}
JsonValue JsonValue::String(std::string s) {
  JsonValue v;
  v.type_ = Type::kString;
  v.string_ = std::move(s);
  return v;
}
JsonValue JsonValue::Array() {
  JsonValue v;
  v.type_ = Type::kArray;
  return v;
}
JsonValue JsonValue::Object() {
  JsonValue v;
  v.type_ = Type::kObject;
  return v;
}

bool JsonValue::AsBool(bool fallback) const { return type_ == Type::kBool ? bool_ : fallback; }

int64_t JsonValue::AsInt(int64_t fallback) const {
  if (type_ == Type::kInt) return int_;
  if (type_ == Type::kDouble && std::isfinite(double_) && std::fabs(double_) < 9.2e18) {
    return static_cast<int64_t>(double_);
  }
  return fallback;
}

double JsonValue::AsDouble(double fallback) const {
  if (type_ == Type::kDouble) return double_;
  if (type_ == Type::kInt) return static_cast<double>(int_);
  return fallback;
}

const std::string& JsonValue::AsString() const {
  static const std::string kEmpty;
  return type_ == Type::kString ? string_ : kEmpty;
}

const JsonValue* JsonValue::Get(std::string_view key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

// Recursive descent over the text; `pos_` is the offset of the next byte.
class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  Status Parse(JsonValue* out) {
    RETURN_IF_ERROR(Value(out, 0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("trailing characters after the JSON document");
    return OkStatus();
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidInput("offset " + std::to_string(pos_) + ": " + what);
  }

  void SkipSpace() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
      ++pos_;
    }
  }

  bool Consume(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Status Value(JsonValue* out, int depth) {
    if (depth > kMaxJsonDepth) return Error("nesting deeper than " + std::to_string(kMaxJsonDepth));
    SkipSpace();
    if (pos_ >= s_.size()) return Error("unexpected end of input, expected a value");
    char c = s_[pos_];
    switch (c) {
      case '{':
        return ObjectValue(out, depth);
      case '[':
        return ArrayValue(out, depth);
      case '"':
        out->type_ = JsonValue::Type::kString;
        return StringValue(&out->string_);
      case 't':
        if (!Consume("true")) return Error("invalid literal, expected true");
        *out = JsonValue::Bool(true);
        return OkStatus();
      case 'f':
        if (!Consume("false")) return Error("invalid literal, expected false");
        *out = JsonValue::Bool(false);
        return OkStatus();
      case 'n':
        if (!Consume("null")) return Error("invalid literal, expected null");
        *out = JsonValue();
        return OkStatus();
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Number(out);
        return Error(std::string("unexpected character '") + c + "', expected a value");
    }
  }

  Status ObjectValue(JsonValue* out, int depth) {
    ++pos_;  // '{'
    out->type_ = JsonValue::Type::kObject;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return OkStatus();
    }
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a member name in quotes");
      std::string key;
      RETURN_IF_ERROR(StringValue(&key));
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Error("expected ':' after a member name");
      ++pos_;
      out->members_.emplace_back(std::move(key), JsonValue());
      RETURN_IF_ERROR(Value(&out->members_.back().second, depth + 1));
      SkipSpace();
      if (pos_ >= s_.size()) return Error("unexpected end of input inside an object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return OkStatus();
      }
      return Error("expected ',' or '}' in an object");
    }
  }

  Status ArrayValue(JsonValue* out, int depth) {
    ++pos_;  // '['
    out->type_ = JsonValue::Type::kArray;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return OkStatus();
    }
    while (true) {
      out->items_.emplace_back();
      RETURN_IF_ERROR(Value(&out->items_.back(), depth + 1));
      SkipSpace();
      if (pos_ >= s_.size()) return Error("unexpected end of input inside an array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return OkStatus();
      }
      return Error("expected ',' or ']' in an array");
    }
  }

  Status StringValue(std::string* out) {
    ++pos_;  // opening quote
    while (true) {
      // Copy the run of plain characters in one go.
      size_t run = pos_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' &&
             static_cast<unsigned char>(s_[run]) >= 0x20) {
        ++run;
      }
      out->append(s_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= s_.size()) return Error("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return OkStatus();
      }
      if (c != '\\') return Error("control character inside a string");
      size_t used = 0;
      const char* error = "";
      switch (DecodeJsonEscape(s_.substr(pos_), out, &used, &error)) {
        case JsonEscape::kOk:
          pos_ += used;
          break;
        case JsonEscape::kIncomplete:
          return Error("unterminated escape in a string");
        case JsonEscape::kBad:
          pos_ += used;
          return Error(error);
      }
    }
  }

  Status Number(JsonValue* out) {
    const size_t begin = pos_;
    bool negative = false;
    if (s_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return Error("expected a digit");
    // Integer part, accumulated as a magnitude while it fits.
    uint64_t mag = 0;
    bool overflow = false;
    if (s_[pos_] == '0') {
      ++pos_;
    } else {
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
        if (mag > (UINT64_MAX - d) / 10) overflow = true;
        mag = mag * 10 + d;
        ++pos_;
      }
    }
    bool is_double = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      is_double = true;
      ++pos_;
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
        return Error("expected a digit after '.'");
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      is_double = true;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
        return Error("expected a digit in the exponent");
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    }
    const uint64_t limit = negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    if (!is_double && !overflow && mag <= limit) {
      out->type_ = JsonValue::Type::kInt;
      out->int_ = negative ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
      return OkStatus();
    }
    std::string num(s_.substr(begin, pos_ - begin));
    out->type_ = JsonValue::Type::kDouble;
    out->double_ = std::strtod(num.c_str(), nullptr);
    return OkStatus();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

namespace {

// The code unit of "\uXXXX" at s[i], or -1 when s[i..i+6) is not one (cut
// short: *short_input says so; else *bad_at is the offending byte's offset).
int64_t UnicodeEscape(std::string_view s, size_t i, bool* short_input, size_t* bad_at) {
  *short_input = false;
  *bad_at = i;
  if (i + 2 > s.size()) {
    *short_input = true;
    return -1;
  }
  if (s[i] != '\\' || s[i + 1] != 'u') return -1;
  uint32_t v = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    if (k >= s.size()) {
      *short_input = true;
      return -1;
    }
    int d = HexDigitValue(s[k]);
    if (d < 0) {
      *bad_at = k;
      return -1;
    }
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

}  // namespace

JsonEscape DecodeJsonEscape(std::string_view s, std::string* out, size_t* used,
                            const char** error) {
  if (s.size() < 2) return JsonEscape::kIncomplete;
  char simple = 0;
  switch (s[1]) {
    case '"':
      simple = '"';
      break;
    case '\\':
      simple = '\\';
      break;
    case '/':
      simple = '/';
      break;
    case 'b':
      simple = '\b';
      break;
    case 'f':
      simple = '\f';
      break;
    case 'n':
      simple = '\n';
      break;
    case 'r':
      simple = '\r';
      break;
    case 't':
      simple = '\t';
      break;
    case 'u':
      break;
    default:
      *used = 1;
      *error = "unknown escape in a string";
      return JsonEscape::kBad;
  }
  if (simple != 0) {
    out->push_back(simple);
    *used = 2;
    return JsonEscape::kOk;
  }
  bool short_input = false;
  size_t bad_at = 0;
  int64_t cp = UnicodeEscape(s, 0, &short_input, &bad_at);
  if (cp < 0) {
    if (short_input) return JsonEscape::kIncomplete;
    *used = bad_at;
    *error = "bad \\u escape: expected 4 hex digits";
    return JsonEscape::kBad;
  }
  *used = 6;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    int64_t lo = UnicodeEscape(s, 6, &short_input, &bad_at);
    if (short_input) {
      // Only "\" or "\u" plus fewer than 4 digits, or nothing, follows: a
      // low surrogate may still come.
      bool may_continue = s.size() == 6 || s[6] == '\\';
      if (may_continue && (s.size() < 8 || s[7] == 'u')) return JsonEscape::kIncomplete;
    }
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      *used = 12;
    } else {
      cp = 0xFFFD;
    }
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    cp = 0xFFFD;
  }
  AppendUtf8(out, static_cast<uint32_t>(cp));
  return JsonEscape::kOk;
}

StatusOr<JsonValue> ParseJson(std::string_view text) {
  JsonValue v;
  JsonParser p(text);
  Status st = p.Parse(&v);
  if (!st.ok()) return st;
  return v;
}

double JsonValue::NumberOr(std::string_view key, double fallback) const {
  const JsonValue* v = Get(key);
  return v && v->is_number() ? v->AsDouble() : fallback;
}

std::string JsonValue::StringOr(std::string_view key, const std::string& fallback) const {
  const JsonValue* v = Get(key);
  return v && v->is_string() ? v->AsString() : fallback;
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  // The shortest of %.15g/%.16g/%.17g that reads back exactly.
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string JsonValue::Dump() const {
  switch (type_) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return bool_ ? "true" : "false";
    case Type::kInt:
      return std::to_string(int_);
    case Type::kDouble:
      return JsonNumber(double_);
    case Type::kString:
      return JsonQuote(string_);
    case Type::kArray: {
      std::string s = "[";
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) s += ",";
        s += items_[i].Dump();
      }
      return s + "]";
    }
    case Type::kObject: {
      std::string s = "{";
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) s += ",";
        s += JsonQuote(members_[i].first) + ":" + members_[i].second.Dump();
      }
      return s + "}";
    }
  }
  return "null";
}

}  // namespace stepscope
