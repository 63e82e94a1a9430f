// The index reader (store/file_index.hpp) over an in-memory file: the header
// table read back whole, and each damaged or missing value refused with a
// message that names the file and the attribute or dataset.
#include <gtest/gtest.h>

#include <string>

#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"
#include "memory_source.hpp"
#include "sample_generation.hpp"

namespace bloomshard::store {
namespace {

using testing::generation;
using testing::kManifest;
using testing::kSlices;
using testing::MemorySource;
using testing::refusal;
using testing::run_file;

TEST(StoreFileIndex, ReadsTheHeaderTableLayersAndRuns) {
  const FileIndex idx = read_generation_index(generation(), "gen.h5");
  const CheckpointHeader& h = idx.summary.header;
  EXPECT_EQ(h.format_version, 2U);
  EXPECT_EQ(h.tool_version, "0.test");
  EXPECT_EQ(h.hash_seed, 42U);
  EXPECT_EQ(h.normalization, "none/v1 unicode 15.0.0");
  EXPECT_EQ(h.key_field, "id");
  EXPECT_EQ(h.params.num_slices, kSlices);
  EXPECT_EQ(h.params.initial_capacity, 1000U);
  EXPECT_DOUBLE_EQ(h.params.tightening, 0.5);
  EXPECT_EQ(h.generation, 7U);
  EXPECT_EQ(h.run_id, "run-a");
  EXPECT_TRUE(h.finished);
  EXPECT_FALSE(h.split_inputs);
  EXPECT_EQ(h.manifest_json, kManifest);
  EXPECT_EQ(idx.summary.written_by_ranks, 3U);
  ASSERT_EQ(idx.summary.layers.size(), 1U);
  EXPECT_EQ(idx.summary.layers[0].geometry.k, 7U);
  EXPECT_EQ(idx.summary.layers[0].inserted, 5U);
  ASSERT_EQ(idx.summary.runs.size(), 2U);
  EXPECT_EQ(idx.summary.runs[1], (CheckpointRunRef{12, 0, 2, 20, 0}));
  EXPECT_EQ(idx.summary.tier2_keys, 5U);
  EXPECT_EQ(idx.summary.tier2_bytes, 50U);
}

TEST(StoreFileIndex, NamesAMissingAttribute) {
  MemorySource f = generation();
  f.erase_attr("/", ckpt::kHashSeed);
  EXPECT_EQ(refusal(f), "gen.h5: missing attribute /hash_seed");
  f = generation();
  f.erase_attr(layer_dataset(0), ckpt::kProbes);
  EXPECT_EQ(refusal(f), "gen.h5: missing attribute /bloom/layer_0/k");
}

TEST(StoreFileIndex, RefusesVersionsItDoesNotRead) {
  MemorySource f = generation();
  f.attr("/", ckpt::kFormatVersion, std::uint64_t{3});
  EXPECT_EQ(refusal(f),
            "gen.h5: checkpoint format_version 3 is newer than this build reads "
            "(format_version 2); use a newer bloomshard");
  f.attr("/", ckpt::kFormatVersion, std::uint64_t{0});
  EXPECT_NE(refusal(f).find("format_version 0 is not a valid version"), std::string::npos);
  f.erase_attr("/", ckpt::kFormatVersion);
  EXPECT_EQ(refusal(f), "gen.h5: not a bloomshard checkpoint (no format_version attribute)");
}

TEST(StoreFileIndex, RefusesARunFileOpenedAsAGeneration) {
  MemorySource f = generation();
  f.attr("/", ckpt::kContent, std::string(ckpt::kContentRun));
  EXPECT_EQ(refusal(f), "gen.h5: a tier-2 run file, not a generation (open ckpt-<g>.h5)");
}

TEST(StoreFileIndex, RefusesOutOfRangeCounts) {
  MemorySource f = generation();
  f.attr("/", ckpt::kNumSlices, std::uint64_t{0});
  EXPECT_EQ(refusal(f), "gen.h5: num_slices 0 out of range");
  f = generation();
  f.attr("/", ckpt::kNumLayers, std::uint64_t{65});
  EXPECT_EQ(refusal(f), "gen.h5: num_layers 65 out of range [1, 64]");
  f = generation();
  f.attr(layer_dataset(0), ckpt::kBlocksPerSlice, std::uint64_t{0});
  EXPECT_EQ(refusal(f), "gen.h5: /bloom/layer_0 blocks_per_slice 0 out of range");
}

TEST(StoreFileIndex, ADamagedManifestFailsItsChecksum) {
  MemorySource f = generation();
  f.dataset(ckpt::kManifestJson).text = R"({"inputs":[1]})";
  EXPECT_NE(refusal(f).find("gen.h5: /manifest_json: XXH3 checksum mismatch (stored "),
            std::string::npos);
  f.dataset(ckpt::kManifestJson).text.reset();  // a variable-length string, say
  EXPECT_EQ(refusal(f), "gen.h5: /manifest_json is not a fixed-length string");
}

TEST(StoreFileIndex, AShapeOtherThanTheAttributesImplyNamesThem) {
  MemorySource f = generation();
  f.attr(layer_dataset(0), ckpt::kBlocksPerSlice, std::uint64_t{2});
  EXPECT_EQ(refusal(f),
            "gen.h5: dataset /bloom/layer_0 has shape [32], expected [64] (attribute num_slices "
            "4 x /bloom/layer_0 attribute blocks_per_slice 2 x 8 words): the attributes or the "
            "dataset are damaged");
  f = generation();
  f.dataset(layer_dataset(0)).storage = 8;  // declared, not stored
  EXPECT_EQ(refusal(f), "gen.h5: /bloom/layer_0 holds 8 bytes, its shape needs 256");
}

TEST(StoreFileIndex, RefusesABrokenRunList) {
  MemorySource f = generation();
  f.u64s(ckpt::kRunIds, {11, 11});
  EXPECT_EQ(refusal(f), "gen.h5: /runs/id lists a run twice");
  f = generation();
  f.u64s(ckpt::kRunKeys, {3});
  EXPECT_EQ(refusal(f), "gen.h5: /runs columns differ in length");
}

TEST(StoreFileIndex, StripsTheSplitInputsMarks) {
  MemorySource f = generation();
  f.attr("/", ckpt::kNormalization,
         std::string("none/v1 unicode 15.0.0") + ckpt::kSplitInputsRetractedMark);
  const CheckpointHeader h = read_generation_index(f, "gen.h5").summary.header;
  EXPECT_EQ(h.normalization, "none/v1 unicode 15.0.0");
  EXPECT_TRUE(h.split_inputs);
  EXPECT_TRUE(h.retracted_records);
}

TEST(StoreFileIndex, AWindowMarkNeedsTheWindowAttribute) {
  MemorySource f = generation();
  f.attr("/", ckpt::kNormalization,
         std::string("none/v1 unicode 15.0.0") + ckpt::kWindowNormalizationMark);
  EXPECT_EQ(refusal(f),
            "gen.h5: normalization 'none/v1 unicode 15.0.0 window/v1' marks a window, but there "
            "is no window attribute");
}

TEST(StoreFileIndex, RunFileMustBeTheRunTheGenerationNames) {
  const MemorySource run = run_file();
  CheckpointHeader h;
  h.params.num_slices = kSlices;
  const Tier2Index t = read_run_index(run, "run.h5", h, {12, 0, 2, 20, 0});
  EXPECT_EQ(t.key_start, (std::vector<std::uint64_t>{0, 1, 1, 2, 2}));
  EXPECT_EQ(t.byte_start, (std::vector<std::uint64_t>{0, 10, 10, 20, 20}));
  try {
    (void)read_run_index(run, "run.h5", h, {13, 0, 2, 20, 0});
    ADD_FAILURE() << "another run's file was read";
  } catch (const CheckpointError& e) {
    EXPECT_STREQ(e.what(), "run.h5: holds run 12, the generation names 13");
  }
  try {
    (void)read_run_index(run, "run.h5", h, {12, 0, 3, 20, 0});
    ADD_FAILURE() << "a run of other totals was read";
  } catch (const CheckpointError& e) {
    EXPECT_STREQ(e.what(),
                 "run.h5: holds 2 keys of 20 bytes, the generation lists 3 keys of 20 bytes");
  }
}

}  // namespace
}  // namespace bloomshard::store
