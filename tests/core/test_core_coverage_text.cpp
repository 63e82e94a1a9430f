// White space as the text normalization sees it (docs/coverage.md): the
// Unicode White_Space code points of two and three bytes count, the bytes
// of other code points do not, and a sequence cut off at the end of the
// text, a lone continuation byte or a four-byte code point is never taken
// for white space. The oracle is the White_Space list of PropList.txt.
#include <gtest/gtest.h>

#include <string>

#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {
namespace {

std::size_t space_bytes(const std::string& s, std::size_t at = 0) {
  return WhitespaceCollapser::white_space_bytes_at(s, at);
}

TEST(CoreCoverageText, WhiteSpaceIsTheUnicodePropertyAndNeverACutSequence) {
  EXPECT_EQ(space_bytes(" "), 1U);
  EXPECT_EQ(space_bytes("\t"), 1U);
  EXPECT_EQ(space_bytes("\r"), 1U);
  EXPECT_EQ(space_bytes("\xC2\xA0"), 2U);          // U+00A0 NO-BREAK SPACE
  EXPECT_EQ(space_bytes("\xC2\x85"), 2U);          // U+0085 NEXT LINE
  EXPECT_EQ(space_bytes("\xE3\x80\x80"), 3U);      // U+3000 IDEOGRAPHIC SPACE
  EXPECT_EQ(space_bytes("\xE2\x80\xAF"), 3U);      // U+202F NARROW NO-BREAK SPACE
  EXPECT_EQ(space_bytes("\xE1\x9A\x80"), 3U);      // U+1680 OGHAM SPACE MARK
  EXPECT_EQ(space_bytes("\xC2\xA9"), 0U);          // U+00A9 COPYRIGHT SIGN
  EXPECT_EQ(space_bytes("\xE2\x80\x8B"), 0U);      // U+200B ZERO WIDTH SPACE: not White_Space
  EXPECT_EQ(space_bytes("\xE3\x80"), 0U);          // U+3000 cut after two bytes
  EXPECT_EQ(space_bytes("\xC2"), 0U);              // cut after the lead byte
  EXPECT_EQ(space_bytes("\x80"), 0U);              // a continuation byte
  EXPECT_EQ(space_bytes("\xF0\x9F\x98\x80"), 0U);  // U+1F600, four bytes
  EXPECT_EQ(space_bytes("a\xE3\x80\x80", 1), 3U);
  EXPECT_EQ(space_bytes("a\xE3\x80\x80", 0), 0U);
}

TEST(CoreCoverageText, FourByteCodePointsStayInsideTheirWord) {
  std::string out;
  EXPECT_EQ(normalize_text(TextNormalize::kWs,
                           "a\xF0\x9F\x98\x80"
                           "b \xE3\x80\x80 c",
                           out),
            "a\xF0\x9F\x98\x80"
            "b c");
  EXPECT_EQ(WhitespaceCollapser::end_of_word("\xF0\x9F\x98\x80x y", 0), 5U);
}

}  // namespace
}  // namespace bloomshard::core
