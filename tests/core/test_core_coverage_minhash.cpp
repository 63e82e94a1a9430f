// MinHash edges the whole-suite coverage run found untaken
// (tests/coverage/reasons/core.txt): a band of more than 64 rows (its bytes
// built on the heap, checked against XXH3-128 of the documented layout),
// the refusals of band_keys, estimate_jaccard, the b-bit forms and the
// sketcher, an invalid text with no error slot, a code point of four bytes
// in a char shingle, and a shingle hasher of a size outside 1..64.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/minhash/minhash_band_key.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "core/minhash/minhash_sketch.hpp"
#include "core/minhash/minhash_text.hpp"
#include "core/minhash/shingle.hpp"

namespace bloomshard::core {
namespace {

// XXH3-128 (canonical bytes) of u32 LE version, u32 LE band, the values in
// u32 LE: the layout docs/near-duplicates.md gives a band key.
BandKey band_key_oracle(std::uint32_t band, const std::vector<std::uint32_t>& values) {
  std::vector<std::uint8_t> bytes;
  const auto put = [&bytes](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  put(kMinHashSchemeVersion);
  put(band);
  for (const std::uint32_t v : values) put(v);
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
  BandKey key{};
  std::memcpy(key.data(), canonical.digest, key.size());
  return key;
}

TEST(CoreCoverageMinHash, ABandOfMoreThan64RowsKeysItsWholeLayout) {
  for (const std::uint32_t rows : {64U, 65U, 200U}) {
    std::vector<std::uint32_t> values(rows);
    for (std::uint32_t i = 0; i < rows; ++i) values[i] = 0x9e3779b9U * (i + 1);
    EXPECT_EQ(band_key(3, values), band_key_oracle(3, values)) << rows << " rows";
  }
}

TEST(CoreCoverageMinHash, BandKeysRefuseAnOutputOfAnotherSize) {
  const std::vector<std::uint32_t> signature(12, 7);
  std::vector<BandKey> out(2);
  EXPECT_THROW(band_keys(signature, 3, 4, out), std::invalid_argument);
  out.resize(3);
  EXPECT_NO_THROW(band_keys(signature, 3, 4, out));
}

TEST(CoreCoverageMinHash, JaccardOfEmptyOrUnequalFormsIsRefused) {
  const std::vector<std::uint32_t> none;
  EXPECT_THROW((void)estimate_jaccard(none, none), std::invalid_argument);
  const std::vector<std::uint32_t> four{1, 2, 3, 4};
  const std::vector<std::uint32_t> eight{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_THROW((void)bbit_match_fraction(pack_bbit(four, 8), pack_bbit(eight, 8)),
               std::invalid_argument);
  const BbitSignature empty = pack_bbit(none, 8);
  EXPECT_THROW((void)bbit_match_fraction(empty, empty), std::invalid_argument);
  EXPECT_EQ(bbit_match_fraction(pack_bbit(four, 8), pack_bbit(four, 8)), 1.0);
}

TEST(CoreCoverageMinHash, SketcherRefusesZeroRows) {
  MinHashConfig c;
  c.bands = 4;
  c.rows = 0;
  try {
    MinHashSketcher sketcher(c);
    ADD_FAILURE() << "a sketcher of 0 rows made";
  } catch (const std::invalid_argument& e) {
    // Named by the bands and rows the user gave, not by the product.
    EXPECT_STREQ(e.what(), "MinHash of 4 bands x 0 rows (each at least 1, product at most 4096)");
  }
}

TEST(CoreCoverageMinHash, InvalidTextWithoutAnErrorSlotIsRefusedQuietly) {
  EXPECT_FALSE(normalize_minhash_text("ab\xff", nullptr).has_value());
  std::string error;
  EXPECT_FALSE(normalize_minhash_text("ab\xff", &error).has_value());
  EXPECT_FALSE(error.empty());
}

TEST(CoreCoverageMinHash, CharShinglesTakeFourByteCodePointsWhole) {
  const std::string grin = "\xF0\x9F\x98\x80";  // U+1F600
  const std::string text = "a" + grin + "b";
  const auto h = [](std::string_view s) {
    return XXH3_64bits_withSeed(s.data(), s.size(), kShingleHashSeed);
  };
  EXPECT_EQ(shingle_hashes({ShingleKind::kChar, 2}, text),
            (std::vector<std::uint64_t>{h("a" + grin), h(grin + "b")}));
}

TEST(CoreCoverageMinHash, ShingleHasherRefusesASizeOutsideOneTo64) {
  EXPECT_THROW(ShingleHasher({ShingleKind::kWord, 0}), std::invalid_argument);
  EXPECT_THROW(ShingleHasher({ShingleKind::kChar, kMaxShingleSize + 1}), std::invalid_argument);
  EXPECT_NO_THROW(ShingleHasher({ShingleKind::kChar, kMaxShingleSize}));
}

}  // namespace
}  // namespace bloomshard::core
