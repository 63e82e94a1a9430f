// A one-field digest key built from its value in pieces (KeyBuilder::
// stream_*, what a long JSON string is digested through) equals the key
// build() gives for the whole value, for every streaming scheme and any cut
// of the value, cuts inside a multi-byte white space or letter included;
// invalid UTF-8 under ws is refused either way.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {
namespace {

KeyScheme scheme_of(KeyDigest digest, TextNormalize text,
                    NormalizePolicy normalize = NormalizePolicy::kNone) {
  KeyScheme s;
  s.fields = {"text"};
  s.digest = digest;
  s.text = text;
  s.normalize = normalize;
  return s;
}

std::optional<std::string> whole_key(KeyBuilder& b, std::string_view value) {
  try {
    const std::string_view values[] = {value};
    return std::string(b.build(values));
  } catch (const InvalidUtf8Error&) {
    return std::nullopt;
  }
}

std::optional<std::string> streamed_key(KeyBuilder& b, std::string_view value,
                                        const std::vector<std::size_t>& cuts) {
  try {
    b.stream_begin();
    std::size_t from = 0;
    for (const std::size_t cut : cuts) {
      b.stream_piece(value.substr(from, cut - from));
      from = cut;
    }
    b.stream_piece(value.substr(from));
    return std::string(b.stream_finish());
  } catch (const InvalidUtf8Error&) {
    return std::nullopt;
  }
}

TEST(KeyBuilderStream, OnlyDigestsWithoutCopyingPoliciesStream) {
  EXPECT_TRUE(KeyBuilder(scheme_of(KeyDigest::kSha256, TextNormalize::kWs)).streams_one_value());
  EXPECT_TRUE(
      KeyBuilder(scheme_of(KeyDigest::kXxh3_128, TextNormalize::kNone)).streams_one_value());
  EXPECT_FALSE(KeyBuilder(scheme_of(KeyDigest::kNone, TextNormalize::kWs)).streams_one_value());
  EXPECT_FALSE(
      KeyBuilder(scheme_of(KeyDigest::kSha256, TextNormalize::kWsLower)).streams_one_value());
  EXPECT_FALSE(KeyBuilder(scheme_of(KeyDigest::kSha256, TextNormalize::kWs, NormalizePolicy::kNfc))
                   .streams_one_value());
  KeyBuilder no(scheme_of(KeyDigest::kSha256, TextNormalize::kWsLower));
  EXPECT_THROW(no.stream_begin(), std::logic_error);
}

TEST(KeyBuilderStream, AnyCutGivesTheWholeValuesKey) {
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           " ",
                                           "  ",
                                           "\t",
                                           "\r\n",
                                           "\xC2\xA0",
                                           "\xC2\x85",
                                           "\xE3\x80\x80",
                                           "\xE2\x80\x83",
                                           "\xE2\x80\xA8",
                                           "\xE1\x9A\x80",
                                           "\xC3\xA9",
                                           "\xE2\x80\x8B",
                                           "\xF0\x9F\x98\x80",
                                           std::string(1, '\0'),
                                           "\xEF\xBB\xBF",
                                           "\xFF",
                                           "\xC3",
                                           "\x80",
                                           "\xED\xA0\x80"};
  std::mt19937 rng(1515);
  for (const auto digest : {KeyDigest::kXxh3_128, KeyDigest::kSha256}) {
    for (const auto text : {TextNormalize::kNone, TextNormalize::kWs}) {
      KeyBuilder whole(scheme_of(digest, text));
      KeyBuilder pieced(scheme_of(digest, text));
      for (int round = 0; round < 2000; ++round) {
        std::string value;
        const int n = static_cast<int>(rng() % 12);
        // Mostly valid values; a fifth may hold the invalid pieces.
        const std::size_t alphabet = round % 5 == 0 ? pieces.size() : pieces.size() - 4;
        for (int i = 0; i < n; ++i) value += pieces[rng() % alphabet];
        std::vector<std::size_t> cuts;
        for (std::size_t i = 1; i < value.size(); ++i) {
          if (rng() % 3 == 0) cuts.push_back(i);
        }
        EXPECT_EQ(streamed_key(pieced, value, cuts), whole_key(whole, value))
            << "value bytes " << value.size() << ", " << cuts.size() << " cuts";
      }
    }
  }
}

TEST(KeyBuilderStream, AKeyAbandonedOnInvalidUtf8DoesNotLeakIntoTheNext) {
  KeyBuilder b(scheme_of(KeyDigest::kSha256, TextNormalize::kWs));
  KeyBuilder fresh(scheme_of(KeyDigest::kSha256, TextNormalize::kWs));
  b.stream_begin();
  b.stream_piece("some words ");
  EXPECT_THROW(b.stream_piece("\xFF"), InvalidUtf8Error);
  EXPECT_EQ(streamed_key(b, "next  key", {3}), whole_key(fresh, "next key"));
  b.stream_begin();
  b.stream_piece("cut \xE3\x80");  // the value ends inside a code point
  EXPECT_THROW((void)b.stream_finish(), InvalidUtf8Error);
}

// WhitespaceCollapser is ws/v1 over pieces: the table rows of docs/keys.md
// fed one byte-aligned code point at a time.
TEST(KeyBuilderStream, WhitespaceCollapserMatchesNormalizeText) {
  const std::vector<std::string> rows = {"Hello world",
                                         "  Hello  ",
                                         "line one\r\nline two\r\n",
                                         "a\t\tb\tc",
                                         "a\xC2\xA0"
                                         "b",
                                         "\xE6\x97\xA5\xE3\x80\x80x",
                                         " \t\xC2\xA0\xE3\x80\x80\r\n x \xE2\x80\x83 ",
                                         "",
                                         "   "};
  for (const std::string& row : rows) {
    std::string want_buf;
    const std::string want(normalize_text(TextNormalize::kWs, row, want_buf));
    WhitespaceCollapser c;
    std::string got;
    std::size_t i = 0;
    while (i < row.size()) {
      std::size_t n = 1;
      const auto lead = static_cast<unsigned char>(row[i]);
      if (lead >= 0xF0U)
        n = 4;
      else if (lead >= 0xE0U)
        n = 3;
      else if (lead >= 0xC0U)
        n = 2;
      c.feed(std::string_view(row).substr(i, n), [&](std::string_view s) { got.append(s); });
      i += n;
    }
    EXPECT_EQ(got, want) << row;
  }
}

}  // namespace
}  // namespace bloomshard::core
