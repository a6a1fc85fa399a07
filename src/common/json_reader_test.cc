#include "common/json_reader.h"

#include <gtest/gtest.h>

#include <vector>

namespace stepscope {
namespace {

TEST(JsonReader, ReadsNestedValuesAndSkipsUnknown) {
  std::string text =
      R"( {"a": 12, "s": "x\"\u00e9\ud83d\ude00", "skip": {"q": [1, 2.5e3, null, true, {}]},
          "arr": [-3, 4], "f": 1.5, "b": false} )";
  JsonReader j(text, "t.json");
  int64_t a = 0, f = 0;
  std::string s;
  std::vector<int64_t> arr;
  bool b = true;
  Status st = j.Object([&](std::string_view key) -> Status {
    if (key == "a") return j.Int(&a);
    if (key == "s") return j.String(&s);
    if (key == "f") return j.Int(&f);
    if (key == "b") return j.Bool(&b);
    if (key == "arr") {
      return j.Array([&]() -> Status {
        int64_t v;
        RETURN_IF_ERROR(j.Int(&v));
        arr.push_back(v);
        return OkStatus();
      });
    }
    return j.Skip();
  });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(j.End().ok());
  EXPECT_EQ(a, 12);
  EXPECT_EQ(f, 1);  // truncated
  EXPECT_EQ(s, "x\"\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(arr, (std::vector<int64_t>{-3, 4}));
  EXPECT_FALSE(b);
}

TEST(JsonReader, ErrorsNameFileAndOffset) {
  JsonReader j(R"({"a": 1,, })", "bad.json");
  Status st = j.Skip();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "bad.json: byte 8: expected a member name in quotes");
  JsonReader k(R"("abc)", "u.json");
  EXPECT_EQ(k.Skip().message(), "u.json: byte 4: unterminated string");
  JsonReader t("[1] x", "t.json");
  EXPECT_TRUE(t.Skip().ok());
  EXPECT_FALSE(t.End().ok());
}

TEST(JsonReader, DepthIsLimited) {
  std::string deep(1000, '[');
  JsonReader j(deep, "deep.json");
  Status st = j.Skip();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nesting deeper than 64"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
