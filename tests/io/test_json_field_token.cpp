// JsonFieldToken / replace_string_token (--unit paragraph): the raw token of
// a string field, first member of a name, nested paths, whitespace around
// the value; non-strings and missing fields give nothing; the rewrite
// changes that token only and escapes as append_json_string_contents.
#include <gtest/gtest.h>

#include <string>

#include "io/records/json_field_token.hpp"

namespace bloomshard::io {
namespace {

std::string token_text(const std::string& path, std::string_view line) {
  JsonFieldToken f(path);
  const auto t = f.find_string(line);
  return t ? std::string(line.substr(t->begin, t->end - t->begin)) : std::string("<none>");
}

TEST(JsonFieldToken, FindsTheRawStringToken) {
  EXPECT_EQ(token_text("text", R"({"id":1,"text":"a\nb"})"), R"("a\nb")");
  EXPECT_EQ(token_text("text", R"({ "text" :  "caf\u00e9"  , "x": 2 })"), R"("caf\u00e9")");
  EXPECT_EQ(token_text("text", R"({"meta":{"text":"inner"},"text":"outer"})"), R"("outer")");
  EXPECT_EQ(token_text("meta.text", R"({"meta":{"text":"inner"},"text":"outer"})"), R"("inner")");
  EXPECT_EQ(token_text("text", R"({"text":"first","text":"second"})"), R"("first")");
  EXPECT_EQ(token_text("text", R"({"text":42})"), "<none>");
  EXPECT_EQ(token_text("text", R"({"text":null})"), "<none>");
  EXPECT_EQ(token_text("text", R"({"id":"x"})"), "<none>");
}

TEST(JsonFieldToken, ReplaceKeepsEveryOtherByte) {
  const std::string line = R"({"z": "\u00e9",  "text": "a\nb\nc" ,"k":[1, 2]})";
  JsonFieldToken f("text");
  const auto t = f.find_string(line);
  ASSERT_TRUE(t.has_value());
  std::string out;
  EXPECT_EQ(replace_string_token(line, *t, "a\n\"q\"\\\t\x01 \xc3\xa9/", out),
            R"({"z": "\u00e9",  "text": "a\n\"q\"\\\t\u0001 é/" ,"k":[1, 2]})");
}

}  // namespace
}  // namespace bloomshard::io
