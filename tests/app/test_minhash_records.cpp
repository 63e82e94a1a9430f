// --unit minhash in the app layer: the options (defaults, values, refusals
// naming the option before any work), and MinHashRecords over a real
// RoundBatch: B band keys per record (one for an empty text) equal to the
// core sketch's, rejects with their reason, and the decision of a record
// from its keys' verdicts (a near-duplicate as soon as one key is not new;
// with --confirm-jaccard, as soon as one hit is confirmed).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/feed/minhash_records.hpp"
#include "app/options/dedup_options.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

ParsedDedup parse(std::vector<std::string> extra) {
  std::vector<std::string> args{"--input",     fs::temp_directory_path().string(),
                                "--output",    "o",
                                "--key-field", "text",
                                "--unit",      "minhash"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parse_dedup_options(args);
}

TEST(MinHashOptions, DefaultsAndValues) {
  ParsedDedup p = parse({});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.unit, core::KeyUnit::kMinHash);
  EXPECT_EQ(p.config.key.shingle, "word:5");
  EXPECT_EQ(p.config.key.bands, 14U);
  EXPECT_EQ(p.config.key.rows, 8U);
  EXPECT_EQ(p.config.key.digest, core::KeyDigest::kNone);
  p = parse({"--shingle", "char:24", "--bands", "20", "--rows", "13"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.shingle, "char:24");
  EXPECT_EQ(p.config.key.bands, 20U);
  EXPECT_EQ(p.config.key.rows, 13U);
  const ParsedDedup windowed = parse({"--window", "3", "--state", "st"});  // windows apply
  EXPECT_FALSE(windowed.exit_code) << windowed.message;
  EXPECT_EQ(windowed.config.window.window, 3U);
  EXPECT_EQ(core::key_scheme_attribute(p.config.key),
            "key-scheme/v1; fields=text; missing=reject; text=none/v1; digest=none/v1; "
            "unit=minhash/v1; shingle=char:24; bands=20; rows=13");
}

TEST(MinHashOptions, RefusalsNameTheOption) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--shingle", "word:0"}, "--shingle"},
      {{"--shingle", "words:5"}, "--shingle"},
      {{"--bands", "0"}, "--bands must be at least 1"},
      {{"--rows", "0"}, "--rows must be at least 1"},
      {{"--bands", "100", "--rows", "41"}, "--bands 100 x --rows 41"},
      {{"--key-digest", "sha256"}, "--key-digest do not apply"},
      {{"--normalize", "nfc"}, "--normalize"},
      {{"--key-field", "title"}, "one text field"},
      {{"--kept-copy", "first"}, "--unit record or paragraph only"},
      {{"--confirm-jaccard", "0"}, "--confirm-jaccard must be a number T with 0 < T <= 1"},
      {{"--confirm-jaccard", "1.01"}, "--confirm-jaccard must be a number T with 0 < T <= 1"},
      {{"--confirm-jaccard", "inf"}, "--confirm-jaccard must be a number T with 0 < T <= 1"},
      {{"--confirm-jaccard", ".8 "}, "--confirm-jaccard must be a number T with 0 < T <= 1"},
  };
  for (const auto& [extra, want] : cases) {
    const ParsedDedup p = parse(extra);
    ASSERT_TRUE(p.exit_code) << extra.front();
    EXPECT_EQ(*p.exit_code, 2) << extra.front();
    EXPECT_NE(p.message.find(want), std::string::npos) << extra.front() << ": " << p.message;
  }
}

TEST(MinHashOptions, ConfirmJaccardOnlyWithMinHash) {
  ParsedDedup p = parse({"--confirm-jaccard", "0.8"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.confirm_jaccard, 0.8);
  p = parse({"--confirm-jaccard", "1"});
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.confirm_jaccard, 1.0);
  EXPECT_EQ(parse({}).config.key.confirm_jaccard, 0.0);
  p = parse({"--confirm-jaccard", "0.8", "--state", "st"});  // the forms are checkpointed
  ASSERT_FALSE(p.exit_code) << p.message;
  EXPECT_EQ(p.config.key.confirm_jaccard, 0.8);
  p = parse_dedup_options({"--input", fs::temp_directory_path().string(), "--output", "o",
                           "--key-field", "text", "--confirm-jaccard", "0.8"});
  ASSERT_TRUE(p.exit_code);
  EXPECT_EQ(*p.exit_code, 2);
  EXPECT_NE(p.message.find("--confirm-jaccard applies to --unit minhash only"), std::string::npos)
      << p.message;
}

core::KeyScheme scheme() {
  core::KeyScheme k;
  k.fields = {"text"};
  k.unit = core::KeyUnit::kMinHash;
  return k;
}

constexpr std::string_view kText =
    "The quick brown fox jumps over the lazy dog and keeps on running far away";

TEST(MinHashRecords, BandKeysAreTheSketchsAndRejectsSayWhy) {
  MinHashRecords records(scheme(), core::kDefaultHashSeed);
  RoundBatch batch;
  const std::string line = R"({"text": "x"})";  // the line is only carried
  EXPECT_EQ(records.add(batch, 0, line, "\n", kText, false), "");
  EXPECT_EQ(records.add(batch, 0, line, "\n", "  ...  ", false), "");
  EXPECT_EQ(records.add(batch, 0, R"({"text": 7})", "\n", "7", true), kRejectMinHashNotString);
  EXPECT_EQ(
      records.add(batch, 0, "caf\xff", "\n", "caf\xff", false),
      std::string_view("minhash text is not UTF-8: invalid UTF-8 at byte 3: lead byte 0xF5..0xFF "
                       "is never valid"));
  ASSERT_EQ(batch.size(), 2U);
  EXPECT_EQ(batch.key_count(0), 14U);
  EXPECT_EQ(batch.key_count(1), 1U);  // the empty-text key
  core::MinHashSketcher sketcher(minhash_config(scheme()));
  core::MinHashSketch sketch;
  std::string error;
  ASSERT_TRUE(sketcher.sketch(kText, sketch, error));
  for (std::size_t b = 0; b < 14; ++b) {
    const core::KeyRef& k = batch.keys()[batch.first_key(0) + b];
    ASSERT_EQ(k.bytes.size(), 16U);
    EXPECT_EQ(std::memcmp(k.bytes.data(), sketch.band_keys[b].data(), 16), 0) << b;
    EXPECT_EQ(k.hash, core::hash_key(k.bytes, core::kDefaultHashSeed));
  }
  const core::BandKey empty = core::empty_text_band_key();
  EXPECT_EQ(std::memcmp(batch.keys()[14].bytes.data(), empty.data(), 16), 0);
  EXPECT_EQ(records.counters().records, 2U);
  EXPECT_EQ(records.counters().empty_texts, 1U);
  EXPECT_EQ(records.counters().band_keys, 15U);
}

TEST(MinHashRecords, OneKeySeenBeforeMakesANearDuplicate) {
  MinHashRecords records(scheme(), core::kDefaultHashSeed);
  RoundBatch batch;
  ASSERT_EQ(records.add(batch, 0, "a", "\n", kText, false), "");
  ASSERT_EQ(records.add(batch, 0, "b", "\n", "another text entirely, six words", false), "");
  std::vector<core::Verdict> verdicts(batch.keys().size(), core::Verdict::kNew);
  verdicts[batch.first_key(1) + 13] = core::Verdict::kDuplicate;
  verdicts[batch.first_key(0) + 2] = core::Verdict::kNewAfterFalsePositive;  // still new
  EXPECT_TRUE(records.decide(batch, 0, verdicts));
  EXPECT_FALSE(records.decide(batch, 1, verdicts));
  EXPECT_EQ(records.counters().near_duplicates, 1U);
  EXPECT_EQ(records.counters().band_keys_new, 27U);
}

// With --confirm-jaccard each band key carries the record's 4-bit form
// after its 16 bytes, hashed as the band key alone; an unconfirmed hit
// keeps its record, a confirmed one removes it.
TEST(MinHashRecords, ConfirmationFormsTravelAndOnlyConfirmedHitsCount) {
  core::KeyScheme k = scheme();
  k.confirm_jaccard = 0.8;
  MinHashRecords records(k, core::kDefaultHashSeed);
  RoundBatch batch;
  ASSERT_EQ(records.add(batch, 0, "a", "\n", kText, false), "");
  ASSERT_EQ(records.add(batch, 0, "b", "\n", "another text entirely, six words", false), "");
  core::MinHashSketcher sketcher(minhash_config(scheme()));
  core::MinHashSketch sketch;
  std::string error;
  ASSERT_TRUE(sketcher.sketch(kText, sketch, error));
  const core::BbitSignature form = core::pack_bbit(sketch.signature, core::kDefaultConfirmBits);
  ASSERT_EQ(form.packed.size(), 56U);
  for (std::size_t b = 0; b < 14; ++b) {
    const core::KeyRef& key = batch.keys()[batch.first_key(0) + b];
    ASSERT_EQ(key.bytes.size(), 72U);
    EXPECT_EQ(std::memcmp(key.bytes.data(), sketch.band_keys[b].data(), 16), 0) << b;
    EXPECT_EQ(std::memcmp(key.bytes.data() + 16, form.packed.data(), 56), 0) << b;
    EXPECT_EQ(key.hash, core::hash_key(key.bytes.substr(0, 16), core::kDefaultHashSeed));
  }
  std::vector<core::Verdict> verdicts(batch.keys().size(), core::Verdict::kNew);
  verdicts[batch.first_key(0) + 3] = core::Verdict::kUnconfirmedHit;
  verdicts[batch.first_key(0) + 5] = core::Verdict::kUnconfirmedHit;
  verdicts[batch.first_key(1) + 1] = core::Verdict::kUnconfirmedHit;
  verdicts[batch.first_key(1) + 2] = core::Verdict::kDuplicate;
  EXPECT_TRUE(records.decide(batch, 0, verdicts));
  EXPECT_FALSE(records.decide(batch, 1, verdicts));
  const MinHashCounters& c = records.counters();
  EXPECT_EQ(c.near_duplicates, 1U);
  EXPECT_EQ(c.candidates, 2U);
  EXPECT_EQ(c.confirmed_hits, 1U);
  EXPECT_EQ(c.unconfirmed_hits, 3U);
  EXPECT_EQ(c.band_keys_new, 24U);
}

}  // namespace
}  // namespace bloomshard::app
