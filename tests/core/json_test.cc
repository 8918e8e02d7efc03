#include "zerograph/core/json.h"

#include <string>

#include <gtest/gtest.h>

namespace zerograph {
namespace {

// `depth` arrays nested in one another: "[[[]]]" for 3.
std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

bool MessageHas(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string_view::npos;
}

// Objects keep the text's key order.
TEST(JsonTest, ParsesInTextOrder) {
  StatusOr<nlohmann::ordered_json> json = ParseJson(R"({"b": 1, "a": [true, null]})", "test");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->dump(), R"({"b":1,"a":[true,null]})");
}

// A key twice in one object is refused, naming the key and the text.
TEST(JsonTest, RefusesDuplicateKey) {
  Status status = ParseJson(R"({"a": 1, "b": {"c": 2, "c": 3}})", "header").status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(status, "header has the key 'c' twice")) << status.ToString();
}

// The same key in two objects is no duplicate.
TEST(JsonTest, AcceptsSameKeyInSiblingObjects) {
  EXPECT_TRUE(CheckJson(R"([{"a": 1}, {"a": 2}, {"x": {"a": 3}}])", "test").ok());
}

TEST(JsonTest, RefusesMalformedText) {
  Status status = ParseJson(R"({"a": )", "metadata 'k'").status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(status, "metadata 'k' is not valid JSON")) << status.ToString();
}

// Nesting up to the limit is accepted; one level more is refused.
TEST(JsonTest, AcceptsDepthAtLimit) {
  EXPECT_TRUE(ParseJson(Nested(5), "test", {.max_depth = 5}).ok());
  EXPECT_TRUE(CheckJson("3", "test", {.max_depth = 0}).ok());
}

TEST(JsonTest, RefusesDepthOverLimit) {
  Status status = ParseJson(Nested(6), "test", {.max_depth = 5}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(status, "nests deeper than 5")) << status.ToString();
  EXPECT_FALSE(CheckJson(R"({"a": {"b": []}})", "test", {.max_depth = 2}).ok());
}

// The default limit stops a deeply nested text before it is built.
TEST(JsonTest, RefusesDeepNestingByDefault) {
  EXPECT_FALSE(CheckJson(Nested(100000), "test").ok());
}

// Text up to the size limit is read; a byte more is refused.
TEST(JsonTest, AcceptsSizeAtLimit) {
  EXPECT_TRUE(ParseJson("[1, 2]", "test", {.max_bytes = 6}).ok());
}

TEST(JsonTest, RefusesSizeOverLimit) {
  Status status = ParseJson("[1, 23]", "test", {.max_bytes = 6}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(status, "7 bytes, more than the limit of 6")) << status.ToString();
}

// Strings come out as dump() writes them; invalid UTF-8 is replaced, not thrown on.
TEST(JsonTest, AppendsStringsAsDumpWritesThem) {
  for (std::string_view text : {"w.new", "", "quote\"back\\slash", "tab\tnew\nline", "é"}) {
    std::string out;
    AppendJsonString(text, out);
    EXPECT_EQ(out, nlohmann::json(std::string(text)).dump()) << text;
  }
  std::string out;
  AppendJsonString("a\xff", out);
  EXPECT_EQ(out, "\"a\xef\xbf\xbd\"");
}

// IsInt64: integers up to INT64_MAX, not one more, and never a float, even a whole one.
TEST(JsonTest, IsInt64TakesIntegersWithinInt64) {
  using Json = nlohmann::ordered_json;
  EXPECT_TRUE(IsInt64(Json::parse("9223372036854775807")));
  EXPECT_TRUE(IsInt64(Json::parse("-9223372036854775808")));
  EXPECT_TRUE(IsInt64(Json::parse("0")));
}
TEST(JsonTest, IsInt64RefusesFloatsAndLargerIntegers) {
  using Json = nlohmann::ordered_json;
  EXPECT_FALSE(IsInt64(Json::parse("9223372036854775808")));
  EXPECT_FALSE(IsInt64(Json::parse("2.0")));
  EXPECT_FALSE(IsInt64(Json::parse("3.9e90")));
  EXPECT_FALSE(IsInt64(Json::parse("\"1\"")));
}

}  // namespace
}  // namespace zerograph
