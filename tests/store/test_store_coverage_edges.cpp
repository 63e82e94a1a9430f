// The store's edges that the whole-suite coverage run found untaken
// (docs/coverage.md): a windowed generation whose Bloom layer is tagged
// with a slot newer than the current one; a run file that names another
// content, or holds the generation's key count in another number of
// bytes; confirmation forms and origins of the wrong shape, without a file
// address, or of a run without keys; a run whose slices hold no key; and
// the read-ahead hint over an empty slice range.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bloomshard/store/checksum.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/tier2_forms.hpp"
#include "bloomshard/store/tier2_slices.hpp"
#include "memory_source.hpp"
#include "sample_generation.hpp"

namespace bloomshard::store {
namespace {

namespace fs = std::filesystem;
using testing::generation;
using testing::kSlices;
using testing::MemorySource;
using testing::refusal;
using testing::run_file;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no error)";
}

// A file of `bytes` zero bytes, removed with the object.
struct TempFile {
  fs::path path;
  TempFile(const std::string& name, std::size_t bytes)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::ofstream(path, std::ios::binary) << std::string(bytes, '\0');
  }
  ~TempFile() { fs::remove(path); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

TEST(StoreCoverageEdges, ABloomLayerTaggedWithASlotNewerThanTheCurrentOneIsRefused) {
  MemorySource f = generation();
  f.attr("/", ckpt::kNormalization,
         std::string("none/v1 unicode 15.0.0") + ckpt::kWindowNormalizationMark);
  f.attr("/", ckpt::kWindow, std::string("window/v1; slots=3; slot=run"));
  f.attr("/", ckpt::kWindowSlot, std::uint64_t{2});
  f.attr("/", ckpt::kWindowSlotProgress, std::uint64_t{5});
  f.u64s(ckpt::kRunSlots, {1, 2});
  f.attr(layer_dataset(0), ckpt::kSlot, std::uint64_t{2});
  EXPECT_EQ(refusal(f), "(read without error)");
  f.attr(layer_dataset(0), ckpt::kSlot, std::uint64_t{3});
  EXPECT_EQ(refusal(f), "gen.h5: Bloom layer slot tag 3 at #0 is newer than the current slot 2");
}

// A mark ends a policy text: a normalization that is a mark alone, or
// shorter than one, is read as it is (unmarked), never stripped to nothing.
TEST(StoreCoverageEdges, ANormalizationNoLongerThanAMarkIsNotMarked) {
  for (const std::string& text : {std::string(ckpt::kInputOrderNormalizationMark),
                                  std::string(ckpt::kSplitInputsRetractedMark), std::string("x")}) {
    MemorySource f = generation();
    f.attr("/", ckpt::kNormalization, text);
    const CheckpointHeader h = read_generation_index(f, "gen.h5").summary.header;
    EXPECT_EQ(h.normalization, text);
    EXPECT_FALSE(h.input_order) << text;
    EXPECT_FALSE(h.split_inputs) << text;
    EXPECT_FALSE(h.retracted_records) << text;
  }
}

std::string run_refusal(const MemorySource& run, const CheckpointRunRef& ref) {
  CheckpointHeader h;
  h.params.num_slices = kSlices;
  return error_of([&] { (void)read_run_index(run, "run.h5", h, ref); });
}

TEST(StoreCoverageEdges, ARunFileOfAnotherContentOrOtherKeyBytesIsRefused) {
  const CheckpointRunRef ref{12, 0, 2, 20, 0};
  EXPECT_EQ(run_refusal(run_file(), ref), "(no error)");
  MemorySource run = run_file();
  run.attr("/", ckpt::kContent, std::string("generation"));
  EXPECT_EQ(run_refusal(run, ref), "run.h5: not a tier-2 run file");
  // The same key count in another number of bytes: still another run.
  EXPECT_EQ(run_refusal(run_file(), {12, 0, 2, 21, 0}),
            "run.h5: holds 2 keys of 20 bytes, the generation lists 2 keys of 21 bytes");
  EXPECT_EQ(run_refusal(run_file(), {12, 0, 3, 20, 0}),
            "run.h5: holds 2 keys of 20 bytes, the generation lists 3 keys of 20 bytes");
}

// Two slices, three keys: the index the forms are laid out by.
Tier2Index three_keys() {
  Tier2Index t;
  t.slice_keys = {2, 1};
  t.key_start = {0, 2};
  t.keys = 3;
  return t;
}

TEST(StoreCoverageEdges, FormsOrOriginsOfAnotherShapeAreRefusedNamingTheElementUnit) {
  const TempFile file("store-forms-shape", 256);
  MemorySource src;
  auto& forms = src.dataset(ckpt::kTier2Forms);
  forms.dims = {12, 1};  // 12 elements in the first dimension, but 2-D
  forms.placement = {true, 64};
  EXPECT_EQ(error_of([&] { (void)Tier2Forms(src, FileMapping::map(file.path), three_keys(), 4); }),
            "dataset /tier2/forms is not 1-D of 12 bytes (3 keys x 4 bytes of forms)");
  auto& origins = src.dataset(ckpt::kTier2FormOrigins);
  origins.dims = {5};
  origins.placement = {true, 64};
  EXPECT_EQ(error_of([&] {
              (void)Tier2Forms(src, FileMapping::map(file.path), three_keys(),
                               kFormOriginRecordBytes, kFormOriginsData);
            }),
            "dataset /tier2/form_origins is not 1-D of 6 values (3 keys x 16 bytes of form "
            "origins)");
  origins.dims = {6};
  EXPECT_EQ(error_of([&] {
              (void)Tier2Forms(src, FileMapping::map(file.path), three_keys(),
                               kFormOriginRecordBytes, kFormOriginsData);
            }),
            "(no error)");
}

TEST(StoreCoverageEdges, FormsWithoutAFileAddressAreRefusedUnlessTheRunHasNoKey) {
  const TempFile file("store-forms-address", 64);
  MemorySource src;
  auto& forms = src.dataset(ckpt::kTier2Forms);
  forms.dims = {12};
  forms.placement = {true, std::nullopt};  // HDF5 never allocated it
  EXPECT_EQ(error_of([&] { (void)Tier2Forms(src, FileMapping::map(file.path), three_keys(), 4); }),
            "dataset /tier2/forms has no file address");
  // A run without keys: an empty dataset is never allocated, and that is right.
  Tier2Index none;
  none.slice_keys = {0, 0};
  none.key_start = {0, 0};
  forms.dims = {0};
  const Tier2Forms empty(src, FileMapping::map(file.path), none, 4);
  EXPECT_TRUE(empty.view(0).empty());
  EXPECT_TRUE(empty.view(1).empty());
  EXPECT_EQ(empty.check(1, tier2_forms_checksum({}), "run.h5"), "");
}

// A run file of 2 slices that hold no key: fingerprints and key bytes are
// empty (never allocated), the offsets one 0 a slice.
TEST(StoreCoverageEdges, ARunWithoutKeysMapsNothingButItsOffsets) {
  const TempFile file("store-empty-run", 64 + 16);
  MemorySource src;
  src.u64s(ckpt::kSliceKeys, {0, 0});
  src.u64s(ckpt::kSliceBytes, {0, 0});
  src.dataset(ckpt::kTier2Checksums).dims = {2};
  src.dataset(ckpt::kFingerprints).dims = {0};
  src.dataset(ckpt::kFingerprints).placement = {true, std::nullopt};
  src.dataset(ckpt::kOffsets).dims = {2};
  src.dataset(ckpt::kOffsets).placement = {true, 64};
  src.dataset(ckpt::kBytes).dims = {0};
  src.dataset(ckpt::kBytes).placement = {true, std::nullopt};
  const Tier2Slices slices(src, FileMapping::map(file.path), read_tier2_index(src, "run.h5", 2));
  const core::SliceBaseData none{{}, {0}, {}};
  for (std::uint32_t s = 0; s < 2; ++s) {
    EXPECT_EQ(slices.view(s).size(), 0U);
    EXPECT_EQ(slices.check(s, tier2_slice_checksum(none.view()), true, "run.h5"), "");
  }
  // With keys listed, the same unallocated datasets are refused by name.
  MemorySource listed = src;
  listed.u64s(ckpt::kSliceKeys, {1, 0});
  listed.u64s(ckpt::kSliceBytes, {3, 0});
  listed.dataset(ckpt::kFingerprints).dims = {1};
  listed.dataset(ckpt::kOffsets).dims = {3};
  listed.dataset(ckpt::kBytes).dims = {3};
  EXPECT_EQ(error_of([&] {
              (void)Tier2Slices(listed, FileMapping::map(file.path),
                                read_tier2_index(listed, "run.h5", 2));
            }),
            "dataset /tier2/fingerprints has no file address");
}

// The read-ahead hint of an empty slice range touches nothing (without
// the guard, {0, 0} reads the slice index at 2^32 - 1: a crash); over
// owned slices it leaves every view as it was.
TEST(StoreCoverageEdges, TheReadAheadHintOfNoSlicesTouchesNothing) {
  std::string bytes(64 + 3 * 8 + 4 * 8 + 3, '\0');
  const std::uint64_t fps[] = {1, 5, 9};
  const std::uint64_t offs[] = {0, 1, 2, 0};  // slice 0: keys "a", "b"; slice 1: nothing
  std::memcpy(bytes.data() + 64, fps, sizeof fps);
  std::memcpy(bytes.data() + 64 + 24, offs, sizeof offs);
  const TempFile file("store-willneed", 0);
  std::ofstream(file.path, std::ios::binary) << bytes.substr(0, 64 + 24 + 32) << "ab";
  MemorySource src;
  src.u64s(ckpt::kSliceKeys, {2, 0});
  src.u64s(ckpt::kSliceBytes, {2, 0});
  src.dataset(ckpt::kTier2Checksums).dims = {2};
  src.dataset(ckpt::kFingerprints).dims = {2};
  src.dataset(ckpt::kFingerprints).placement = {true, 64};
  src.dataset(ckpt::kOffsets).dims = {4};
  src.dataset(ckpt::kOffsets).placement = {true, 64 + 24};
  src.dataset(ckpt::kBytes).dims = {2};
  src.dataset(ckpt::kBytes).placement = {true, 64 + 24 + 32};
  const Tier2Slices slices(src, FileMapping::map(file.path), read_tier2_index(src, "run.h5", 2));
  slices.advise_willneed({0, 0});
  slices.advise_willneed({1, 1});
  slices.advise_willneed({2, 2});
  slices.advise_willneed({0, 2});
  const core::SliceBaseView v = slices.view(0);
  ASSERT_EQ(v.size(), 2U);
  EXPECT_EQ(std::string(v.bytes.data(), v.bytes.size()), "ab");
  EXPECT_EQ(slices.view(1).size(), 0U);
}

}  // namespace
}  // namespace bloomshard::store
