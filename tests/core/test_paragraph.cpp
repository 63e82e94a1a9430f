// Paragraph-level dedup in core: splitting by newline and
// by blank line with the exact spans and cuts, removal that leaves every
// other byte untouched, the removed fraction and its strict threshold, the
// Dolma-style duplicate spans, the keyer (normalized text digested as a
// one-field record key would be, short paragraphs not keyed) and the
// paragraph items of the key scheme (written, read back, compared).
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/paragraph_split.hpp"
#include "core/paragraph/paragraph_keyer.hpp"
#include "core/paragraph/paragraph_removal.hpp"

namespace bloomshard::core {
namespace {

std::vector<ParagraphSpan> split(ParagraphSplit rule, std::string_view text) {
  std::vector<ParagraphSpan> out;
  split_paragraphs(rule, text, out);
  return out;
}

std::vector<std::string> texts(std::string_view text, const std::vector<ParagraphSpan>& spans) {
  std::vector<std::string> out;
  for (const ParagraphSpan& s : spans) out.emplace_back(text.substr(s.start, s.end - s.start));
  return out;
}

std::string removed(std::string_view text, ParagraphSplit rule, std::vector<bool> dup) {
  const std::vector<ParagraphSpan> spans = split(rule, text);
  std::string out;
  std::unique_ptr<bool[]> flags(new bool[dup.size()]);
  for (std::size_t i = 0; i < dup.size(); ++i) flags[i] = dup[i];
  return std::string(remove_paragraphs(text, spans, {flags.get(), dup.size()}, out));
}

using V = std::vector<std::string>;

TEST(ParagraphSplit, NewlineSpansAndCuts) {
  const std::string_view t = "a\nbb\r\n\nccc";
  const auto s = split(ParagraphSplit::kNewline, t);
  ASSERT_EQ(s.size(), 4U);
  EXPECT_EQ(texts(t, s), (V{"a", "bb\r", "", "ccc"}));
  EXPECT_EQ(s[0], (ParagraphSpan{0, 1, 2}));
  EXPECT_EQ(s[1], (ParagraphSpan{2, 5, 6}));
  EXPECT_EQ(s[2], (ParagraphSpan{6, 6, 7}));
  EXPECT_EQ(s[3], (ParagraphSpan{7, 10, 10}));
  // A final '\n' leaves an empty last paragraph; an empty text is one.
  EXPECT_EQ(texts("x\n", split(ParagraphSplit::kNewline, "x\n")), (V{"x", ""}));
  EXPECT_EQ(split(ParagraphSplit::kNewline, ""), (std::vector<ParagraphSpan>{{0, 0, 0}}));
}

TEST(ParagraphSplit, BlanklineRunsOfLines) {
  const std::string_view t = "\n  \nfirst line\nsecond\n\n \t\r\nthird\n";
  const auto s = split(ParagraphSplit::kBlankline, t);
  ASSERT_EQ(s.size(), 2U);
  EXPECT_EQ(texts(t, s), (V{"first line\nsecond", "third"}));
  EXPECT_EQ(s[0].start, 4U);  // the leading blank lines are before it
  EXPECT_EQ(s[0].cut_end, s[1].start);
  EXPECT_EQ(s[1].cut_end, t.size());
  EXPECT_TRUE(split(ParagraphSplit::kBlankline, "").empty());
  EXPECT_TRUE(split(ParagraphSplit::kBlankline, " \n\r\n\t").empty());
  EXPECT_EQ(texts("one", split(ParagraphSplit::kBlankline, "one")), (V{"one"}));
}

TEST(ParagraphSplit, NamesParseAndRefuse) {
  EXPECT_EQ(parse_paragraph_split("newline"), ParagraphSplit::kNewline);
  EXPECT_EQ(parse_paragraph_split("blankline/v1"), ParagraphSplit::kBlankline);
  EXPECT_EQ(paragraph_split_label(ParagraphSplit::kBlankline), "blankline/v1");
  EXPECT_THROW((void)parse_paragraph_split("sentence"), std::invalid_argument);
  EXPECT_THROW((void)parse_paragraph_split("newline/v2"), std::invalid_argument);
}

TEST(ParagraphRemoval, CutsOnlyTheFlaggedParagraphs) {
  const std::string t = "a\nb\nc";
  EXPECT_EQ(removed(t, ParagraphSplit::kNewline, {false, true, false}), "a\nc");
  EXPECT_EQ(removed(t, ParagraphSplit::kNewline, {true, false, false}), "b\nc");
  EXPECT_EQ(removed(t, ParagraphSplit::kNewline, {false, false, true}), "a\nb\n");
  EXPECT_EQ(removed(t, ParagraphSplit::kNewline, {true, true, true}), "");
  EXPECT_EQ(removed(t, ParagraphSplit::kNewline, {false, false, false}), t);
  const std::string b = "\nP1 l1\nP1 l2\n\n\nP2\n\nP3";
  EXPECT_EQ(removed(b, ParagraphSplit::kBlankline, {false, true, false}), "\nP1 l1\nP1 l2\n\n\nP3");
  EXPECT_EQ(removed(b, ParagraphSplit::kBlankline, {true, false, false}), "\nP2\n\nP3");
}

TEST(ParagraphRemoval, FractionSpansAndStrictThreshold) {
  const std::string t = "aaaa\nbb\ncc";  // 10 bytes; cuts 5, 3, 2
  const auto s = split(ParagraphSplit::kNewline, t);
  const std::array<bool, 3> dup{false, true, true};
  const ParagraphRemoval r = measure_removal(t.size(), s, dup);
  EXPECT_EQ(r.paragraphs_removed, 2U);
  EXPECT_EQ(r.bytes_removed, 5U);
  EXPECT_DOUBLE_EQ(r.removed_fraction, 0.5);
  EXPECT_EQ(duplicate_spans(s, dup), (std::vector<TextSpan>{{5, 7}, {8, 10}}));
  EXPECT_FALSE(drop_for_removed_fraction(0.5, 0.5));  // "more than F"
  EXPECT_TRUE(drop_for_removed_fraction(0.5, 0.49));
  EXPECT_FALSE(drop_for_removed_fraction(1.0, 1.0));  // 1.0 never drops
  const std::array<bool, 1> none{false};
  EXPECT_DOUBLE_EQ(measure_removal(0, split(ParagraphSplit::kNewline, ""), none).removed_fraction,
                   0.0);
}

KeyScheme paragraph_key_scheme() {
  KeyScheme s;
  s.fields = {"text"};
  s.unit = KeyUnit::kParagraph;
  s.digest = KeyDigest::kXxh3_128;
  s.text = TextNormalize::kWs;
  s.min_paragraph_bytes = 3;
  return s;
}

TEST(ParagraphKeyer, DigestOfTheNormalizedParagraphShortOnesUnkeyed) {
  ParagraphKeyer keyer(paragraph_key_scheme());
  keyer.key_text("Hello  world\r\nab\n\n\tHello world ");
  ASSERT_EQ(keyer.spans().size(), 4U);
  EXPECT_EQ(keyer.keyed(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(keyer.keyed_count(), 2U);
  EXPECT_EQ(keyer.key(0), keyer.key(3));  // the same text under ws
  EXPECT_EQ(keyer.key(0), digest_key(KeyDigest::kXxh3_128, "Hello world"));
  // The very bytes a one-field record key of that paragraph would have.
  KeyScheme record = paragraph_key_scheme();
  record.unit = KeyUnit::kRecord;
  KeyBuilder builder(record);
  const std::array<std::string_view, 1> v{"\tHello world "};
  EXPECT_EQ(keyer.key(3), builder.build(v));
}

TEST(ParagraphKeyer, InvalidUtf8UnderWsThrows) {
  ParagraphKeyer keyer(paragraph_key_scheme());
  EXPECT_THROW(keyer.key_text("fine\nbad \xff byte"), InvalidUtf8Error);
}

TEST(KeySchemeParagraph, ItemsRoundTripAndDifferencesNameTheFlag) {
  KeyScheme s = paragraph_key_scheme();
  s.paragraph_split = ParagraphSplit::kBlankline;
  s.drop_if_removed_fraction = 0.3;
  EXPECT_FALSE(is_legacy_key_scheme(s));
  EXPECT_EQ(key_scheme_problem(s), "");
  const std::string attr = key_scheme_attribute(s);
  EXPECT_NE(attr.find("unit=paragraph/v1; split=blankline/v1; min-paragraph-bytes=3; "
                      "drop-if-removed-fraction=0.3"),
            std::string::npos)
      << attr;
  const KeyScheme back = key_scheme_from_state("text", "none/v1", attr);
  EXPECT_EQ(back, s);
  KeyScheme other = s;
  other.drop_if_removed_fraction = 0.5;
  EXPECT_EQ(key_scheme_difference(s, other),
            "--drop-if-removed-fraction differs: the state has 0.3, this job asks for 0.5");
  other = s;
  other.unit = KeyUnit::kRecord;
  EXPECT_NE(key_scheme_difference(s, other).find("key unit (--unit)"), std::string::npos);
  // A record-unit scheme keeps the part-2 attribute text: no unit item.
  KeyScheme rec = s;
  rec.unit = KeyUnit::kRecord;
  EXPECT_EQ(key_scheme_attribute(rec).find("unit="), std::string::npos);
}

TEST(KeySchemeParagraph, ProblemsOfAParagraphScheme) {
  KeyScheme s = paragraph_key_scheme();
  s.fields = {"url", "text"};
  EXPECT_NE(key_scheme_problem(s), "");
  s = paragraph_key_scheme();
  s.digest = KeyDigest::kNone;
  EXPECT_NE(key_scheme_problem(s), "");
  s = paragraph_key_scheme();
  s.drop_if_removed_fraction = 1.5;
  EXPECT_NE(key_scheme_problem(s), "");
  EXPECT_THROW(
      (void)key_scheme_from_state("text", "none/v1",
                                  "key-scheme/v1; fields=text; missing=reject; text=none/v1; "
                                  "digest=xxh3-128/v1; unit=paragraph/v1; min-paragraph-bytes=x"),
      std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::core
