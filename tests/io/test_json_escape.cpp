// JSON string escaping: exact escapes for every byte class, U+FFFD for each
// invalid UTF-8 byte (and the validity answer), and every output parses
// back, through simdjson, to the input (valid UTF-8) or to the replaced text.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "io/output/json_escape.hpp"

namespace bloomshard::io {
namespace {

std::string contents(std::string_view bytes, bool* valid = nullptr) {
  std::string out;
  const bool ok = append_json_string_contents(out, bytes);
  if (valid != nullptr) *valid = ok;
  return out;
}

std::string parsed_back(const std::string& quoted) {
  simdjson::dom::parser parser;
  std::string_view value;
  EXPECT_EQ(parser.parse(quoted).get(value), simdjson::SUCCESS) << quoted;
  return std::string(value);
}

TEST(JsonEscape, PlainBytesAreCopied) {
  EXPECT_EQ(contents("hello, world / 123"), "hello, world / 123");
  EXPECT_EQ(contents(""), "");
}

TEST(JsonEscape, QuoteBackslashAndNamedControls) {
  EXPECT_EQ(contents("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(contents("\n\r\t\b\f"), "\\n\\r\\t\\b\\f");
}

TEST(JsonEscape, OtherControlsAsLowercaseHex) {
  EXPECT_EQ(contents(std::string("\0\x01\x1f", 3)), "\\u0000\\u0001\\u001f");
  EXPECT_EQ(contents("\x7f"), "\x7f");  // DEL needs no escape
}

TEST(JsonEscape, ValidUtf8IsKept) {
  bool valid = false;
  EXPECT_EQ(contents("na\xC3\xAFve \xE6\x97\xA5 \xF0\x9F\x99\x82", &valid),
            "na\xC3\xAFve \xE6\x97\xA5 \xF0\x9F\x99\x82");
  EXPECT_TRUE(valid);
}

TEST(JsonEscape, EachInvalidByteBecomesReplacement) {
  const std::string fffd = "\xEF\xBF\xBD";
  struct InvalidByteCase {
    std::string in;
    std::string out;
  };
  const InvalidByteCase cases[] = {
      {"a\xFFz", "a" + fffd + "z"},                     // never valid
      {"\x80", fffd},                                   // stray continuation
      {"\xC0\xAF", fffd + fffd},                        // overlong 2-byte
      {"\xE0\x80\xAF", fffd + fffd + fffd},             // overlong 3-byte
      {"\xED\xA0\x80", fffd + fffd + fffd},             // surrogate
      {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},  // above U+10FFFF
      {"\xE6\x97", fffd + fffd},                        // truncated at the end
  };
  for (const InvalidByteCase& c : cases) {
    bool valid = true;
    EXPECT_EQ(contents(c.in, &valid), c.out) << c.in;
    EXPECT_FALSE(valid) << c.in;
  }
}

TEST(JsonEscape, QuotedFormParsesBackToTheInput) {
  std::string all;
  for (int c = 1; c < 0x80; ++c) all += static_cast<char>(c);
  all += "\xC3\xA9\xF0\x9F\x99\x82";
  std::string quoted;
  append_json_string(quoted, all);
  EXPECT_EQ(quoted.front(), '"');
  EXPECT_EQ(quoted.back(), '"');
  EXPECT_EQ(parsed_back(quoted), all);
}

TEST(JsonEscape, QuotedFormOfInvalidBytesParsesToReplacements) {
  std::string quoted;
  append_json_string(quoted, "x\xFF\"y");
  EXPECT_EQ(quoted, "\"x\xEF\xBF\xBD\\\"y\"");
  EXPECT_EQ(parsed_back(quoted), "x\xEF\xBF\xBD\"y");
}

}  // namespace
}  // namespace bloomshard::io
