// Slice views over a run's tier 2 (store/tier2_slices.hpp): a small run
// written as bytes into a temp file at the addresses its source reports,
// read back through a real mapping; damaged bytes, damaged placement and a
// truncated file each give a problem naming file, slice and dataset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/store/checksum.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/tier2_slices.hpp"
#include "memory_source.hpp"

namespace bloomshard::store {
namespace {

namespace fs = std::filesystem;
using testing::MemorySource;

// Where the run puts each dataset in its file.
constexpr std::uint64_t kFpsAt = 64, kOffsAt = 128, kBytesAt = 192;

// Two slices: slice 0 holds "a" (fingerprint 1) and "bb" (5), slice 1
// holds "ccc" (3).
struct SmallRun {
  std::vector<std::uint64_t> fps{1, 5, 3};
  std::vector<std::uint64_t> offs{0, 1, 3, 0, 3};  // slice-local, keys + P values
  std::string bytes = "abbccc";
  fs::path path;
  MemorySource src;

  explicit SmallRun(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".run")) {
    src.u64s(ckpt::kSliceKeys, {2, 1});
    src.u64s(ckpt::kSliceBytes, {3, 3});
    src.dataset(ckpt::kTier2Checksums).dims = {2};
    place(ckpt::kFingerprints, 3, kFpsAt);
    place(ckpt::kOffsets, 5, kOffsAt);
    place(ckpt::kBytes, 6, kBytesAt);
    write();
  }
  ~SmallRun() { fs::remove(path); }
  void place(const char* name, std::uint64_t n, std::uint64_t at) {
    auto& d = src.dataset(name);
    d.dims = {n};
    d.placement = {true, at};
  }
  // The file as the datasets say, `cut` bytes short.
  void write(std::uint64_t cut = 0) const {
    std::string file(kBytesAt + bytes.size(), '\0');
    std::memcpy(file.data() + kFpsAt, fps.data(), fps.size() * 8);
    std::memcpy(file.data() + kOffsAt, offs.data(), offs.size() * 8);
    std::memcpy(file.data() + kBytesAt, bytes.data(), bytes.size());
    file.resize(file.size() - cut);
    std::ofstream(path, std::ios::binary) << file;
  }
  [[nodiscard]] Tier2Slices slices() const {
    return {src, FileMapping::map(path), read_tier2_index(src, "run.h5", 2)};
  }
  // The checksum a writer stores for slice s of the intact run.
  [[nodiscard]] std::uint64_t good_checksum(std::uint32_t s) const {
    core::SliceBaseData d;
    if (s == 0) {
      d = {{1, 5}, {0, 1, 3}, {'a', 'b', 'b'}};
    } else {
      d = {{3}, {0, 3}, {'c', 'c', 'c'}};
    }
    return tier2_slice_checksum(d.view());
  }
};

TEST(StoreTier2Slices, ViewsEachSliceInPlace) {
  const SmallRun run("views");
  const Tier2Slices t = run.slices();
  const core::SliceBaseView s0 = t.view(0);
  ASSERT_EQ(s0.size(), 2U);
  EXPECT_EQ(s0.key(0), "a");
  EXPECT_EQ(s0.key(1), "bb");
  EXPECT_TRUE(s0.contains(5, "bb"));
  EXPECT_FALSE(s0.contains(5, "b"));
  EXPECT_EQ(t.view(1).key(0), "ccc");
  EXPECT_EQ(t.check(0, run.good_checksum(0), true, "run.h5"), "");
  EXPECT_EQ(t.check(1, run.good_checksum(1), true, "run.h5"), "");
}

TEST(StoreTier2Slices, ADamagedKeyByteFailsTheChecksum) {
  SmallRun run("damaged");
  run.bytes[1] = 'x';  // slice 0's second key
  run.write();
  const Tier2Slices t = run.slices();
  const std::string p = t.check(0, run.good_checksum(0), true, "run.h5");
  EXPECT_EQ(p.rfind("run.h5 tier-2 slice 0: XXH3 checksum mismatch over /tier2/fingerprints, "
                    "/tier2/offsets, /tier2/bytes (stored ",
                    0),
            0U)
      << p;
  EXPECT_EQ(t.check(1, run.good_checksum(1), true, "run.h5"), "");  // the other slice holds
  // The quick check (offsets only) does not read the key bytes.
  EXPECT_EQ(t.check(0, run.good_checksum(0), false, "run.h5"), "");
}

// Every byte of slice 0 in each of the three checksummed datasets, one at
// a time: each flip is refused by the full check as a checksum mismatch of
// slice 0 (naming the three datasets), never read as a good slice, and the
// other slice still holds.
TEST(StoreTier2Slices, AFlippedByteInEachChecksummedDatasetIsRefused) {
  SmallRun run("flips");
  const std::string refused =
      "run.h5 tier-2 slice 0: XXH3 checksum mismatch over /tier2/fingerprints, "
      "/tier2/offsets, /tier2/bytes (stored ";
  const auto check_flips = [&](const char* dataset, auto& values, std::size_t slice0_bytes) {
    auto* raw = reinterpret_cast<unsigned char*>(values.data());
    for (std::size_t b = 0; b < slice0_bytes; ++b) {
      raw[b] ^= 0x10;
      run.write();
      const Tier2Slices t = run.slices();
      const std::string p = t.check(0, run.good_checksum(0), true, "run.h5");
      EXPECT_EQ(p.rfind(refused, 0), 0U) << dataset << " byte " << b << ": " << p;
      EXPECT_EQ(t.check(1, run.good_checksum(1), true, "run.h5"), "") << dataset << " byte " << b;
      raw[b] ^= 0x10;
    }
  };
  check_flips(ckpt::kFingerprints, run.fps, 2 * 8);  // slice 0: 2 fingerprints
  check_flips(ckpt::kOffsets, run.offs, 3 * 8);      // 2 keys + 1 offsets
  check_flips(ckpt::kBytes, run.bytes, 3);           // "abb"
  run.write();
  EXPECT_EQ(run.slices().check(0, run.good_checksum(0), true, "run.h5"), "");
}

// The stored checksum is what is compared: a damaged stored value is a
// mismatch, not a pass.
TEST(StoreTier2Slices, ADamagedStoredChecksumIsAMismatch) {
  const SmallRun run("stored");
  const std::string p = run.slices().check(1, run.good_checksum(1) ^ 1, true, "run.h5");
  EXPECT_EQ(p.rfind("run.h5 tier-2 slice 1: XXH3 checksum mismatch", 0), 0U) << p;
}

// The Bloom and manifest checksums see every byte: one flipped bit in any
// word (or character) changes them.
TEST(StoreChecksum, EveryFlippedBitChangesTheBloomAndManifestChecksums) {
  std::vector<std::uint64_t> words(16);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = i * 0x9e3779b97f4a7c15ULL;
  const std::uint64_t good = bloom_slice_checksum(words);
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (int bit = 0; bit < 64; bit += 7) {
      words[w] ^= std::uint64_t{1} << bit;
      EXPECT_NE(bloom_slice_checksum(words), good) << "word " << w << " bit " << bit;
      words[w] ^= std::uint64_t{1} << bit;
    }
  }
  EXPECT_NE(bloom_slice_checksum(std::span(words).first(15)), good);  // a word short
  std::string text = R"({"inputs":[{"path":"a"}]})";
  const std::uint64_t manifest = manifest_checksum(text);
  for (std::size_t c = 0; c < text.size(); ++c) {
    text[c] ^= 0x01;
    EXPECT_NE(manifest_checksum(text), manifest) << "character " << c;
    text[c] ^= 0x01;
  }
}

// The three datasets are one stream in a fixed order: the same values
// moved from the key bytes into a fingerprint do not checksum alike.
TEST(StoreChecksum, Tier2ChecksumCoversEachDatasetInItsPlace) {
  const core::SliceBaseData a{{1}, {0, 1}, {'a'}};
  const core::SliceBaseData b{{1}, {0, 1}, {'b'}};
  const core::SliceBaseData c{{2}, {0, 1}, {'a'}};
  const core::SliceBaseData d{{1}, {0, 0}, {'a'}};
  EXPECT_NE(tier2_slice_checksum(a.view()), tier2_slice_checksum(b.view()));
  EXPECT_NE(tier2_slice_checksum(a.view()), tier2_slice_checksum(c.view()));
  EXPECT_NE(tier2_slice_checksum(a.view()), tier2_slice_checksum(d.view()));
}

TEST(StoreTier2Slices, KeysOutOfOrderAreRefusedEvenWithAMatchingChecksum) {
  SmallRun run("order");
  run.fps = {5, 1, 3};  // slice 0's fingerprints descend
  run.write();
  const Tier2Slices t = run.slices();
  core::SliceBaseData d{{5, 1}, {0, 1, 3}, {'a', 'b', 'b'}};
  const std::string p = t.check(0, tier2_slice_checksum(d.view()), true, "run.h5");
  EXPECT_EQ(p.rfind("run.h5 tier-2 slice 0: ", 0), 0U) << p;
  EXPECT_EQ(p.find("checksum"), std::string::npos) << p;
}

TEST(StoreTier2Slices, BadOffsetsAreCaughtByTheQuickCheck) {
  SmallRun run("offsets");
  run.offs = {0, 4, 3, 0, 3};  // slice 0 decreases
  run.write();
  const std::string p = run.slices().check(0, 0, false, "run.h5");
  EXPECT_EQ(p, "run.h5 tier-2 slice 0: /tier2/offsets: offsets decrease at key 1 (4 then 3)");
}

TEST(StoreTier2Slices, ATruncatedFileIsNamedNotRead) {
  const SmallRun run("truncated");
  run.write(2);  // the last two key bytes are gone
  const Tier2Slices t = run.slices();
  EXPECT_EQ(t.check(0, run.good_checksum(0), true, "run.h5"), "");
  const std::string p = t.check(1, run.good_checksum(1), true, "run.h5");
  EXPECT_EQ(p,
            "run.h5 tier-2 slice 1: /tier2/bytes lies beyond the end of the file (offset 195 + 3 "
            "> 196 bytes): the file is truncated");
  EXPECT_THROW((void)t.view(1), CheckpointError);
}

// A truncation that reaches the offsets of slice 1 (the key bytes moved
// past them) names /tier2/offsets; the quick check names it too.
TEST(StoreTier2Slices, ATruncatedOffsetsDatasetIsNamed) {
  SmallRun run("cut-offsets");
  run.place(ckpt::kBytes, 6, 0);  // bytes first, so the offsets end the file
  std::string file(kOffsAt + run.offs.size() * 8, '\0');
  std::memcpy(file.data(), run.bytes.data(), run.bytes.size());
  std::memcpy(file.data() + kFpsAt, run.fps.data(), run.fps.size() * 8);
  std::memcpy(file.data() + kOffsAt, run.offs.data(), run.offs.size() * 8);
  file.resize(file.size() - 1);
  std::ofstream(run.path, std::ios::binary | std::ios::trunc) << file;
  const Tier2Slices t = run.slices();
  EXPECT_EQ(t.check(0, run.good_checksum(0), true, "run.h5"), "");
  const std::string p = t.check(1, 0, false, "run.h5");
  EXPECT_EQ(p.rfind("run.h5 tier-2 slice 1: /tier2/offsets lies beyond the end of the file", 0), 0U)
      << p;
}

// Offsets that reach into the next slice's bytes, or stop short of the
// slice's own, are refused by the quick check (what keeps lookups inside
// the slice).
TEST(StoreTier2Slices, OffsetsMustSpanTheirSliceExactly) {
  SmallRun run("span");
  run.offs = {0, 1, 4, 0, 3};  // slice 0 claims 4 of its 3 bytes
  run.write();
  EXPECT_EQ(run.slices().check(0, 0, false, "run.h5"),
            "run.h5 tier-2 slice 0: /tier2/offsets: last offset 4 != the slice's 3 key bytes");
  run.offs = {1, 1, 3, 0, 3};  // slice 0 starts inside its first key
  run.write();
  EXPECT_EQ(run.slices().check(0, 0, false, "run.h5"),
            "run.h5 tier-2 slice 0: /tier2/offsets: first offset 1, not 0");
  run.offs = {0, 1, 3, 0, 2};  // slice 1 stops short
  run.write();
  EXPECT_EQ(run.slices().check(1, 0, false, "run.h5"),
            "run.h5 tier-2 slice 1: /tier2/offsets: last offset 2 != the slice's 3 key bytes");
}

TEST(StoreTier2Slices, RefusesDatasetsItCannotMap) {
  SmallRun run("placement");
  run.src.dataset(ckpt::kOffsets).placement = {true, kOffsAt + 4};
  try {
    (void)run.slices();
    ADD_FAILURE() << "an unaligned dataset was mapped";
  } catch (const CheckpointError& e) {
    EXPECT_STREQ(e.what(), "dataset /tier2/offsets is not 8-byte aligned in the file");
  }
  run.src.dataset(ckpt::kOffsets).placement = {false, kOffsAt};
  EXPECT_THROW((void)run.slices(), CheckpointError);
  run.src.dataset(ckpt::kOffsets).placement = {true, std::nullopt};
  EXPECT_THROW((void)run.slices(), CheckpointError);
}

}  // namespace
}  // namespace bloomshard::store
