// --text-normalize on the table of docs/keys.md (CRLF, tabs, NBSP, the
// ideographic space and the other White_Space code points), the White_Space
// set against Unicode's own PropList.txt, and the streamed pieces equal to
// the materialized text.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {
namespace {

using namespace std::string_literals;

struct Case {
  const char* what;
  std::string in;
  std::string ws;
  std::string ws_lower;
};

// The table of docs/keys.md, row for row.
const Case kTable[] = {
    {"plain", "Hello world", "Hello world", "hello world"},
    {"trim", "  Hello  ", "Hello", "hello"},
    {"CRLF", "line one\r\nline two\r\n", "line one line two", "line one line two"},
    {"tabs", "a\t\tb\tc", "a b c", "a b c"},
    {"VT FF CR LF run", "a\v\f\r\nb", "a b", "a b"},
    {"NBSP U+00A0",
     "a\xC2\xA0"
     "b",
     "a b", "a b"},
    {"NEL U+0085",
     "a\xC2\x85"
     "b",
     "a b", "a b"},
    {"ideographic space U+3000", "\xE6\x97\xA5\xE6\x9C\xAC\xE3\x80\x80\xE8\xAA\x9E",
     "\xE6\x97\xA5\xE6\x9C\xAC \xE8\xAA\x9E", "\xE6\x97\xA5\xE6\x9C\xAC \xE8\xAA\x9E"},
    {"ogham U+1680",
     "a\xE1\x9A\x80"
     "b",
     "a b", "a b"},
    {"en quad U+2000 .. hair space U+200A",
     "a\xE2\x80\x80\xE2\x80\x8A"
     "b",
     "a b", "a b"},
    {"line/paragraph separators U+2028 U+2029",
     "a\xE2\x80\xA8"
     "b\xE2\x80\xA9"
     "c",
     "a b c", "a b c"},
    {"narrow NBSP U+202F, math space U+205F",
     "a\xE2\x80\xAF"
     "b\xE2\x81\x9F"
     "c",
     "a b c", "a b c"},
    {"mixed run", " \t\xC2\xA0\xE3\x80\x80\r\n x \xE2\x80\x83 ", "x", "x"},
    {"zero width space U+200B is kept",
     "a\xE2\x80\x8B"
     "b",
     "a\xE2\x80\x8B"
     "b",
     "a\xE2\x80\x8B"
     "b"},
    {"BOM U+FEFF is kept",
     "\xEF\xBB\xBF"
     "a",
     "\xEF\xBB\xBF"
     "a",
     "\xEF\xBB\xBF"
     "a"},
    {"only spaces", " \t\r\n\xE3\x80\x80", "", ""},
    {"empty", "", "", ""},
    {"NUL is not a space", "a\0b"s, "a\0b"s, "a\0b"s},
    {"case folding (ws-lower)",
     "Stra\xC3\x9F"
     "e  \xC3\x89t\xC3\xA9",
     "Stra\xC3\x9F"
     "e \xC3\x89t\xC3\xA9",
     "strasse \xC3\xA9t\xC3\xA9"},
    {"NFD input composed (ws-lower)", "E\xCC\x81t\xC3\xA9", "E\xCC\x81t\xC3\xA9",
     "\xC3\xA9t\xC3\xA9"},
};

TEST(TextNormalize, Table) {
  for (const Case& c : kTable) {
    std::string buf;
    EXPECT_EQ(normalize_text(TextNormalize::kNone, c.in, buf), c.in) << c.what;
    EXPECT_EQ(std::string(normalize_text(TextNormalize::kWs, c.in, buf)), c.ws) << c.what;
    EXPECT_EQ(std::string(normalize_text(TextNormalize::kWsLower, c.in, buf)), c.ws_lower)
        << c.what;
    EXPECT_EQ(CollapsedWhitespace::length(c.in), c.ws.size()) << c.what;
  }
}

TEST(TextNormalize, PiecesAreTheText) {
  for (const Case& c : kTable) {
    CollapsedWhitespace walk(c.in);
    std::string joined;
    std::string_view piece;
    bool last_was_space = true;  // no leading separator
    while (walk.next(piece)) {
      EXPECT_FALSE(piece.empty());
      if (piece == " ") {
        EXPECT_FALSE(last_was_space) << c.what;  // never two in a row
      }
      last_was_space = piece == " ";
      joined += piece;
    }
    EXPECT_EQ(joined, c.ws) << c.what;
  }
}

TEST(TextNormalize, InvalidUtf8IsRefusedByWsButNotByNone) {
  std::string buf;
  const std::string bad = "a\xC3 b";
  EXPECT_EQ(normalize_text(TextNormalize::kNone, bad, buf), bad);
  EXPECT_THROW((void)normalize_text(TextNormalize::kWs, bad, buf), InvalidUtf8Error);
  EXPECT_THROW((void)normalize_text(TextNormalize::kWsLower, "\xED\xA0\x80", buf),
               InvalidUtf8Error);  // a surrogate
}

TEST(TextNormalize, NamesAndVersions) {
  for (const TextNormalize t : kAllTextNormalizations) {
    EXPECT_EQ(parse_text_normalize(text_normalize_name(t)), t);
    EXPECT_EQ(parse_text_normalize(text_normalize_label(t)), t);
  }
  EXPECT_EQ(text_normalize_label(TextNormalize::kWsLower), "ws-lower/v1");
  EXPECT_THROW((void)parse_text_normalize("nfkc"), std::invalid_argument);
}

// Every code point with White_Space in the Unicode data Debian ships
// (unicode-data, PropList.txt), and no other, is a space.
TEST(TextNormalize, WhiteSpaceIsUnicodesProperty) {
  std::ifstream in(std::string(BLOOMSHARD_UNICODE_DATA_DIR) + "/PropList.txt");
  if (!in) GTEST_SKIP() << "PropList.txt not installed (Debian package unicode-data)";
  std::set<char32_t> expected;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t semi = line.find(';');
    if (semi == std::string::npos || line.find("; White_Space ") == std::string::npos) continue;
    const std::string range = line.substr(0, line.find(' '));
    const std::size_t dots = range.find("..");
    const auto first = static_cast<char32_t>(std::stoul(range.substr(0, dots), nullptr, 16));
    const auto last = dots == std::string::npos
                          ? first
                          : static_cast<char32_t>(std::stoul(range.substr(dots + 2), nullptr, 16));
    for (char32_t cp = first; cp <= last; ++cp) expected.insert(cp);
  }
  ASSERT_EQ(expected.size(), 25U);
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    ASSERT_EQ(is_unicode_white_space(cp), expected.count(cp) == 1)
        << std::hex << static_cast<std::uint32_t>(cp);
  }
}

}  // namespace
}  // namespace bloomshard::core
