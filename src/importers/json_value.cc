#include "importers/json_value.h"

#include "common/json_scan.h"

namespace stepscope {
namespace {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

uint32_t JsonValueParser::AddNode(JsonType type, std::string_view key) {
  uint32_t idx = static_cast<uint32_t>(nodes_.size());
  JsonNode n;
  n.type = type;
  n.key = key;
  nodes_.push_back(n);
  if (!stack_.empty()) {
    Open& parent = stack_.back();
    if (parent.last_child == 0) {
      nodes_[parent.node].first_child = idx;
    } else {
      nodes_[parent.last_child].next = idx;
    }
    parent.last_child = idx;
  }
  return idx;
}

JsonParseOutcome JsonValueParser::Fail(const char* begin, const char* at, const char* what) {
  error_offset_ = static_cast<size_t>(at - begin);
  error_ = what;
  return JsonParseOutcome::kError;
}

JsonParseOutcome JsonValueParser::Scanned(JsonScan r, const char* begin, const char* at,
                                          const char* what) {
  if (r == JsonScan::kIncomplete) return JsonParseOutcome::kIncomplete;
  return Fail(begin, at, what);
}

JsonParseOutcome JsonValueParser::Parse(const char* begin, const char* end, size_t* consumed) {
  nodes_.clear();
  stack_.clear();
  scratch_.clear();
  size_t avail = static_cast<size_t>(end - begin);
  if (scratch_.capacity() < avail) scratch_.reserve(avail);
  const char* p = SkipJsonWs(begin, end);
  std::string_view key;

parse_value:
  if (p == end) return JsonParseOutcome::kIncomplete;
  switch (*p) {
    case '{': {
      if (stack_.size() >= kMaxDepth) return Fail(begin, p, "nesting too deep");
      uint32_t idx = AddNode(JsonType::kObject, key);
      stack_.push_back({idx, 0, p});
      p = SkipJsonWs(p + 1, end);
      if (p == end) return JsonParseOutcome::kIncomplete;
      if (*p == '}') {
        nodes_[idx].text =
            std::string_view(stack_.back().start, static_cast<size_t>(p + 1 - stack_.back().start));
        stack_.pop_back();
        ++p;
        goto after_value;
      }
      goto parse_key;
    }
    case '[': {
      if (stack_.size() >= kMaxDepth) return Fail(begin, p, "nesting too deep");
      uint32_t idx = AddNode(JsonType::kArray, key);
      stack_.push_back({idx, 0, p});
      p = SkipJsonWs(p + 1, end);
      if (p == end) return JsonParseOutcome::kIncomplete;
      if (*p == ']') {
        nodes_[idx].text =
            std::string_view(stack_.back().start, static_cast<size_t>(p + 1 - stack_.back().start));
        stack_.pop_back();
        ++p;
        goto after_value;
      }
      key = {};
      goto parse_value;
    }
    case '"': {
      std::string_view s;
      const char* stop = nullptr;
      const char* what = "";
      JsonScan sr = ScanJsonString(p, end, &scratch_, &s, &stop, &what);
      if (sr != JsonScan::kOk) return Scanned(sr, begin, stop, what);
      p = stop;
      uint32_t idx = AddNode(JsonType::kString, key);
      nodes_[idx].text = s;
      goto after_value;
    }
    case 't':
    case 'f':
    case 'n': {
      std::string_view word;
      const char* stop = nullptr;
      const char* what = "";
      JsonScan sr = ScanJsonLiteral(p, end, &word, &stop, &what);
      if (sr != JsonScan::kOk) return Scanned(sr, begin, stop, what);
      JsonType t = *p == 't' ? JsonType::kTrue : *p == 'f' ? JsonType::kFalse : JsonType::kNull;
      uint32_t idx = AddNode(t, key);
      nodes_[idx].text = word;
      p = stop;
      goto after_value;
    }
    default: {
      if (*p != '-' && !IsDigit(*p))
        return Fail(begin, p, "unexpected character (expected a JSON value)");
      const char* stop = nullptr;
      const char* what = "";
      JsonScan sr = ScanJsonNumber(p, end, &stop, &what);
      if (sr != JsonScan::kOk) return Scanned(sr, begin, stop, what);
      // A number that touches the end of the input may continue in the next bytes.
      if (stop == end) return JsonParseOutcome::kIncomplete;
      uint32_t idx = AddNode(JsonType::kNumber, key);
      nodes_[idx].text = std::string_view(p, static_cast<size_t>(stop - p));
      p = stop;
      goto after_value;
    }
  }

after_value:
  if (stack_.empty()) {
    *consumed = static_cast<size_t>(p - begin);
    return JsonParseOutcome::kOk;
  }
  p = SkipJsonWs(p, end);
  if (p == end) return JsonParseOutcome::kIncomplete;
  {
    Open& top = stack_.back();
    bool is_object = nodes_[top.node].type == JsonType::kObject;
    char close = is_object ? '}' : ']';
    if (*p == ',') {
      p = SkipJsonWs(p + 1, end);
      if (is_object) goto parse_key;
      key = {};
      goto parse_value;
    }
    if (*p == close) {
      nodes_[top.node].text = std::string_view(top.start, static_cast<size_t>(p + 1 - top.start));
      stack_.pop_back();
      ++p;
      goto after_value;
    }
    return Fail(begin, p,
                is_object ? "expected ',' or '}' after an object member"
                          : "expected ',' or ']' after an array element");
  }

parse_key:
  p = SkipJsonWs(p, end);
  if (p == end) return JsonParseOutcome::kIncomplete;
  if (*p != '"') return Fail(begin, p, "expected a member name in double quotes");
  {
    const char* stop = nullptr;
    const char* what = "";
    JsonScan sr = ScanJsonString(p, end, &scratch_, &key, &stop, &what);
    if (sr != JsonScan::kOk) return Scanned(sr, begin, stop, what);
    p = stop;
  }
  p = SkipJsonWs(p, end);
  if (p == end) return JsonParseOutcome::kIncomplete;
  if (*p != ':') return Fail(begin, p, "expected ':' after a member name");
  p = SkipJsonWs(p + 1, end);
  goto parse_value;
}

const JsonNode* JsonValueParser::Find(const JsonNode& object, std::string_view key) const {
  if (object.type != JsonType::kObject) return nullptr;
  for (uint32_t i = object.first_child; i != 0; i = nodes_[i].next) {
    if (nodes_[i].key == key) return &nodes_[i];
  }
  return nullptr;
}

bool JsonToInt64(const JsonNode* n, int64_t* out) {
  if (n == nullptr || n->type != JsonType::kNumber) return false;
  std::string_view t = n->text;
  size_t i = 0;
  bool neg = false;
  if (i < t.size() && t[i] == '-') {
    neg = true;
    ++i;
  }
  if (i == t.size()) return false;
  uint64_t v = 0;
  for (; i < t.size() && IsDigit(t[i]); ++i) {
    uint64_t d = static_cast<uint64_t>(t[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (i < t.size()) {
    // Allow a zero fraction ("12.0", "12.000"); anything else is not an integer.
    if (t[i] != '.') return false;
    for (++i; i < t.size(); ++i) {
      if (t[i] != '0') return false;
    }
  }
  if (neg) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = v == static_cast<uint64_t>(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool JsonToInt64Lenient(const JsonNode* n, int64_t* out) {
  if (n != nullptr && n->type == JsonType::kString) {
    JsonNode tmp;
    tmp.type = JsonType::kNumber;
    tmp.text = n->text;
    if (tmp.text.empty()) return false;
    for (char c : tmp.text) {
      if (!IsDigit(c) && c != '-') return false;
    }
    return JsonToInt64(&tmp, out);
  }
  return JsonToInt64(n, out);
}

}  // namespace stepscope
