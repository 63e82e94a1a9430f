// Band keys: the documented byte layout, what changes a key, the
// empty-text key.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/minhash/minhash_band_key.hpp"

namespace bloomshard::core {
namespace {

std::string band_key_hex(const BandKey& k) {
  static const char* const digits = "0123456789abcdef";
  std::string s;
  for (const auto b : k) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

TEST(MinHashBandKey, IsXxh3_128OfVersionBandAndValuesLittleEndian) {
  const std::vector<std::uint32_t> values = {0x01020304U, 0xA0B0C0D0U};
  const unsigned char bytes[] = {1, 0, 0, 0, 7, 0, 0, 0, 4, 3, 2, 1, 0xD0, 0xC0, 0xB0, 0xA0};
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(bytes, sizeof bytes));
  const BandKey key = band_key(7, values);
  EXPECT_EQ(std::memcmp(key.data(), c.digest, 16), 0);
}

TEST(MinHashBandKey, BandIndexAndEveryValueMatter) {
  std::vector<std::uint32_t> v(8);
  std::iota(v.begin(), v.end(), 100U);
  const BandKey base = band_key(0, v);
  EXPECT_NE(band_key(1, v), base);
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto w = v;
    w[i] ^= 0x80000000U;
    EXPECT_NE(band_key(0, w), base) << i;
  }
  EXPECT_EQ(band_key(0, v), base);
}

TEST(MinHashBandKey, KeysOfASignatureAreItsBandsInOrder) {
  std::vector<std::uint32_t> sig(14 * 8);
  std::iota(sig.begin(), sig.end(), 1U);
  std::vector<BandKey> keys(14);
  band_keys(sig, 14, 8, keys);
  for (std::uint32_t j = 0; j < 14; ++j) {
    EXPECT_EQ(keys[j], band_key(j, std::span<const std::uint32_t>(sig).subspan(j * 8, 8)));
  }
  std::vector<BandKey> wrong(13);
  EXPECT_THROW(band_keys(sig, 13, 8, wrong), std::invalid_argument);
}

TEST(MinHashBandKey, KnownAnswers) {
  // docs/near-duplicates.md: the empty-text key, and band 0 of all-0xFFFFFFFF
  // values, which an empty text does NOT use.
  EXPECT_EQ(band_key_hex(empty_text_band_key()), "e9a3c9f5b4f5bb3a21dfc74cf2de8edb");
  const std::vector<std::uint32_t> ones(8, 0xFFFFFFFFU);
  EXPECT_NE(band_key(0, ones), empty_text_band_key());
}

}  // namespace
}  // namespace bloomshard::core
