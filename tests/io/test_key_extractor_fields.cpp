// Composite keys in the extractor: every key path's value in order, on the
// DOM fast path and on the On Demand walk (a number DOM refuses sends the
// line there, so does a line over 1 MiB), with missing fields rejected or
// empty, and the first field without a value naming the reason.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/records/key_extractor.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::io {
namespace {

KeyExtractor composite(bool missing_is_empty = false, std::size_t max_key = kDefaultMaxKeyBytes) {
  return KeyExtractor({Format::kJsonLines, "id", max_key, {"url", "meta.title"}, missing_is_empty});
}

std::vector<std::string> values_of(KeyExtractor& x, const std::string& line) {
  const FieldsResult r = x.extract_fields(line);
  EXPECT_TRUE(r.ok()) << line << ": " << r.reject_reason;
  return {r.values.begin(), r.values.end()};
}

// The same document three ways: DOM, On Demand because of 1e400, On Demand
// because the line is over 1 MiB.
std::vector<std::string> spellings(const std::string& members) {
  return {"{" + members + "}", "{\"big\":1e400," + members + "}",
          "{\"pad\":\"" + std::string((1U << 20) + 10, 'p') + "\"," + members + "}"};
}

TEST(IoKeyExtractor, CompositeValuesInOrderOnBothPaths) {
  KeyExtractor x = composite();
  for (const std::string& line : spellings(R"("meta":{"title":"T\u00e9"},"url":"u",)"
                                           R"("url":"second url member loses")")) {
    EXPECT_EQ(values_of(x, line), (std::vector<std::string>{"u", "T\xC3\xA9"}))
        << line.substr(0, 40);
  }
  for (const std::string& line : spellings(R"("url":12,"meta":{"title":-3})")) {
    EXPECT_EQ(values_of(x, line), (std::vector<std::string>{"12", "-3"}));  // integers
  }
}

TEST(IoKeyExtractor, CompositeMissingFieldRejectedOrEmpty) {
  KeyExtractor strict = composite();
  KeyExtractor lenient = composite(true);
  for (const std::string& line : spellings(R"("url":"u")")) {
    EXPECT_EQ(strict.extract_fields(line).reject_reason, reason::kKeyMissing);
    EXPECT_EQ(values_of(lenient, line), (std::vector<std::string>{"u", ""}));
  }
  // A field of the wrong type is a reject under both.
  for (const std::string& line : spellings(R"("url":"u","meta":{"title":true})")) {
    EXPECT_EQ(strict.extract_fields(line).reject_reason, reason::kKeyWrongType);
    EXPECT_EQ(lenient.extract_fields(line).reject_reason, reason::kKeyWrongType);
  }
  // The first field in order decides: url missing beats title's wrong type.
  for (const std::string& line : spellings(R"("meta":{"title":[1]})")) {
    EXPECT_EQ(strict.extract_fields(line).reject_reason, reason::kKeyMissing);
  }
  EXPECT_EQ(strict.extract_fields("{\"url\":").reject_reason, reason::kMalformedJson);
}

TEST(IoKeyExtractor, CompositeFieldsAreHeldToTheMaxKeyBytesEach) {
  KeyExtractor x = composite(false, 4);
  EXPECT_EQ(values_of(x, R"({"url":"abcd","meta":{"title":"wxyz"}})"),
            (std::vector<std::string>{"abcd", "wxyz"}));
  EXPECT_EQ(x.extract_fields(R"({"url":"abcd","meta":{"title":"vwxyz"}})").reject_reason,
            reason::kKeyTooLong);
  // Unlimited (digest keys): a 2 MiB value is a value.
  KeyExtractor unlimited = composite(false, std::numeric_limits<std::size_t>::max());
  const std::string big(2U << 20, 'b');
  EXPECT_EQ(values_of(unlimited, R"({"url":")" + big + R"(","meta":{"title":"t"}})")[0], big);
}

TEST(IoKeyExtractor, CompositeExtractIsRefusedAndPlainLinesHaveOneValue) {
  KeyExtractor x = composite();
  EXPECT_THROW((void)x.extract(R"({"url":"u","meta":{"title":"t"}})"), std::logic_error);
  KeyExtractor plain({Format::kPlainLines, "id", 16, {"a", "b"}, false});
  EXPECT_EQ(values_of(plain, "whole line"), (std::vector<std::string>{"whole line"}));
}

}  // namespace
}  // namespace bloomshard::io
