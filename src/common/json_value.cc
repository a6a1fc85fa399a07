#include "common/json_value.h"

#include "common/json_reader.h"

#include <cstdio>
#include "common/json_writer.h"
#include "common/strings.h"
#include "common/table.h"

#include <cerrno>
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

// The tree is built on the pull reader (common/json_reader.h): one JSON
// reading layer, one error wording.
namespace {
Status BuildValue(JsonReader& r, JsonValue* out) {
  switch (r.Peek()) {
    case JsonReader::Type::kObject: {
      *out = JsonValue::Object();
      return r.Object([&](std::string_view key) -> Status {
        JsonValue v;
        RETURN_IF_ERROR(BuildValue(r, &v));
        out->Set(std::string(key), std::move(v));
        return OkStatus();
      });
    }
    case JsonReader::Type::kArray: {
      *out = JsonValue::Array();
      return r.Array([&]() -> Status {
        JsonValue v;
        RETURN_IF_ERROR(BuildValue(r, &v));
        out->Append(std::move(v));
        return OkStatus();
      });
    }
    case JsonReader::Type::kString: {
      std::string str;
      RETURN_IF_ERROR(r.String(&str));
      *out = JsonValue::String(std::move(str));
      return OkStatus();
    }
    case JsonReader::Type::kNumber: {
      std::string_view text;
      RETURN_IF_ERROR(r.NumberText(&text));
      const std::string num(text);
      // Integers without a fraction or exponent stay exact (int64); others are doubles.
      if (num.find_first_of(".eE") == std::string::npos) {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(num.c_str(), &end, 10);
        if (errno == 0 && *end == '\0') {
          *out = JsonValue::Int(v);
          return OkStatus();
        }
      }
      *out = JsonValue::Double(std::strtod(num.c_str(), nullptr));
      return OkStatus();
    }
    case JsonReader::Type::kBool: {
      bool b = false;
      RETURN_IF_ERROR(r.Bool(&b));
      *out = JsonValue::Bool(b);
      return OkStatus();
    }
    case JsonReader::Type::kNull:
      *out = JsonValue();
      return r.Null();
    case JsonReader::Type::kEnd:
      return r.Error("unexpected end of input, expected a value");
    case JsonReader::Type::kBad:
      break;
  }
  return r.Error("unexpected character, expected a value");
}
}  // namespace

StatusOr<JsonValue> ParseJson(std::string_view text) {
  JsonValue v;
  JsonReader r(text, "");
  RETURN_IF_ERROR(BuildValue(r, &v));
  RETURN_IF_ERROR(r.End());
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
