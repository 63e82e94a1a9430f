// KeyExtractor's DOM fast path and its On Demand fallback must give the same
// answers: nesting-depth limits, lines too long for the fast path, values the
// fast path refuses (out-of-range numbers), and state carried between calls.
#include <gtest/gtest.h>

#include <string>

#include "io/records/key_extractor.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::io {
namespace {

KeyExtractor fast_path_extractor(std::string path = "id") {
  return KeyExtractor({Format::kJsonLines, std::move(path), kDefaultMaxKeyBytes, {}, false});
}

std::string_view reason(KeyExtractor& x, std::string_view line) {
  const KeyResult r = x.extract(line);
  return r.ok() ? std::string_view("<accepted>") : r.reject_reason;
}

std::string arrays(int n, std::string_view inner) {
  return std::string(static_cast<std::size_t>(n), '[') + std::string(inner) +
         std::string(static_cast<std::size_t>(n), ']');
}

TEST(IoKeyExtractorFastPath, NestingLimitIsExactlyDepth256) {
  auto x = fast_path_extractor();
  // Root object is depth 1: 254 arrays put the scalar at depth 256.
  EXPECT_EQ(reason(x, R"({"id":"x","a":)" + arrays(254, "1") + "}"), "<accepted>");
  EXPECT_EQ(reason(x, R"({"id":"x","a":)" + arrays(255, "1") + "}"), reason::kMalformedJson);
  EXPECT_EQ(reason(x, R"({"id":"x","a":)" + arrays(255, "") + "}"), "<accepted>");
  EXPECT_EQ(reason(x, R"({"id":"x","a":)" + arrays(256, "") + "}"), reason::kMalformedJson);
  EXPECT_EQ(reason(x, arrays(255, "1")), reason::kNotAnObject);
  EXPECT_EQ(reason(x, arrays(256, "1")), reason::kMalformedJson);
  // A well-formed line right after a too-deep one.
  EXPECT_EQ(x.extract(R"({"id":"after"})").key, "after");
}

TEST(IoKeyExtractorFastPath, LinesLongerThanOneMebibyteGiveTheSameAnswers) {
  auto x = fast_path_extractor();
  const std::string pad(std::size_t{3} << 20, 'p');
  const std::string head = R"({"pad":")" + pad + R"(",)";
  EXPECT_EQ(x.extract(head + R"("id":"tail"})").key, "tail");
  EXPECT_EQ(x.extract(head + R"("id":-7,"id":"second"})").key, "-7");
  EXPECT_EQ(reason(x, head + R"("id":1.5})"), reason::kKeyWrongType);
  EXPECT_EQ(reason(x, head + R"("id":123456789012345678901234567890})"), reason::kKeyIntegerRange);
  EXPECT_EQ(reason(x, head + R"("x":1})"), reason::kKeyMissing);
  EXPECT_EQ(reason(x, head + R"("id":"x","a":tru})"), reason::kMalformedJson);
  EXPECT_EQ(reason(x, head + R"("id":"x"} x)"), reason::kMalformedJson);
  // Back to short lines.
  EXPECT_EQ(x.extract(R"({"id":"short"})").key, "short");
}

TEST(IoKeyExtractorFastPath, FallbackAndFastPathInterleave) {
  auto x = fast_path_extractor("m.id");
  for (int i = 0; i < 50; ++i) {
    const std::string n = std::to_string(i);
    ASSERT_EQ(x.extract(R"({"m":{"id":)" + n + "}}").key, n);
    // 1e400 and big integers elsewhere in the line are valid JSON.
    ASSERT_EQ(x.extract(R"({"big":1e400,"m":{"id":"s)" + n + R"("}})").key, "s" + n);
    ASSERT_EQ(x.extract(R"({"m":{"h":123456789012345678901234567890,"id":)" + n + "}}").key, n);
    ASSERT_EQ(reason(x, R"({"m":{"id":-123456789012345678901234567890}})"),
              reason::kKeyIntegerRange);
    ASSERT_EQ(reason(x, R"({"m":{"id":"x"}}{})"), reason::kMalformedJson);
    ASSERT_EQ(reason(x, R"({"m":[{"id":"x"}]})"), reason::kKeyMissing);
  }
}

TEST(IoKeyExtractorFastPath, NumberKeysAtTheEdges) {
  auto x = fast_path_extractor();
  EXPECT_EQ(x.extract(R"({"id":-0})").key, "0");
  EXPECT_EQ(x.extract(R"({"id":9223372036854775808})").key, "9223372036854775808");
  EXPECT_EQ(reason(x, R"({"id":18446744073709551616})"), reason::kKeyIntegerRange);
  EXPECT_EQ(reason(x, R"({"id":-9223372036854775809})"), reason::kKeyIntegerRange);
  EXPECT_EQ(reason(x, R"({"id":1e-400})"), reason::kKeyWrongType);
  EXPECT_EQ(reason(x, R"({"id":1.0})"), reason::kKeyWrongType);
  EXPECT_EQ(reason(x, R"({"id":01})"), reason::kMalformedJson);
  EXPECT_EQ(reason(x, std::string("{\"id\":\"x\"}\0", 11)), reason::kMalformedJson);
  EXPECT_EQ(x.extract(std::string("{\"id\":\"a\\u0000b\",\"id\\u0000\":1}")).key,
            std::string("a\0b", 3));
}

}  // namespace
}  // namespace bloomshard::io
