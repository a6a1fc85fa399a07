// Recursive-descent JSON parser: one function per grammar rule, a cursor over
// the input, and an explicit depth counter instead of trusting the stack.
#include "roofline/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/table.h"

namespace stepscope {

JsonValue JsonValue::Bool(bool b) {
  JsonValue v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  return v;
}
JsonValue JsonValue::Number(double d) {
  JsonValue v;
  v.type_ = Type::kNumber;
  v.number_ = d;
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

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& m : members_) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

double JsonValue::NumberOr(std::string_view key, double fallback) const {
  const JsonValue* v = Find(key);
  return v && v->is_number() ? v->number() : fallback;
}

std::string JsonValue::StringOr(std::string_view key, const std::string& fallback) const {
  const JsonValue* v = Find(key);
  return v && v->is_string() ? v->str() : fallback;
}

void JsonValue::Set(std::string key, JsonValue v) {
  for (auto& m : members_) {
    if (m.first == key) {
      m.second = std::move(v);
      return;
    }
  }
  members_.emplace_back(std::move(key), std::move(v));
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
    case Type::kNumber:
      return JsonNumber(number_);
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

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    if (!ParseValue(&v, 0)) return InvalidInput(error_);
    SkipSpace();
    if (pos_ != s_.size()) {
      Fail("unexpected data after the JSON value");
      return InvalidInput(error_);
    }
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = "offset " + std::to_string(pos_) + ": " + what;
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool ParseValue(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return Fail("nesting deeper than 64 levels");
    SkipSpace();
    if (pos_ >= s_.size()) return Fail("unexpected end of input");
    char c = s_[pos_];
    switch (c) {
      case 'n':
        *out = JsonValue();
        return Literal("null");
      case 't':
        *out = JsonValue::Bool(true);
        return Literal("true");
      case 'f':
        *out = JsonValue::Bool(false);
        return Literal("false");
      case '"': {
        std::string s;
        if (!ParseString(&s)) return false;
        *out = JsonValue::String(std::move(s));
        return true;
      }
      case '[':
        return ParseArray(out, depth);
      case '{':
        return ParseObject(out, depth);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
        return Fail(std::string("unexpected character '") + c + "'");
    }
  }

  bool ParseNumber(JsonValue* out) {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&]() {
      size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - b;
    };
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      return Fail("invalid number");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return Fail("invalid number: no digits after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Fail("invalid number: no exponent digits");
    }
    std::string text(s_.substr(start, pos_ - start));
    *out = JsonValue::Number(std::strtod(text.c_str(), nullptr));
    return true;
  }

  static void AppendUtf8(std::string* s, uint32_t cp) {
    if (cp < 0x80) {
      *s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *s += static_cast<char>(0xC0 | (cp >> 6));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *s += static_cast<char>(0xE0 | (cp >> 12));
      *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *s += static_cast<char>(0xF0 | (cp >> 18));
      *s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool Hex4(uint32_t* out) {
    if (pos_ + 4 > s_.size()) return Fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9') {
        v |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Fail("invalid hex digit in \\u escape");
      }
    }
    *out = v;
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= s_.size()) return Fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= s_.size()) return Fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
            size_t save = pos_;
            pos_ += 2;
            uint32_t lo = 0;
            if (!Hex4(&lo)) return false;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              pos_ = save;
              cp = 0xFFFD;
            }
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Fail(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  bool ParseArray(JsonValue* out, int depth) {
    ++pos_;
    *out = JsonValue::Array();
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      JsonValue item;
      if (!ParseValue(&item, depth + 1)) return false;
      out->items_.push_back(std::move(item));
      SkipSpace();
      if (pos_ >= s_.size()) return Fail("unterminated array");
      char c = s_[pos_++];
      if (c == ']') return true;
      if (c != ',') return Fail("expected ',' or ']' in array");
    }
  }

  bool ParseObject(JsonValue* out, int depth) {
    ++pos_;
    *out = JsonValue::Object();
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a string key in object");
      std::string key;
      if (!ParseString(&key)) return false;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':' after object key");
      ++pos_;
      JsonValue v;
      if (!ParseValue(&v, depth + 1)) return false;
      out->members_.emplace_back(std::move(key), std::move(v));
      SkipSpace();
      if (pos_ >= s_.size()) return Fail("unterminated object");
      char c = s_[pos_++];
      if (c == '}') return true;
      if (c != ',') return Fail("expected ',' or '}' in object");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

StatusOr<JsonValue> ParseJson(std::string_view text) { return JsonParser(text).ParseDocument(); }

}  // namespace stepscope
