// minhash-text/v1 normalization: the rules one by one, invalid UTF-8 as an
// error value, and chunked normalization equal to the whole-text one.
#include <gtest/gtest.h>
#include <utf8proc.h>

#include <random>
#include <string>

#include "bloomshard/core/normalize.hpp"
#include "core/minhash/minhash_text.hpp"

namespace bloomshard::core {
namespace {

std::string norm(std::string_view text) {
  std::string error;
  auto out = normalize_minhash_text(text, &error);
  EXPECT_TRUE(out.has_value()) << error;
  return out.value_or("<invalid>");
}

TEST(MinHashText, KnownAnswers) {
  EXPECT_EQ(norm("The quick brown fox jumps over the lazy dog."),
            "the quick brown fox jumps over the lazy dog");
  EXPECT_EQ(norm("  Hello,   WORLD!  Hello... world?  "), "hello world hello world");
  EXPECT_EQ(
      norm("Stra\u00dfe caf\u00e9 \u2014 na\u00efve \u00c9COLE \u00abd\u00e9j\u00e0 vu\u00bb"),
      "strasse caf\u00e9 na\u00efve \u00e9cole d\u00e9j\u00e0 vu");
}

TEST(MinHashText, PunctuationIsRemovedNotSpaced) {
  EXPECT_EQ(norm("don't stop-me now"), "dont stopme now");
  EXPECT_EQ(norm("a , b"), "a b");
  EXPECT_EQ(norm("(x)[y]{z}"), "xyz");
  // Symbols (S*) are not punctuation: + $ < = > ^ ` | ~ stay.
  EXPECT_EQ(norm("1+1=2 $5 a|b"), "1+1=2 $5 a|b");
  // Non-ASCII punctuation: U+2019 RIGHT SINGLE QUOTATION MARK, U+3002
  // IDEOGRAPHIC FULL STOP, U+00BF INVERTED QUESTION MARK.
  EXPECT_EQ(norm("it\u2019s \u00bfqu\u00e9? \u6587\u3002"), "its qu\u00e9 \u6587");
}

TEST(MinHashText, WhiteSpaceRunsFoldToOneSpaceAndEndsAreTrimmed) {
  EXPECT_EQ(norm("\t a \r\n\u00a0\u3000b\u2029 "), "a b");
  // U+200B ZERO WIDTH SPACE is not White_Space (category Cf): kept.
  EXPECT_EQ(norm("a\u200bb"), "a\u200bb");
}

TEST(MinHashText, CanonicalCaselessForm) {
  // Decomposed e + U+0301 composes; final sigma and sigma fold alike.
  EXPECT_EQ(norm("Cafe\u0301"), "caf\u00e9");
  EXPECT_EQ(norm("\u039f\u0394\u039f\u03a3 \u03bf\u03b4\u03bf\u03c2"),
            "\u03bf\u03b4\u03bf\u03c3 \u03bf\u03b4\u03bf\u03c3");
  EXPECT_EQ(norm("\ufb01"), "fi");  // LATIN SMALL LIGATURE FI folds to two letters
}

TEST(MinHashText, EmptyResults) {
  EXPECT_EQ(norm(""), "");
  EXPECT_EQ(norm("   \n\t "), "");
  EXPECT_EQ(norm("!!! ... --- \u00ab\u00bb"), "");
}

TEST(MinHashText, InvalidUtf8IsAnErrorValueNamingTheByte) {
  std::string error;
  EXPECT_FALSE(normalize_minhash_text("abc\xff", &error).has_value());
  EXPECT_NE(error.find("byte 3"), std::string::npos) << error;
  MinHashTextNormalizer walk("ok \xc3\x28");
  ASSERT_TRUE(walk.error().has_value());
  std::string_view piece;
  EXPECT_FALSE(walk.next(piece));  // a refused text gives no pieces
}

// The whole-text rule, spelled out independently of the chunked walker.
std::string whole_text_reference(std::string_view text) {
  std::string folded;
  normalize_key(NormalizePolicy::kNfcCasefold, text, folded);
  std::string out;
  bool owed = false;
  for (std::size_t i = 0; i < folded.size();) {
    const auto c0 = static_cast<unsigned char>(folded[i]);
    const std::size_t n = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? c0 : (c0 & (0x7F >> n));
    for (std::size_t k = 1; k < n; ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(folded[i + k]) & 0x3FU);
    }
    const bool space = cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 ||
                       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
                       cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
    if (space) {
      owed = !out.empty();
    } else if (!is_unicode_punctuation(cp)) {
      if (owed) out.push_back(' ');
      owed = false;
      out.append(folded, i, n);
    }
    i += n;
  }
  return out;
}

TEST(MinHashText, ChunkedEqualsWholeTextForEveryChunkSize) {
  // Pieces that interact across a naive cut: combining marks after a
  // letter, Hangul jamo that compose, a final sigma, punctuation and spaces.
  const char* const parts[] = {"e",      "\u0301", "\u0327", "A",      "\u1100", "\u1161",
                               "\u11a8", " ",      ",",      "\u03a3", "\u00df", "\u3000",
                               "x",      "\u0345", "\u2014", "\u6587", "\u00c5", "\u212b"};
  std::mt19937 rng(33);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(parts) - 1);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    for (int k = 0; k < 40; ++k) text += parts[pick(rng)];
    const std::string expected = whole_text_reference(text);
    for (const std::size_t chunk :
         {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{0}}) {
      MinHashTextNormalizer walk(text, chunk);
      std::string got;
      std::string_view piece;
      while (walk.next(piece)) got.append(piece);
      ASSERT_EQ(got, expected) << "chunk " << chunk << " text " << text;
    }
  }
}

TEST(MinHashText, PlainAsciiBlocksGiveTheByteRule) {
  // Running text is taken 16 bytes at a time when a block holds only
  // letters, digits and single spaces: texts made mostly of such runs, with
  // each thing that disqualifies a block (a space run, a space at a block's
  // end or start, punctuation, a tab, a capital, a symbol, a non-ASCII
  // letter) placed at random offsets, against the rule spelled out.
  const char* const parts[] = {"word",
                               "Word",
                               "WORDS",
                               "x",
                               "12345",
                               " ",
                               " ",
                               " ",
                               " ",
                               "  ",
                               ",",
                               "\t",
                               "\n",
                               "$5",
                               "\u00e9",
                               "-",
                               "abcdefghijklmnop",
                               "ABCDEFGHIJKLMNOPQ"};
  std::mt19937 rng(37);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(parts) - 1);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int count = static_cast<int>(rng() % 40);
    for (int k = 0; k < count; ++k) text += parts[pick(rng)];
    ASSERT_EQ(norm(text), whole_text_reference(text)) << "text [" << text << "]";
  }
}

TEST(MinHashText, TextsWithoutAsciiAreCutToo) {
  // No ASCII byte at all: the cuts fall before white space, punctuation,
  // CJK ideographs and Hangul syllables, next to the marks, jamo, kana
  // voicing marks and Greek letters that would change across a bad cut.
  const char* const parts[] = {"\u00e9", "\u0301", "\u0327", "\u1100", "\u1161", "\u11a8",
                               "\uac00", "\u3000", "\u3002", "\u03a3", "\u00df", "\u0345",
                               "\u2014", "\u6587", "\u00c5", "\u212b", "\u304b", "\u3099",
                               "\u037e", "\u2000", "\u0399", "\u00a0", "\u0915", "\u093c"};
  std::mt19937 rng(34);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(parts) - 1);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (int k = 0; k < 60; ++k) text += parts[pick(rng)];
    const std::string expected = whole_text_reference(text);
    for (const std::size_t chunk :
         {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{11}, std::size_t{0}}) {
      MinHashTextNormalizer walk(text, chunk);
      std::string got;
      std::string_view piece;
      while (walk.next(piece)) got.append(piece);
      ASSERT_EQ(got, expected) << "chunk " << chunk << " text " << text;
    }
  }
}

TEST(MinHashText, EveryCutPointIsAStarterBeforeAndAfterFolding) {
  // The chunked walk is exact only if a cut point, and the first code point
  // of its canonical caseless form, have canonical combining class 0.
  std::size_t cut_points = 0;
  std::string folded;
  for (char32_t cp = 0; cp < 0x110000U; ++cp) {
    if (cp >= 0xD800U && cp <= 0xDFFFU) continue;
    if (!is_minhash_text_cut_point(cp)) continue;
    ++cut_points;
    ASSERT_EQ(utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class, 0)
        << std::hex << static_cast<std::uint32_t>(cp);
    std::string utf8(4, '\0');
    utf8.resize(static_cast<std::size_t>(utf8proc_encode_char(
        static_cast<utf8proc_int32_t>(cp), reinterpret_cast<utf8proc_uint8_t*>(utf8.data()))));
    normalize_key(NormalizePolicy::kNfcCasefold, utf8, folded);
    ASSERT_FALSE(folded.empty());
    utf8proc_int32_t first = 0;
    utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(folded.data()),
                     static_cast<utf8proc_ssize_t>(folded.size()), &first);
    ASSERT_EQ(utf8proc_get_property(first)->combining_class, 0)
        << std::hex << static_cast<std::uint32_t>(cp);
  }
  EXPECT_GT(cut_points, 30000U);  // the CJK and Hangul blocks alone hold 38,000
}

}  // namespace
}  // namespace bloomshard::core
