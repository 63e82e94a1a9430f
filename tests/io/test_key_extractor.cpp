// KeyExtractor: plain keys, JSON string/integer keys, dotted paths, escapes,
// and every reject reason, including malformed JSON anywhere in the line.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "io/records/key_extractor.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::io {
namespace {

KeyExtractor json_extractor(std::string path = "id", std::size_t max_key = kDefaultMaxKeyBytes) {
  return KeyExtractor({Format::kJsonLines, std::move(path), max_key, {}, false});
}

std::string key_of(KeyExtractor& x, std::string_view line) {
  const KeyResult r = x.extract(line);
  EXPECT_TRUE(r.ok()) << "line " << line << " rejected: " << r.reject_reason;
  return std::string(r.key);
}

std::string_view reason_of(KeyExtractor& x, std::string_view line) {
  const KeyResult r = x.extract(line);
  EXPECT_FALSE(r.ok()) << "line " << line << " accepted with key " << r.key;
  return r.reject_reason;
}

TEST(IoKeyExtractor, PlainLineIsTheKey) {
  KeyExtractor x({Format::kPlainLines, "ignored", 8, {}, false});
  EXPECT_EQ(key_of(x, "hello"), "hello");
  const KeyResult empty = x.extract("");
  EXPECT_TRUE(empty.ok());  // the empty key is a valid key
  EXPECT_TRUE(empty.key.empty());
  EXPECT_EQ(key_of(x, "12345678"), "12345678");
  EXPECT_EQ(reason_of(x, "123456789"), reason::kKeyTooLong);
  EXPECT_EQ(key_of(x, std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(IoKeyExtractor, StringAndIntegerKeys) {
  auto x = json_extractor();
  EXPECT_EQ(key_of(x, R"({"id":"abc","text":"t"})"), "abc");
  EXPECT_EQ(key_of(x, R"(  {"text":"t", "id" : "abc" }  )"), "abc");
  EXPECT_EQ(key_of(x, R"({"id":""})"), "");
  EXPECT_EQ(key_of(x, R"({"id":123})"), "123");
  EXPECT_EQ(key_of(x, R"({"id":-42})"), "-42");
  EXPECT_EQ(key_of(x, R"({"id":9223372036854775807})"), "9223372036854775807");
  EXPECT_EQ(key_of(x, R"({"id":-9223372036854775808})"), "-9223372036854775808");
  EXPECT_EQ(key_of(x, R"({"id":18446744073709551615})"), "18446744073709551615");
  EXPECT_EQ(key_of(x, R"({"id":0})"), "0");
}

// The documented rule (docs/keys.md): an integer is keyed by its shortest
// decimal text, so 123 and "123" are one key (ids travel as numbers from
// some systems and as strings from others; JavaScript-made JSON turns ids
// above 2^53 into strings). Anything with a fraction or exponent is not an
// id and is rejected, even when its value is integral.
TEST(IoKeyExtractor, IntegersAreKeyedByTheirDecimalText) {
  auto x = json_extractor();
  EXPECT_EQ(key_of(x, R"({"id":123})"), key_of(x, R"({"id":"123"})"));
  EXPECT_EQ(key_of(x, R"({"id":-7})"), key_of(x, R"({"id":"-7"})"));
  EXPECT_NE(key_of(x, R"({"id":123})"), key_of(x, R"({"id":"0123"})"));  // strings verbatim
  EXPECT_EQ(reason_of(x, R"({"id":1.0})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":1e2})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":100E0})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":18446744073709551616})"), reason::kKeyIntegerRange);
  EXPECT_EQ(reason_of(x, R"({"id":-9223372036854775809})"), reason::kKeyIntegerRange);
  EXPECT_EQ(reason_of(x, R"({"id":0123})"), reason::kMalformedJson);  // RFC 8259: no leading 0
  EXPECT_EQ(key_of(x, R"({"id":-0})"), "0");  // the integer zero, so one key with 0 and "0"
}

TEST(IoKeyExtractor, EscapedStringKeysAreUnescaped) {
  auto x = json_extractor();
  EXPECT_EQ(key_of(x, R"({"id":"caf\u00e9"})"), "caf\xC3\xA9");
  EXPECT_EQ(key_of(x, "{\"id\":\"caf\xC3\xA9\"}"), "caf\xC3\xA9");
  EXPECT_EQ(key_of(x, R"({"id":"a\nb\t\"q\"\\"})"), "a\nb\t\"q\"\\");
  EXPECT_EQ(key_of(x, R"({"id":"\ud83d\ude00"})"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(key_of(x, R"({"id":"nul\u0000byte"})"), std::string("nul\0byte", 8));
  // Member names are unescaped before matching.
  EXPECT_EQ(key_of(x, R"({"\u0069d":"esc-name"})"), "esc-name");
}

TEST(IoKeyExtractor, NestedDottedPath) {
  auto x = json_extractor("meta.doc.id");
  EXPECT_EQ(key_of(x, R"({"meta":{"other":1,"doc":{"id":"deep","x":[1,{"id":2}]}},"id":"top"})"),
            "deep");
  EXPECT_EQ(key_of(x, R"({"id":"top","meta":{"doc":{"id":77}}})"), "77");
  EXPECT_EQ(reason_of(x, R"({"meta":{"doc":"not an object"}})"), reason::kKeyMissing);
  EXPECT_EQ(reason_of(x, R"({"meta":{"doc":{}}})"), reason::kKeyMissing);
  EXPECT_EQ(reason_of(x, R"({"meta":[{"doc":{"id":1}}]})"), reason::kKeyMissing);
  EXPECT_EQ(reason_of(x, R"({"id":"top"})"), reason::kKeyMissing);
}

TEST(IoKeyExtractor, FirstOccurrenceWins) {
  auto x = json_extractor();
  EXPECT_EQ(key_of(x, R"({"id":"first","id":"second"})"), "first");
  EXPECT_EQ(reason_of(x, R"({"id":true,"id":"second"})"), reason::kKeyWrongType);
}

TEST(IoKeyExtractor, WrongTypesAndMissingField) {
  auto x = json_extractor();
  EXPECT_EQ(reason_of(x, R"({"id":1.5})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":1e3})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":true})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":null})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":{"a":1}})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"id":[1]})"), reason::kKeyWrongType);
  EXPECT_EQ(reason_of(x, R"({"ID":"case matters"})"), reason::kKeyMissing);
  EXPECT_EQ(reason_of(x, R"({})"), reason::kKeyMissing);
  EXPECT_EQ(reason_of(x, R"({"id":123456789012345678901234567890})"), reason::kKeyIntegerRange);
  EXPECT_EQ(reason_of(x, R"({"id":1e400})"), reason::kKeyWrongType);
}

TEST(IoKeyExtractor, MalformedLinesAreRejected) {
  auto x = json_extractor();
  for (const std::string_view line : {
           R"({"id":"x")",                       // unterminated object
           R"({"id":"x"} trailing)",             // garbage after the object
           R"({"id":"x"}{"id":"y"})",            // two documents
           R"({"id":"x","a":tru})",              // bad atom after the key
           R"({"id":"x","a":nul})",              //
           R"({"id":"x","a":[1,2,]})",           // trailing comma, nested
           R"({"id":"x","a":1,})",               // trailing comma
           R"({"id":"x","b":"bad \q escape"})",  // bad escape in another field
           R"({"id":"x","n":01})",               // leading zero
           R"({"id":"x","n":-})",                //
           R"({"id":"x" "a":1})",                // missing comma
           R"({id:"x"})",                        // unquoted name
           R"(not json at all)",                 //
           R"({"id":"x","a":{"b":[}]})",         // mismatched brackets
       }) {
    EXPECT_EQ(reason_of(x, line), reason::kMalformedJson) << line;
  }
  // Invalid UTF-8 inside a JSON line is malformed JSON.
  EXPECT_EQ(reason_of(x, "{\"id\":\"\xFF\"}"), reason::kMalformedJson);
  // Malformed wins over a key problem.
  EXPECT_EQ(reason_of(x, R"({"id":true,"a":tru})"), reason::kMalformedJson);
}

TEST(IoKeyExtractor, ValidButUnusualJsonIsAccepted) {
  auto x = json_extractor();
  EXPECT_EQ(key_of(x, R"({"id":"x","big":1e400,"huge":123456789012345678901234567890})"), "x");
  EXPECT_EQ(key_of(x, "{\"id\":\"x\",\"deep\":[[[[{\"a\":[null,true,false,-0.5e-3]}]]]]}\r"), "x");
}

TEST(IoKeyExtractor, NotAnObjectAndEmptyLines) {
  auto x = json_extractor();
  EXPECT_EQ(reason_of(x, R"([{"id":"x"}])"), reason::kNotAnObject);
  EXPECT_EQ(reason_of(x, R"("id")"), reason::kNotAnObject);
  EXPECT_EQ(reason_of(x, "42"), reason::kNotAnObject);
  EXPECT_EQ(reason_of(x, "true"), reason::kNotAnObject);
  EXPECT_EQ(reason_of(x, "null"), reason::kNotAnObject);
  EXPECT_EQ(reason_of(x, "[1, \"a\", {\"b\": []}]"), reason::kNotAnObject);
  EXPECT_EQ(reason_of(x, R"("s" x)"), reason::kMalformedJson);
  EXPECT_EQ(reason_of(x, "[1,"), reason::kMalformedJson);
  EXPECT_EQ(reason_of(x, "[1] [2]"), reason::kMalformedJson);
  EXPECT_EQ(reason_of(x, "nul"), reason::kMalformedJson);
  EXPECT_EQ(reason_of(x, "42abc"), reason::kMalformedJson);
  EXPECT_EQ(reason_of(x, ""), reason::kEmptyLine);
  EXPECT_EQ(reason_of(x, "   \t "), reason::kEmptyLine);
}

TEST(IoKeyExtractor, DeepNestingIsRejectedWithoutCrashing) {
  auto x = json_extractor();
  const std::string deep =
      "{\"id\":\"x\",\"a\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_EQ(reason_of(x, deep), reason::kMalformedJson);
}

TEST(IoKeyExtractor, KeyTooLong) {
  auto x = json_extractor("id", 4);
  EXPECT_EQ(key_of(x, R"({"id":"abcd"})"), "abcd");
  EXPECT_EQ(reason_of(x, R"({"id":"abcde"})"), reason::kKeyTooLong);
  EXPECT_EQ(reason_of(x, R"({"id":12345})"), reason::kKeyTooLong);
}

TEST(IoKeyExtractor, BufferReuseAcrossLineLengths) {
  auto x = json_extractor();
  const std::string long_line = R"({"pad":")" + std::string(100000, 'p') + R"(","id":"long"})";
  EXPECT_EQ(key_of(x, long_line), "long");
  // A short line after a long one must not see the old bytes as content.
  EXPECT_EQ(reason_of(x, R"({"id":"s")"), reason::kMalformedJson);
  EXPECT_EQ(key_of(x, R"({"id":"s"})"), "s");
  for (int i = 0; i < 1000; ++i) {
    const std::string line =
        R"({"id":")" + std::to_string(i) + R"(","n":)" + std::to_string(i) + "}";
    ASSERT_EQ(key_of(x, line), std::to_string(i));
  }
}

TEST(IoKeyExtractor, InvalidKeyPathsAreRefused) {
  EXPECT_THROW(json_extractor(""), std::invalid_argument);
  EXPECT_THROW(json_extractor("a..b"), std::invalid_argument);
  EXPECT_THROW(json_extractor(".a"), std::invalid_argument);
  EXPECT_THROW(json_extractor("a."), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::io
