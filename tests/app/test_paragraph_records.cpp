// --unit paragraph in the app layer: the options (defaults, the implied
// xxh3-128 digest, refusals naming the option), and ParagraphRecords over a
// real RoundBatch and OutputWriter: keys per keyed paragraph in text order,
// a record written unchanged, with its duplicate paragraphs cut (the rest
// of the line byte-identical), or dropped over the fraction; the
// duplicate spans annotate mode will write; the counters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "app/feed/paragraph_records.hpp"
#include "app/options/dedup_options.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

TEST(ParagraphOptions, DefaultsImpliedDigestAndRefusals) {
  const std::string in = fs::temp_directory_path().string();
  ParsedDedup p = parse_dedup_options({"--input", in, "--output", "o", "--key-field", "text"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.unit, core::KeyUnit::kRecord);
  p = parse_dedup_options({"--input", in, "--output", "o", "--key-field", "text", "--unit",
                           "paragraph", "--paragraph-split", "blankline", "--min-paragraph-bytes",
                           "20", "--drop-if-removed-fraction", "0.5"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.unit, core::KeyUnit::kParagraph);
  EXPECT_EQ(p.config.key.paragraph_split, core::ParagraphSplit::kBlankline);
  EXPECT_EQ(p.config.key.min_paragraph_bytes, 20U);
  EXPECT_DOUBLE_EQ(p.config.key.drop_if_removed_fraction, 0.5);
  EXPECT_EQ(p.config.key.digest, core::KeyDigest::kXxh3_128);
  p = parse_dedup_options({"--input", in, "--output", "o", "--unit", "sentence"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_NE(p.message.find("--unit must be record, paragraph or minhash"), std::string::npos);
  p = parse_dedup_options(
      {"--input", in, "--output", "o", "--unit", "paragraph", "--paragraph-split", "x"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_NE(p.message.find("--paragraph-split"), std::string::npos);
  p = parse_dedup_options({"--input", in, "--output", "o", "--unit", "paragraph", "--key-field",
                           "a", "--key-field", "b"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_NE(p.message.find("not a tuple"), std::string::npos);
  p = parse_dedup_options(
      {"--input", in, "--output", "o", "--unit", "paragraph", "--drop-if-removed-fraction", "2"});
  ASSERT_TRUE(p.exit_code);
}

class ParagraphRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-pararec-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    key_.fields = {"text"};
    key_.unit = core::KeyUnit::kParagraph;
    key_.digest = core::KeyDigest::kXxh3_128;
    key_.min_paragraph_bytes = 2;
    key_.drop_if_removed_fraction = 0.7;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
  core::KeyScheme key_;
};

TEST_F(ParagraphRecordsTest, CutsDuplicatesKeepsTheRestAndDropsOverTheFraction) {
  ParagraphRecords paragraphs(key_, 1);
  RoundBatch batch;
  // Record 0: "aa", "x" (too short: not keyed), "bb", "aa" -> 3 keys.
  const std::string r0 = R"({"id":"r0", "text":"aa\nx\nbb\naa" ,"z":"\u00e9"})";
  ASSERT_EQ(paragraphs.add(batch, 0, r0, "\n", "aa\nx\nbb\naa", true), "");
  // Record 1: "cc" only -> unchanged.
  const std::string r1 = R"({"id":"r1","text":"cc"})";
  ASSERT_EQ(paragraphs.add(batch, 0, r1, "\r\n", "cc", true), "");
  // Record 2: "aa\nbb\ncccc": loses 6 of 10 bytes (kept, 0.6 <= 0.7).
  const std::string r2 = R"({"text":"aa\nbb\ncccc"})";
  ASSERT_EQ(paragraphs.add(batch, 0, r2, "\n", "aa\nbb\ncccc", true), "");
  // Record 3: "aa\nbb\nc": loses 6 of 7 bytes -> dropped.
  const std::string r3 = R"({"text":"aa\nbb\nc"})";
  ASSERT_EQ(paragraphs.add(batch, 0, r3, "\n", "aa\nbb\nc", true), "");
  // A number is no text.
  EXPECT_EQ(paragraphs.add(batch, 0, R"({"text":7})", "\n", "7", true), kRejectParagraphNotString);
  ASSERT_EQ(batch.size(), 4U);
  EXPECT_EQ(batch.key_count(0), 3U);
  EXPECT_EQ(batch.key_count(1), 1U);
  EXPECT_EQ(batch.first_key(2), 4U);
  EXPECT_EQ(batch.key_count(3), 2U);  // "c" is too short
  const auto keys = batch.keys();
  ASSERT_EQ(keys.size(), 9U);
  EXPECT_EQ(keys[0].bytes, keys[2].bytes);  // "aa" twice in record 0
  EXPECT_EQ(keys[0].bytes.size(), 16U);

  // Verdicts as the router gives them: first copies new, later ones not.
  using V = core::Verdict;
  const std::vector<V> verdicts{V::kNew,       V::kNew, V::kDuplicate, V::kNew,      V::kDuplicate,
                                V::kDuplicate, V::kNew, V::kDuplicate, V::kDuplicate};
  io::OutputWriter out = io::OutputWriter::create(dir_ / "out.jsonl", io::Compression::kNone);
  std::vector<ParagraphOutcome> outcomes;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    outcomes.push_back(paragraphs.write(batch, i, verdicts, out));
  }
  out.close();
  EXPECT_EQ(outcomes, (std::vector<ParagraphOutcome>{
                          ParagraphOutcome::kChanged, ParagraphOutcome::kUnchanged,
                          ParagraphOutcome::kChanged, ParagraphOutcome::kDropped}));
  EXPECT_EQ(read(dir_ / "out.jsonl"), R"({"id":"r0", "text":"aa\nx\nbb\n" ,"z":"\u00e9"})"
                                      "\n"
                                      R"({"id":"r1","text":"cc"})"
                                      "\r\n"
                                      R"({"text":"cccc"})"
                                      "\n");
  EXPECT_EQ(paragraphs.duplicate_spans(batch, 0, verdicts), (std::vector<core::TextSpan>{{8, 10}}));
  EXPECT_EQ(paragraphs.duplicate_spans(batch, 2, verdicts),
            (std::vector<core::TextSpan>{{0, 2}, {3, 5}}));
  const ParagraphCounters& c = paragraphs.counters();
  EXPECT_EQ(c.paragraphs, 4U + 1U + 3U + 3U);
  EXPECT_EQ(c.paragraphs_keyed, 9U);
  EXPECT_EQ(c.paragraphs_removed, 3U);  // 1 in r0, 2 in r2; r3's are in records_dropped
  EXPECT_EQ(c.records_changed, 2U);
  EXPECT_EQ(c.records_dropped, 1U);
  EXPECT_EQ(c.bytes_removed, 2U + 6U);
}

TEST_F(ParagraphRecordsTest, CanonicalAndOtherTokensGiveTheSameCut) {
  // The same text as a token the writer's escaper would write (cut as
  // pieces of the line) and as two it would write otherwise, \u00e9 and
  // \u000a / \u0009 (unescaped and escaped again): all three come out as
  // the escaper writes the kept text.
  ParagraphRecords paragraphs(key_, 1);
  RoundBatch batch;
  const std::string text = "caf\xc3\xa9 \"q\"\nbb\ncc\td";
  const std::string canonical = R"({"text":"café \"q\"\nbb\ncc\td", "n": 1})";
  const std::string unicode = R"({"text":"caf\u00e9 \"q\"\nbb\ncc\td", "n": 1})";
  const std::string controls = R"({"text":"café \"q\"\u000abb\ncc\u0009d", "n": 1})";
  ASSERT_EQ(paragraphs.add(batch, 0, canonical, "\n", text, true), "");
  ASSERT_EQ(paragraphs.add(batch, 0, unicode, "\n", text, true), "");
  ASSERT_EQ(paragraphs.add(batch, 0, controls, "\n", text, true), "");
  using V = core::Verdict;
  // Paragraph "bb" is a duplicate in every record.
  const std::vector<V> verdicts{V::kNew, V::kDuplicate, V::kNew,       V::kNew, V::kDuplicate,
                                V::kNew, V::kNew,       V::kDuplicate, V::kNew};
  io::OutputWriter out = io::OutputWriter::create(dir_ / "out.jsonl", io::Compression::kNone);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(paragraphs.write(batch, i, verdicts, out), ParagraphOutcome::kChanged);
  }
  out.close();
  const std::string want = R"({"text":"café \"q\"\ncc\td", "n": 1})"
                           "\n";
  EXPECT_EQ(read(dir_ / "out.jsonl"), want + want + want);
}

}  // namespace
}  // namespace bloomshard::app
