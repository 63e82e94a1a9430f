// The store's validation of untrusted metadata, one damaged value at a
// time (store/file_index.hpp, store/validate.hpp, store/key_sample.hpp):
// the header table (every attribute missing in turn, the names checked
// against this build), index bounds (counts that overflow, shapes that do
// not match, run lists out of range) and version marks (too new, missing,
// unknown). Each refusal names the file and the attribute or dataset.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/header.hpp"
#include "bloomshard/store/key_sample.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/validate.hpp"
#include "core/tier2/run_compaction.hpp"
#include "memory_source.hpp"
#include "sample_generation.hpp"

namespace bloomshard::store {
namespace {

using testing::generation;
using testing::kSlices;
using testing::MemorySource;
using testing::refusal;
using testing::run_file;

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

// The CheckpointError text of `f()`, or a marker that it passed.
template <class F>
std::string validation_error_of(F&& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- the header table ----

TEST(StoreHeaderTable, EveryRequiredRootAttributeIsNamedWhenMissing) {
  for (const char* attr :
       {ckpt::kToolVersion, ckpt::kHashScheme, ckpt::kHashSeed, ckpt::kBloomLayout,
        ckpt::kNormalization, ckpt::kKeyField, ckpt::kKeyEncoding, ckpt::kNumSlices,
        ckpt::kInitialCapacity, ckpt::kFprTarget, ckpt::kGrowth, ckpt::kTightening,
        ckpt::kGeneration, ckpt::kRunId, ckpt::kFinished, ckpt::kWrittenByRanks,
        ckpt::kNumLayers}) {
    MemorySource f = generation();
    f.erase_attr("/", attr);
    EXPECT_EQ(refusal(f), std::string("gen.h5: missing attribute /") + attr);
  }
}

TEST(StoreHeaderTable, EveryLayerAttributeIsNamedWhenMissing) {
  for (const char* attr : {ckpt::kCapacity, ckpt::kFprTarget, ckpt::kBitsPerKey, ckpt::kProbes,
                           ckpt::kBlocksPerSlice, ckpt::kInserted}) {
    MemorySource f = generation();
    f.erase_attr(layer_dataset(0), attr);
    EXPECT_EQ(refusal(f), std::string("gen.h5: missing attribute /bloom/layer_0/") + attr);
  }
}

TEST(StoreHeaderTable, EveryRequiredDatasetIsNamedWhenMissing) {
  for (const char* path : {ckpt::kManifestJson, "/bloom/layer_0", ckpt::kBloomChecksums,
                           ckpt::kRunIds, ckpt::kRunLevels, ckpt::kRunKeys, ckpt::kRunBytes}) {
    MemorySource f = generation();
    f.erase_dataset(path);
    EXPECT_EQ(refusal(f), std::string("gen.h5: missing dataset ") + path);
  }
  MemorySource f = generation();
  f.attr("/", ckpt::kNumLayers, std::uint64_t{2});  // names a layer the file lacks
  EXPECT_EQ(refusal(f), "gen.h5: missing dataset /bloom/layer_1");
}

TEST(StoreHeaderTable, TheKeySchemeIsOptionalAndReadWhenPresent) {
  MemorySource f = generation();
  EXPECT_EQ(read_generation_index(f, "gen.h5").summary.header.key_scheme, "");
  f.attr("/", ckpt::kKeyScheme, std::string("fields=a,b/v1"));
  EXPECT_EQ(read_generation_index(f, "gen.h5").summary.header.key_scheme, "fields=a,b/v1");
}

TEST(StoreHeaderTable, TheManifestChecksumAttributeIsRequiredInFormat2) {
  MemorySource f = generation();
  f.erase_attr(ckpt::kManifestJson, ckpt::kChecksum);
  EXPECT_EQ(refusal(f), "gen.h5: missing attribute /manifest_json/checksum");
  f = generation();
  f.dataset(ckpt::kManifestJson).dims = {2};
  EXPECT_EQ(refusal(f), "gen.h5: /manifest_json does not hold exactly one string");
}

// Every character of the manifest is covered: one flipped bit anywhere is
// refused, naming the dataset.
TEST(StoreHeaderTable, AFlippedManifestCharacterIsRefusedNamingIt) {
  std::string text = testing::kManifest;
  for (std::size_t c = 0; c < text.size(); ++c) {
    MemorySource f = generation();
    text[c] ^= 0x20;
    f.dataset(ckpt::kManifestJson).text = text;
    EXPECT_EQ(refusal(f).rfind("gen.h5: /manifest_json: XXH3 checksum mismatch (stored ", 0), 0U)
        << "character " << c;
    text[c] ^= 0x20;
  }
}

TEST(StoreHeaderTable, NamesOtherThanThisBuildsAreNamed) {
  CheckpointHeader h = read_generation_index(generation(), "gen.h5").summary.header;
  EXPECT_EQ(header_names_problem(h), "");
  CheckpointHeader bad = h;
  bad.hash_scheme = "xxh3-128/v2";
  EXPECT_EQ(header_names_problem(bad),
            "attribute hash_scheme 'xxh3-128/v2' differs from this build's 'xxh3-128/v1'");
  bad = h;
  bad.bloom_layout = "block256/v1";
  EXPECT_EQ(header_names_problem(bad),
            "attribute bloom_layout 'block256/v1' differs from this build's 'block512-k/v1'");
  bad = h;
  bad.key_encoding = "utf16";
  EXPECT_EQ(header_names_problem(bad),
            "attribute key_encoding 'utf16' is not one this build reads ('bytes')");
}

// ---- version marks ----

TEST(StoreVersionMarks, AFormatVersionOutsideTheReadRangeIsRefused) {
  for (const std::uint64_t v : {std::uint64_t{3}, std::uint64_t{1000}, kMax64}) {
    MemorySource f = generation();
    f.attr("/", ckpt::kFormatVersion, v);
    EXPECT_EQ(refusal(f), "gen.h5: checkpoint format_version " + std::to_string(v) +
                              " is newer than this build reads (format_version 2); use a newer "
                              "bloomshard");
  }
  MemorySource f = generation();
  f.attr("/", ckpt::kFormatVersion, std::uint64_t{0});
  EXPECT_EQ(refusal(f),
            "gen.h5: checkpoint format_version 0 is not a valid version (this build reads 1 to 2)");
}

// Format 1 (read-only): tier 2 inside the generation, no run list, a
// manifest without a checksum; the oldest version this build reads.
TEST(StoreVersionMarks, Format1IsReadWithItsOwnTier2) {
  MemorySource f = generation();
  f.attr("/", ckpt::kFormatVersion, std::uint64_t{1});
  f.erase_attr(ckpt::kManifestJson, ckpt::kChecksum);
  f.u64s(ckpt::kSliceKeys, {1, 0, 2, 0});
  f.u64s(ckpt::kSliceBytes, {4, 0, 6, 0});
  f.dataset(ckpt::kTier2Checksums).dims = {kSlices};
  f.dataset(ckpt::kFingerprints).dims = {3};
  f.dataset(ckpt::kOffsets).dims = {3 + kSlices};
  f.dataset(ckpt::kBytes).dims = {10};
  const FileIndex idx = read_generation_index(f, "gen.h5");
  EXPECT_EQ(idx.summary.header.format_version, 1U);
  EXPECT_EQ(idx.tier2.keys, 3U);
  ASSERT_EQ(idx.summary.runs.size(), 1U);
  EXPECT_EQ(idx.summary.runs[0].id, 0U);  // the file's own tier 2 is run 0
  EXPECT_EQ(idx.summary.runs[0].level, core::kLegacyRunLevel);
  EXPECT_EQ(idx.summary.runs[0].keys, 3U);
  EXPECT_EQ(idx.summary.runs[0].bytes, 10U);
  f.dataset(ckpt::kFingerprints).dims = {2};  // its own tier 2 is checked
  EXPECT_EQ(refusal(f), "gen.h5: dataset /tier2/fingerprints has shape [2], expected [3]");
}

std::string validation_refusal(const MemorySource& run) {
  CheckpointHeader h;
  h.params.num_slices = kSlices;
  return validation_error_of([&] { (void)read_run_index(run, "run.h5", h, {12, 0, 2, 20, 0}); });
}

TEST(StoreVersionMarks, ARunFileMustBeFormat2AndSayItIsARun) {
  EXPECT_EQ(validation_refusal(run_file()), "(no error)");
  for (const std::uint64_t v : {std::uint64_t{1}, std::uint64_t{3}}) {
    MemorySource run = run_file();
    run.attr("/", ckpt::kFormatVersion, v);
    EXPECT_EQ(validation_refusal(run),
              "run.h5: run file format_version " + std::to_string(v) + ", this build reads 2");
  }
  MemorySource run = run_file();
  run.erase_attr("/", ckpt::kFormatVersion);
  EXPECT_EQ(validation_refusal(run), "run.h5: not a bloomshard run file");
  run = run_file();
  run.erase_attr("/", ckpt::kContent);
  EXPECT_EQ(validation_refusal(run), "run.h5: not a tier-2 run file");
  run = run_file();
  run.attr("/", ckpt::kContent, std::string("tier2-run/v9"));
  EXPECT_EQ(validation_refusal(run), "run.h5: not a tier-2 run file");
  run = run_file();
  run.attr("/", ckpt::kNumSlices, std::uint64_t{8});
  EXPECT_EQ(validation_refusal(run), "run.h5: has 8 slices, the generation 4");
}

TEST(StoreVersionMarks, AWindowAttributeNeedsItsNormalizationMark) {
  MemorySource f = generation();
  f.attr("/", ckpt::kWindow, std::string("window=3/v1"));
  EXPECT_EQ(refusal(f),
            "gen.h5: a window attribute without the window mark in the normalization text");
  f.attr("/", ckpt::kNormalization,
         std::string("none/v1 unicode 15.0.0") + ckpt::kWindowNormalizationMark);
  f.attr("/", ckpt::kWindow, std::string("not a window"));
  EXPECT_EQ(refusal(f).rfind("gen.h5: window attribute: ", 0), 0U) << refusal(f);
}

// A windowed state: the mark, the attribute, the current slot, each
// layer's and each run's slot tag read back and checked.
MemorySource windowed_generation() {
  MemorySource f = generation();
  f.attr("/", ckpt::kNormalization,
         std::string("none/v1 unicode 15.0.0") + ckpt::kWindowNormalizationMark);
  f.attr("/", ckpt::kWindow, std::string("window/v1; slots=3; slot=run"));
  f.attr("/", ckpt::kWindowSlot, std::uint64_t{2});
  f.attr("/", ckpt::kWindowSlotProgress, std::uint64_t{5});
  f.attr(layer_dataset(0), ckpt::kSlot, std::uint64_t{2});
  f.u64s(ckpt::kRunSlots, {1, 2});
  return f;
}

TEST(StoreVersionMarks, AWindowedStateReadsAndChecksItsSlotTags) {
  const FileIndex idx = read_generation_index(windowed_generation(), "gen.h5");
  const CheckpointHeader& h = idx.summary.header;
  EXPECT_EQ(h.normalization, "none/v1 unicode 15.0.0");
  EXPECT_EQ(h.window, "window/v1; slots=3; slot=run");
  EXPECT_EQ(h.window_slot, 2U);
  EXPECT_EQ(h.window_slot_progress, 5U);
  EXPECT_EQ(idx.summary.layers.at(0).slot, 2U);
  EXPECT_EQ(idx.summary.runs.at(0).slot, 1U);
  EXPECT_EQ(idx.summary.runs.at(1).slot, 2U);

  MemorySource f = windowed_generation();
  f.u64s(ckpt::kRunSlots, {2});
  EXPECT_EQ(refusal(f), "gen.h5: /runs/slot lists 1 runs, /runs/id 2");
  f = windowed_generation();
  f.u64s(ckpt::kRunSlots, {2, 1});  // tags never decrease
  EXPECT_EQ(refusal(f).rfind("gen.h5: run ", 0), 0U) << refusal(f);
  f = windowed_generation();
  f.attr(layer_dataset(0), ckpt::kSlot, std::uint64_t{1});
  EXPECT_EQ(refusal(f), "gen.h5: the newest Bloom layer is of slot 1, not of the current slot 2");
  f = windowed_generation();
  f.erase_attr(layer_dataset(0), ckpt::kSlot);
  EXPECT_EQ(refusal(f), "gen.h5: missing attribute /bloom/layer_0/slot");
  // A windowed state may hold more layers than a plain one.
  f = windowed_generation();
  f.attr("/", ckpt::kNumLayers, std::uint64_t{65});
  EXPECT_EQ(refusal(f), "gen.h5: missing dataset /bloom/layer_1");
  f.attr("/", ckpt::kNumLayers, std::uint64_t{1025});
  EXPECT_EQ(refusal(f), "gen.h5: num_layers 1025 out of range [1, 1024]");
}

// The mark ends a policy text; a normalization that is the mark alone
// names no policy and is not read as a marked empty one.
TEST(StoreVersionMarks, ANormalizationOfTheWindowMarkAloneIsNotMarked) {
  MemorySource f = windowed_generation();
  f.attr("/", ckpt::kNormalization, std::string(ckpt::kWindowNormalizationMark));
  EXPECT_EQ(refusal(f),
            "gen.h5: a window attribute without the window mark in the normalization text");
}

TEST(StoreVersionMarks, TheSplitInputsV1MarkIsStripped) {
  MemorySource f = generation();
  f.attr("/", ckpt::kNormalization,
         std::string("none/v1 unicode 15.0.0") + ckpt::kSplitInputsNormalizationMark);
  const CheckpointHeader h = read_generation_index(f, "gen.h5").summary.header;
  EXPECT_EQ(h.normalization, "none/v1 unicode 15.0.0");
  EXPECT_TRUE(h.split_inputs);
  EXPECT_FALSE(h.retracted_records);
}

TEST(StoreVersionMarks, AnUnknownNormalizationPolicyOrUnicodeIsNamed) {
  CheckpointHeader h = read_generation_index(generation(), "gen.h5").summary.header;
  EXPECT_EQ(normalization_problem(h), "");
  h.normalization = "nfc/v9 unicode 15.0.0";
  EXPECT_EQ(normalization_problem(h),
            "attribute normalization 'nfc/v9 unicode 15.0.0' names a policy this build does not "
            "know");
  h.normalization = "nfc unicode 99.0.0";
  EXPECT_EQ(normalization_problem(h),
            "attribute normalization 'nfc unicode 99.0.0' needs unicode 99.0.0, this build has "
            "unicode " +
                std::string(core::normalization_unicode_version()));
  h.normalization = "none unicode 99.0.0";  // none does not depend on Unicode
  EXPECT_EQ(normalization_problem(h), "");
}

// ---- index bounds ----

TEST(StoreIndexBounds, SliceAndLayerCountsOutOfRangeAreRefused) {
  MemorySource f = generation();
  f.attr("/", ckpt::kNumSlices, std::uint64_t{(1U << 24) + 1});
  EXPECT_EQ(refusal(f), "gen.h5: num_slices 16777217 out of range");
  f = generation();
  f.attr("/", ckpt::kNumLayers, std::uint64_t{0});
  EXPECT_EQ(refusal(f), "gen.h5: num_layers 0 out of range [1, 64]");
  f = generation();
  f.attr("/", ckpt::kNumLayers, std::uint64_t{64});  // in range: the next check speaks
  EXPECT_EQ(refusal(f), "gen.h5: missing dataset /bloom/layer_1");
  f = generation();
  f.attr(layer_dataset(0), ckpt::kBlocksPerSlice, (std::uint64_t{1} << 40) / kSlices + 1);
  EXPECT_EQ(refusal(f), "gen.h5: /bloom/layer_0 blocks_per_slice 274877906945 out of range");
}

TEST(StoreIndexBounds, TheBloomChecksumTableHasOneValuePerLayerAndSlice) {
  MemorySource f = generation();
  f.dataset(ckpt::kBloomChecksums).dims = {1, kSlices - 1};
  EXPECT_EQ(refusal(f), "gen.h5: dataset /bloom/checksums has shape [1][3], expected [1][4]");
  f.dataset(ckpt::kBloomChecksums).dims = {2, kSlices};
  EXPECT_EQ(refusal(f), "gen.h5: dataset /bloom/checksums has shape [2][4], expected [1][4]");
}

TEST(StoreIndexBounds, PerSliceCountsThatOverflowAreRefused) {
  const std::vector<std::uint64_t> zeros{0, 0};
  EXPECT_EQ(validation_error_of([&] {
              (void)tier2_extents(std::vector<std::uint64_t>{kMax64, 1}, zeros, "f");
            }),
            "f per-slice key counts: 18446744073709551615 + 1 overflows 64 bits");
  EXPECT_EQ(validation_error_of([&] {
              (void)tier2_extents(zeros, std::vector<std::uint64_t>{1, kMax64}, "f");
            }),
            "f per-slice byte counts: 1 + 18446744073709551615 overflows 64 bits");
  // keys * 8 and (keys + P) * 8 size the fingerprints and offsets.
  EXPECT_EQ(validation_error_of([&] {
              (void)tier2_extents(std::vector<std::uint64_t>{kMax64 / 8 + 1, 0}, zeros, "f");
            }),
            "f fingerprint bytes: 2305843009213693952 * 8 overflows 64 bits");
  EXPECT_EQ(validation_error_of([&] {
              (void)tier2_extents(std::vector<std::uint64_t>{kMax64 / 8, 0}, zeros, "f");
            }),
            "f offset bytes: 2305843009213693953 * 8 overflows 64 bits");
  EXPECT_EQ(validation_error_of([&] {
              (void)tier2_extents(std::vector<std::uint64_t>{kMax64 - 1, 0}, zeros, "f");
            }),
            "f fingerprint bytes: 18446744073709551614 * 8 overflows 64 bits");
  EXPECT_EQ(
      validation_error_of([&] { (void)tier2_extents(zeros, std::vector<std::uint64_t>{0}, "f"); }),
      "f: 2 key counts but 1 byte counts");
}

TEST(StoreIndexBounds, PrefixSumsStartEachSliceWhereThePreviousEnds) {
  const Tier2Extents e =
      tier2_extents(std::vector<std::uint64_t>{2, 0, 3}, std::vector<std::uint64_t>{5, 0, 7}, "f");
  EXPECT_EQ(e.key_start, (std::vector<std::uint64_t>{0, 2, 2, 5}));
  EXPECT_EQ(e.byte_start, (std::vector<std::uint64_t>{0, 5, 5, 12}));
  EXPECT_EQ(e.keys, 5U);
  EXPECT_EQ(e.bytes, 12U);
}

TEST(StoreIndexBounds, CheckedArithmeticRefusesAtTheEdgeOnly) {
  EXPECT_EQ(checked_add(kMax64 - 1, 1, "x"), kMax64);
  EXPECT_EQ(validation_error_of([&] { (void)checked_add(kMax64, 1, "x"); }),
            "x: 18446744073709551615 + 1 overflows 64 bits");
  EXPECT_EQ(checked_mul(kMax64 / 8, 8, "y"), kMax64 / 8 * 8);
  EXPECT_EQ(validation_error_of([&] { (void)checked_mul(kMax64 / 8 + 1, 8, "y"); }),
            "y: 2305843009213693952 * 8 overflows 64 bits");
}

TEST(StoreIndexBounds, OffsetsAreCheckedFromFirstToLast) {
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{0, 2, 2, 5}, 5), "");
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{0}, 0), "");  // an empty slice
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{}, 0), "no offsets");
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{1, 2, 5}, 5), "first offset 1, not 0");
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{0, 3, 2, 5}, 5),
            "offsets decrease at key 1 (3 then 2)");
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{0, 2, 4}, 5),
            "last offset 4 != the slice's 5 key bytes");  // truncated
  EXPECT_EQ(check_offsets(std::vector<std::uint64_t>{0, 2, 6}, 5),
            "last offset 6 != the slice's 5 key bytes");  // runs into the next slice
}

// The three per-key datasets must be exactly as long as the per-slice
// counts say: a truncated or overlong index is refused before any read.
TEST(StoreIndexBounds, Tier2DatasetsMustMatchThePerSliceCounts) {
  const auto tier2_refusal = [](const MemorySource& run) {
    return validation_error_of([&] { (void)read_tier2_index(run, "run.h5", kSlices); });
  };
  EXPECT_EQ(tier2_refusal(run_file()), "(no error)");
  MemorySource run = run_file();
  run.dataset(ckpt::kFingerprints).dims = {1};
  EXPECT_EQ(tier2_refusal(run), "run.h5: dataset /tier2/fingerprints has shape [1], expected [2]");
  run = run_file();
  run.dataset(ckpt::kOffsets).dims = {2 + kSlices + 1};
  EXPECT_EQ(tier2_refusal(run), "run.h5: dataset /tier2/offsets has shape [7], expected [6]");
  run = run_file();
  run.dataset(ckpt::kBytes).dims = {19};
  EXPECT_EQ(tier2_refusal(run), "run.h5: dataset /tier2/bytes has shape [19], expected [20]");
  run = run_file();
  run.u64s(ckpt::kSliceKeys, {1, 0, 1});
  EXPECT_EQ(tier2_refusal(run), "run.h5: dataset /tier2/slice_keys has shape [3], expected [4]");
  run = run_file();
  run.dataset(ckpt::kTier2Checksums).dims = {kSlices - 1};
  EXPECT_EQ(tier2_refusal(run), "run.h5: dataset /tier2/checksums has shape [3], expected [4]");
  EXPECT_EQ(validation_error_of([&] { (void)read_tier2_checksums(run, "run.h5", kSlices); }),
            "run.h5: dataset /tier2/checksums has shape [3], expected [4]");
  run = run_file();
  run.u64s(ckpt::kSliceKeys, {1, 0, kMax64, 0});
  EXPECT_EQ(tier2_refusal(run),
            "run.h5 per-slice key counts: 1 + 18446744073709551615 overflows 64 bits");
  run = run_file();
  run.dataset(ckpt::kBytes).dims = {20, 1};  // 2-D
  EXPECT_EQ(tier2_refusal(run), "run.h5: dataset /tier2/bytes has shape [20][1], expected [20]");
}

TEST(StoreIndexBounds, TheRunListIsBounded) {
  const std::vector<std::uint64_t> one{1};
  EXPECT_EQ(validation_error_of([&] { check_run_list(one, one, one, one); }), "(no error)");
  EXPECT_EQ(validation_error_of([&] {
              check_run_list(one, std::vector<std::uint64_t>{std::uint64_t{1} << 32}, one, one);
            }),
            "/runs/level 4294967296 out of range");
  EXPECT_EQ(validation_error_of(
                [&] { check_run_list(one, std::vector<std::uint64_t>{0xffffffffULL}, one, one); }),
            "(no error)");
  const std::vector<std::uint64_t> two{1, 2}, zeros{0, 0}, huge{kMax64, 1};
  EXPECT_EQ(validation_error_of([&] { check_run_list(two, zeros, huge, zeros); }),
            "/runs/keys: 18446744073709551615 + 1 overflows 64 bits");
  EXPECT_EQ(validation_error_of([&] { check_run_list(two, zeros, zeros, huge); }),
            "/runs/bytes: 18446744073709551615 + 1 overflows 64 bits");
  EXPECT_EQ(validation_error_of([&] { check_run_list(two, one, zeros, zeros); }),
            "/runs columns differ in length");
  EXPECT_EQ(validation_error_of([&] { check_run_list(two, zeros, one, zeros); }),
            "/runs columns differ in length");
  EXPECT_EQ(validation_error_of([&] { check_run_list(two, zeros, zeros, one); }),
            "/runs columns differ in length");
  std::vector<std::uint64_t> many(kMaxRunsPerGeneration + 1, 0);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = i;
  const std::vector<std::uint64_t> zero_many(many.size(), 0);
  EXPECT_EQ(validation_error_of([&] { check_run_list(many, zero_many, zero_many, zero_many); }),
            "/runs lists 4097 runs (more than 4096)");
  many.pop_back();
  const std::vector<std::uint64_t> zero_max(many.size(), 0);
  EXPECT_EQ(validation_error_of([&] { check_run_list(many, zero_max, zero_max, zero_max); }),
            "(no error)");
}

// The bound is inclusive: a generation of exactly kMaxRunsPerGeneration
// runs is read, one more is refused.
TEST(StoreIndexBounds, ARunListOfTheMostRunsAllowedIsRead) {
  MemorySource f = generation();
  std::vector<std::uint64_t> ids(kMaxRunsPerGeneration), zeros(kMaxRunsPerGeneration, 0);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  f.u64s(ckpt::kRunIds, ids);
  f.u64s(ckpt::kRunLevels, zeros);
  f.u64s(ckpt::kRunKeys, zeros);
  f.u64s(ckpt::kRunBytes, zeros);
  EXPECT_EQ(read_generation_index(f, "gen.h5").summary.runs.size(), kMaxRunsPerGeneration);
  ids.push_back(kMaxRunsPerGeneration);
  f.u64s(ckpt::kRunIds, ids);
  EXPECT_EQ(refusal(f), "gen.h5: /runs/id lists 4097 runs (more than 4096)");
}

TEST(StoreIndexBounds, ARunListColumnIsBoundedBeforeItIsRead) {
  MemorySource f = generation();
  f.dataset(ckpt::kRunLevels).dims = {kMaxRunsPerGeneration + 1};
  EXPECT_EQ(refusal(f), "gen.h5: /runs/level lists 4097 runs (more than 4096)");
  f = generation();
  f.dataset(ckpt::kRunKeys).dims = {2, 1};
  EXPECT_EQ(refusal(f), "gen.h5: /runs/keys is not 1-D");
  f = generation();
  f.erase_group(ckpt::kRunsGroup);
  EXPECT_EQ(refusal(f), "gen.h5: missing group /runs");
  f = generation();
  f.u64s(ckpt::kRunLevels, {1, std::uint64_t{1} << 32});
  EXPECT_EQ(refusal(f), "gen.h5: /runs/level 4294967296 out of range");
}

}  // namespace
}  // namespace bloomshard::store
