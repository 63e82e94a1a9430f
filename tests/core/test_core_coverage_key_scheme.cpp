// The key scheme as a saved contract (docs/coverage.md): every malformed
// item of a state's key_scheme attribute is refused by name, and every field
// that may differ between a state and a job is named in the difference, the
// paragraph unit's own fields included.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/normalize.hpp"

namespace bloomshard::core {
namespace {

// The message of the std::invalid_argument key_scheme_from_state throws.
std::string read_refusal(std::string_view key_field, std::string_view attribute) {
  try {
    (void)key_scheme_from_state(key_field, "none/v1", attribute);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(read back)";
}

KeyScheme paragraph_scheme() {
  KeyScheme s;
  s.fields = {"text"};
  s.unit = KeyUnit::kParagraph;
  s.digest = KeyDigest::kXxh3_128;
  s.min_paragraph_bytes = 16;
  s.drop_if_removed_fraction = 0.25;
  return s;
}

TEST(CoreCoverageKeyScheme, CountAndFractionItemsMustBeWholeNumbers) {
  const std::string head = "key-scheme/v1; fields=text; ";
  EXPECT_EQ(read_refusal("text", head + "min-paragraph-bytes=12x"),
            "key_scheme item 'min-paragraph-bytes=12x' is not a count");
  EXPECT_EQ(read_refusal("text", head + "min-paragraph-bytes=-1"),
            "key_scheme item 'min-paragraph-bytes=-1' is not a count");
  EXPECT_EQ(read_refusal("text", head + "drop-if-removed-fraction=0.5.1"),
            "key_scheme item 'drop-if-removed-fraction=0.5.1' is not a number");
  EXPECT_EQ(read_refusal("text", head + "drop-if-removed-fraction=half"),
            "key_scheme item 'drop-if-removed-fraction=half' is not a number");
}

TEST(CoreCoverageKeyScheme, ItemsWithUnknownValuesOrNoValueAreRefused) {
  const std::string head = "key-scheme/v1; fields=id; ";
  // Only the values the writer produces are read; anything else is unknown.
  EXPECT_EQ(read_refusal("id", head + "missing=drop"),
            "key_scheme item 'missing=drop' is not known");
  EXPECT_EQ(read_refusal("id", head + "unit=record/v1"),
            "key_scheme item 'unit=record/v1' is not known");
  EXPECT_EQ(read_refusal("id", head + "missing"), "key_scheme item 'missing' is not known");
  // No fields item at all.
  EXPECT_EQ(read_refusal("id", "key-scheme/v1; missing=empty"),
            "key_scheme fields do not match key_field 'id'");
}

TEST(CoreCoverageKeyScheme, MissingEmptyRoundTripsAndIsNotLegacy) {
  KeyScheme s;
  s.fields = {"id"};
  s.missing = MissingField::kEmpty;
  EXPECT_FALSE(is_legacy_key_scheme(s));
  const std::string attr = key_scheme_attribute(s);
  EXPECT_NE(attr.find("missing=empty"), std::string::npos);
  EXPECT_EQ(key_scheme_from_state("id", "none/v1", attr), s);
}

TEST(CoreCoverageKeyScheme, EachLegacyConditionAloneMakesANewScheme) {
  KeyScheme base;
  base.fields = {"id"};
  ASSERT_TRUE(is_legacy_key_scheme(base));
  KeyScheme s = base;
  s.fields = {"id", "url"};
  EXPECT_FALSE(is_legacy_key_scheme(s));
  s = base;
  s.text = TextNormalize::kWs;
  EXPECT_FALSE(is_legacy_key_scheme(s));
  s = base;
  s.digest = KeyDigest::kXxh3_128;
  EXPECT_FALSE(is_legacy_key_scheme(s));
  s = paragraph_scheme();
  s.digest = KeyDigest::kNone;
  EXPECT_FALSE(is_legacy_key_scheme(s));
}

TEST(CoreCoverageKeyScheme, ProblemsNameTheBadFieldOrFraction) {
  KeyScheme s;
  s.fields = {"a;b"};
  EXPECT_EQ(key_scheme_problem(s),
            "key field 'a;b' contains ',' or ';' (they separate fields in the state)");
  s.fields = {"id", ""};
  EXPECT_EQ(key_scheme_problem(s), "a key field is empty");
  s = paragraph_scheme();
  for (const double bad : {-0.01, 1.01, std::nan("")}) {
    s.drop_if_removed_fraction = bad;
    EXPECT_EQ(key_scheme_problem(s), "--drop-if-removed-fraction must be in [0, 1]") << bad;
  }
  for (const double edge : {0.0, 1.0}) {
    s.drop_if_removed_fraction = edge;
    EXPECT_EQ(key_scheme_problem(s), "") << edge;
  }
}

TEST(CoreCoverageKeyScheme, DifferencesNameNormalizationAndParagraphSizes) {
  KeyScheme saved;
  saved.fields = {"id"};
  KeyScheme job = saved;
  job.normalize = NormalizePolicy::kNfc;
  EXPECT_EQ(key_scheme_difference(saved, job),
            "normalization differs: the state has " + policy_label(NormalizePolicy::kNone) +
                ", this job asks for " + policy_label(NormalizePolicy::kNfc));

  saved = paragraph_scheme();
  job = saved;
  job.min_paragraph_bytes = 17;
  EXPECT_EQ(key_scheme_difference(saved, job),
            "--min-paragraph-bytes differs: the state has 16, this job asks for 17");
  job = saved;
  job.paragraph_split = saved.paragraph_split == ParagraphSplit::kNewline
                            ? ParagraphSplit::kBlankline
                            : ParagraphSplit::kNewline;
  EXPECT_EQ(key_scheme_difference(saved, job), "--paragraph-split differs: the state has " +
                                                   paragraph_split_label(saved.paragraph_split) +
                                                   ", this job asks for " +
                                                   paragraph_split_label(job.paragraph_split));
  job = saved;
  job.drop_if_removed_fraction = 0.5;
  EXPECT_EQ(key_scheme_difference(saved, job),
            "--drop-if-removed-fraction differs: the state has 0.25, this job asks for 0.5");
  // Paragraph fields of a record-unit scheme are not part of it.
  saved.unit = KeyUnit::kRecord;
  job.unit = KeyUnit::kRecord;
  EXPECT_EQ(key_scheme_difference(saved, job), "");
}

TEST(CoreCoverageKeyScheme, ParagraphItemsReadBackExactly) {
  const KeyScheme s = paragraph_scheme();
  const std::string attr = key_scheme_attribute(s);
  EXPECT_NE(attr.find("min-paragraph-bytes=16; drop-if-removed-fraction=0.25"), std::string::npos)
      << attr;
  EXPECT_EQ(key_scheme_from_state("text", "none/v1", attr), s);
}

KeyScheme minhash_scheme() {
  KeyScheme s;
  s.fields = {"text"};
  s.unit = KeyUnit::kMinHash;
  return s;
}

// --unit minhash refuses each item that cannot apply to it, alone: a text
// normalization, a band of no rows, a confirmation threshold outside
// (0, 1], confirmation origins without a threshold (or on another unit).
TEST(CoreCoverageKeyScheme, MinHashProblemsNameEachItemAlone) {
  KeyScheme s = minhash_scheme();
  EXPECT_EQ(key_scheme_problem(s), "");
  s.text = TextNormalize::kWs;
  EXPECT_NE(key_scheme_problem(s).find("--text-normalize and --key-digest do not apply"),
            std::string::npos)
      << key_scheme_problem(s);
  s = minhash_scheme();
  s.rows = 0;
  EXPECT_EQ(key_scheme_problem(s),
            "--bands 14 x --rows 0: each must be at least 1 and their product at most 4096");
  s = minhash_scheme();
  for (const double bad : {-0.5, 1.5, std::nan("")}) {
    s.confirm_jaccard = bad;
    EXPECT_EQ(key_scheme_problem(s), "--confirm-jaccard must be in (0, 1]") << bad;
  }
  s.confirm_jaccard = 1.0;
  EXPECT_EQ(key_scheme_problem(s), "");
  s = minhash_scheme();
  s.confirm_origins = true;
  EXPECT_EQ(key_scheme_problem(s),
            "the origins of confirmation forms (confirm-origins) need --confirm-jaccard");
  KeyScheme record;
  record.fields = {"id"};
  record.confirm_origins = true;
  EXPECT_EQ(key_scheme_problem(record), "confirm-origins applies to --unit minhash only");
}

TEST(CoreCoverageKeyScheme, BandAndRowCountsMustBeWholeNumbers) {
  const std::string head = "key-scheme/v1; fields=text; unit=minhash/v1; ";
  EXPECT_EQ(read_refusal("text", head + "bands=8x"), "key_scheme item 'bands=8x' is not a count");
  EXPECT_EQ(read_refusal("text", head + "rows=4 2"), "key_scheme item 'rows=4 2' is not a count");
}

}  // namespace
}  // namespace bloomshard::core
