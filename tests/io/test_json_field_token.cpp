// JsonFieldToken / replace_string_token (--unit paragraph): the raw token of
// a string field, first member of a name, nested paths, whitespace around
// the value; non-strings and missing fields give nothing; the rewrite
// changes that token only and escapes as append_json_string_contents.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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

// The cut a paragraph write makes through map_canonical_token_offsets: the
// kept stretches [o[0], o[1]), [o[2], o[3]) ... of the value, as pieces of
// the line, and what replace_string_token() writes for the same cut.
struct Cut {
  bool mapped = false;
  std::string by_pieces;
  std::string by_escaping;
};

Cut cut(std::string_view line, std::vector<std::size_t> offsets, std::string_view value) {
  JsonFieldToken f("text");
  const auto t = f.find_string(line);
  EXPECT_TRUE(t.has_value());
  Cut c;
  std::string kept;
  for (std::size_t j = 0; j + 1 < offsets.size(); j += 2) {
    kept += value.substr(offsets[j], offsets[j + 1] - offsets[j]);
  }
  std::string scratch;
  c.by_escaping = std::string(replace_string_token(line, *t, kept, scratch));
  c.mapped = map_canonical_token_offsets(line, *t, value, offsets);
  if (!c.mapped) return c;
  c.by_pieces = std::string(line.substr(0, offsets.front()));
  for (std::size_t j = 0; j + 1 < offsets.size(); j += 2) {
    c.by_pieces += line.substr(offsets[j], offsets[j + 1] - offsets[j]);
  }
  c.by_pieces += line.substr(offsets.back());
  return c;
}

TEST(JsonFieldToken, CanonicalTokenCutsAsPiecesOfTheLine) {
  // value: "a\n\"q\"\n\u0001é\tz" (raw UTF-8, short escapes, \u0001)
  const std::string value = "a\n\"q\"\n\x01\xc3\xa9\tz";
  const std::string line = R"({"id": 7, "text": "a\n\"q\"\n\u0001é\tz" , "k": "\u00e9"})";
  // Cut the middle line "\"q\"\n" (value bytes [2, 6)), keep the rest.
  Cut c = cut(line, {0, 2, 6, value.size()}, value);
  ASSERT_TRUE(c.mapped);
  EXPECT_EQ(c.by_pieces, c.by_escaping);
  EXPECT_EQ(c.by_pieces, R"({"id": 7, "text": "a\n\u0001é\tz" , "k": "\u00e9"})");
  // Cut everything, nothing, and the last stretch.
  for (const std::vector<std::size_t>& o :
       {std::vector<std::size_t>{0, 0, value.size(), value.size()},
        std::vector<std::size_t>{0, value.size()},
        std::vector<std::size_t>{0, 6, value.size(), value.size()}}) {
    c = cut(line, o, value);
    ASSERT_TRUE(c.mapped);
    EXPECT_EQ(c.by_pieces, c.by_escaping);
  }
}

TEST(JsonFieldToken, OtherEscapesAreNotMapped) {
  // Each token decodes to its value, but replace_string_token() would write
  // it otherwise, so the caller must escape again (same bytes as before).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"text":"caf\u00e9\nx"})", "caf\xc3\xa9\nx"},  // \u00e9: written raw
      {R"({"text":"a\/b\nx"})", "a/b\nx"},               // \/: written /
      {R"({"text":"a\u000ab"})", "a\nb"},                // \u000a: written \n
      {R"({"text":"a\u001Fb"})",
       "a\x1f"
       "b"},  // upper-case hex
  };
  for (const auto& [line, value] : cases) {
    const Cut c = cut(line, {0, 1, value.size() - 1, value.size()}, value);
    EXPECT_FALSE(c.mapped) << line;
  }
  // A raw control byte (which find_string() does not accept either) would
  // be escaped by the writer, so it is not copied.
  const std::string raw_tab = "{\"text\":\"a\tb\"}";
  std::vector<std::size_t> offsets{0, 3};
  EXPECT_FALSE(map_canonical_token_offsets(raw_tab, {8, raw_tab.size() - 1}, "a\tb", offsets));
  // A value that is not the token's is refused, not cut wrongly.
  EXPECT_FALSE(cut(R"({"text":"ab\ncd"})", {0, 1, 4, 5}, "ab\ncx").mapped);
  EXPECT_FALSE(cut(R"({"text":"ab\ncd"})", {0, 1, 4, 5}, "ab\ncde").mapped);
  // Offsets past the value or not ascending.
  EXPECT_FALSE(cut(R"({"text":"ab\ncd"})", {0, 1, 4, 6}, "ab\ncd").mapped);
  EXPECT_FALSE(cut(R"({"text":"ab\ncd"})", {0, 3, 1, 5}, "ab\ncd").mapped);
}

}  // namespace
}  // namespace bloomshard::io
