#include "importers/json_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepscope {
namespace {

// Records what the tokenizer hands out: "E<offset>:<raw event>" and "T<key>=<raw value>".
struct Recorder : ChromeTraceTokenizer::Sink {
  std::vector<std::string> seen;
  Status OnEvent(const JsonValueParser& e, uint64_t offset) override {
    const JsonNode& r = e.root();
    seen.push_back(
        "E" + std::to_string(offset) + ":" +
        std::string(r.type == JsonType::kString || r.type == JsonType::kNumber ? r.text : r.text));
    return OkStatus();
  }
  Status OnTopLevel(std::string_view key, const JsonValueParser& v, uint64_t) override {
    seen.push_back("T" + std::string(key) + "=" + std::string(v.root().text));
    return OkStatus();
  }
};

Status Tokenize(const std::string& doc, size_t chunk, std::vector<std::string>* seen) {
  Recorder r;
  ChromeTraceTokenizer t(&r);
  for (size_t i = 0; i < doc.size(); i += chunk) {
    Status st = t.Feed(doc.data() + i, std::min(chunk, doc.size() - i));
    if (!st.ok()) return st;
  }
  Status st = t.Finish();
  *seen = r.seen;
  return st;
}

const char kDoc[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"H200\"}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"name\": \"a\\\"b\", \"ts\": 1.25, \"dur\": 3},\n"
    "  {\"ph\": \"M\", \"args\": {\"name\": \"t \\u00e9\"}}, 42, \"s\", [1,2],\n"
    "  {\"ph\": \"i\", \"ts\": 7}\n"
    " ],\n"
    " \"baseTimeNanoseconds\": 1790857026000000000, \"traceName\": \"x\"}\n";

TEST(ChromeTraceTokenizer, SameEventsAtEveryChunkSize) {
  std::vector<std::string> whole;
  ASSERT_TRUE(Tokenize(kDoc, sizeof(kDoc), &whole).ok());
  ASSERT_EQ(whole.size(), 10u);
  EXPECT_EQ(whole[0], "TschemaVersion=1");
  EXPECT_EQ(whole[1], R"(TdeviceProperties=[{"id": 0, "name": "H200"}])");
  EXPECT_EQ(whole[2], R"(E90:{"ph": "X", "name": "a\"b", "ts": 1.25, "dur": 3})");
  EXPECT_EQ(whole[4], "E186:42");
  EXPECT_EQ(whole[5], "E190:s");
  EXPECT_EQ(whole[7], R"(E204:{"ph": "i", "ts": 7})");
  EXPECT_EQ(whole[8], "TbaseTimeNanoseconds=1790857026000000000");
  EXPECT_EQ(whole[9], "TtraceName=x");
  for (size_t chunk = 1; chunk < sizeof(kDoc); ++chunk) {
    std::vector<std::string> got;
    ASSERT_TRUE(Tokenize(kDoc, chunk, &got).ok()) << chunk;
    EXPECT_EQ(got, whole) << "chunk size " << chunk;
  }
}

TEST(ChromeTraceTokenizer, ErrorsNameTheByteOffset) {
  struct Case {
    std::string doc;
    std::string error;
  } cases[] = {
      {"", "byte 0: empty file: expected a Chrome-trace JSON object"},
      {"  \n", "byte 3: no JSON value (the file holds only whitespace)"},
      {"[{\"ph\": \"X\"}]", "byte 0: the top level is a JSON array"},
      {"x", "byte 0: not a JSON object"},
      {"{\"traceEvents\": {}}", "byte 16: \"traceEvents\" is not an array"},
      {"{\"traceEvents\": [{}, ]}", "byte 21: trailing ','"},
      {"{\"traceEvents\": [{} {}]}", "byte 20: expected ',' or ']' after an event"},
      {"{\"traceEvents\": [{\"a\": 1",
       "byte 24: unexpected end of data inside the traceEvents array"},
      {"{\"a\": 1", "byte 7: unexpected end of data inside the top-level object"},
      {"{\"traceEvents\": []} x", "byte 20: unexpected data after the end"},
      {"{\"traceEvents\": [{\"a\": 1,}]}", "byte 25: expected a member name in double quotes"},
      {"{\"a\": 1 \"b\": 2}", "byte 8: expected ',' or '}' after a top-level member"},
  };
  for (const Case& c : cases) {
    for (size_t chunk : {size_t{1}, size_t{3}, size_t{4096}}) {
      std::vector<std::string> seen;
      Status st = Tokenize(c.doc, chunk, &seen);
      ASSERT_FALSE(st.ok()) << c.doc;
      EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
      EXPECT_EQ(st.message().rfind(c.error, 0), 0u) << c.doc << " -> " << st.message();
    }
  }
}

TEST(ChromeTraceTokenizer, AHugeValueCostsLinearTime) {
  // One 8 MB top-level string fed in 1 KB chunks: the retry rule re-parses it
  // only O(log n) times, so this finishes in well under a second.
  std::string doc = "{\"big\": \"" + std::string(8 << 20, 'x') + "\", \"traceEvents\": []}";
  std::vector<std::string> seen;
  ASSERT_TRUE(Tokenize(doc, 1024, &seen).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "Tbig=" + std::string(8 << 20, 'x'));
}

// A value longer than the bound is skipped (counted), whatever the chunking,
// and the events around it still arrive; memory stays bounded by the bound.
TEST(ChromeTraceTokenizer, OversizedValuesAreSkippedAndCounted) {
  const std::string big(5000, 'x');
  const std::string doc = "{\"traceEvents\": [{\"a\": 1}, {\"name\": \"" + big + "\\\"]}\"}, \"" +
                          big + "\", " + std::string(3000, '7') + ", [[\"" + big +
                          "\"]], {\"b\": 2}], \"meta\": \"" + big + "\", \"x\": 3}";
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, doc.size()}) {
    Recorder r;
    ChromeTraceTokenizer t(&r, 1024);
    for (size_t i = 0; i < doc.size(); i += chunk) {
      ASSERT_TRUE(t.Feed(doc.data() + i, std::min(chunk, doc.size() - i)).ok()) << chunk;
    }
    ASSERT_TRUE(t.Finish().ok());
    EXPECT_EQ(t.skipped_values(), 5u) << chunk;
    ASSERT_EQ(r.seen.size(), 3u) << chunk;
    EXPECT_EQ(r.seen[0].substr(r.seen[0].find(':') + 1), R"({"a": 1})");
    EXPECT_EQ(r.seen[1].substr(r.seen[1].find(':') + 1), R"({"b": 2})");
    EXPECT_EQ(r.seen[2], "Tx=3");
  }
}

TEST(ChromeTraceTokenizer, TruncatedInsideAnOversizedValueIsAnError) {
  const std::string doc = "{\"traceEvents\": [\"" + std::string(5000, 'x');
  Recorder r;
  ChromeTraceTokenizer t(&r, 1024);
  ASSERT_TRUE(t.Feed(doc.data(), doc.size()).ok());
  Status st = t.Finish();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("inside the traceEvents array"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace stepscope
