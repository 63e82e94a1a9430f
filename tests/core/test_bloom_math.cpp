// Tests of the FPR model and sizing (bloom_math) and of the estimates read
// back from the bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::core {
namespace {

TEST(BloomMath, ClassicBitsPerKey) {
  EXPECT_NEAR(classic_bits_per_key(0.001), 14.3776, 1e-3);
  EXPECT_NEAR(classic_bits_per_key(0.01), 9.5851, 1e-3);
  EXPECT_THROW((void)classic_bits_per_key(0.0), std::invalid_argument);
  EXPECT_THROW((void)classic_bits_per_key(1.0), std::invalid_argument);
}

TEST(BloomMath, BlockedFprIsMonotonicInBitsPerKey) {
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    double previous = 1.0;
    for (double bpk = 1.0; bpk <= 40.0; bpk += 0.25) {
      const double f = blocked_fpr(bpk, k);
      EXPECT_GT(f, 0.0);
      EXPECT_LT(f, previous) << "k " << k << " bpk " << bpk;
      previous = f;
    }
  }
  EXPECT_THROW((void)blocked_fpr(10.0, 0), std::invalid_argument);
  EXPECT_THROW((void)blocked_fpr(10.0, 17), std::invalid_argument);
  EXPECT_THROW((void)blocked_fpr(0.0, 8), std::invalid_argument);
}

TEST(BloomMath, BlockedCostsMoreThanClassic) {
  // Same bits and k: a block's uneven load makes FPR worse than the classic
  // (1 - e^{-k/bpk})^k.
  for (const double bpk : {8.0, 12.0, 16.0, 24.0}) {
    for (const std::uint32_t k : {4U, 8U, 11U}) {
      const double classic = std::pow(-std::expm1(-static_cast<double>(k) / bpk), k);
      EXPECT_GT(blocked_fpr(bpk, k), classic);
    }
  }
}

TEST(BloomMath, ChooseGeometryAtTenthPercent) {
  const BloomGeometryChoice g = choose_geometry(0.001);
  const double classic = classic_bits_per_key(0.001);
  EXPECT_LE(g.bits_per_key, 1.10 * classic);
  EXPECT_GE(g.bits_per_key, classic);
  EXPECT_NEAR(g.bits_per_key, 15.63, 1e-9);  // pinned: geometry is saved state
  EXPECT_EQ(g.k, 9U);
  EXPECT_LE(blocked_fpr(g.bits_per_key, g.k), kFprModelMargin * 0.001);
  // Minimal: one grid step less misses the goal for every k.
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    EXPECT_GT(blocked_fpr(g.bits_per_key - kBitsPerKeyStep, k), kFprModelMargin * 0.001);
  }
}

TEST(BloomMath, ChooseGeometryAcrossTargets) {
  double previous = 0.0;
  for (const double p : {0.5, 0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6}) {
    const BloomGeometryChoice g = choose_geometry(p);
    EXPECT_GT(g.bits_per_key, previous) << p;
    EXPECT_GE(g.k, kMinProbes);
    EXPECT_LE(g.k, kMaxProbes);
    EXPECT_LE(blocked_fpr(g.bits_per_key, g.k), kFprModelMargin * p);
    EXPECT_LE(g.bits_per_key, 1.40 * classic_bits_per_key(p)) << p;
    previous = g.bits_per_key;
  }
  EXPECT_THROW((void)choose_geometry(0.0), std::invalid_argument);
  EXPECT_THROW((void)choose_geometry(0.6), std::invalid_argument);
}

// choose_geometry remembers its answers: a second call gives the same
// geometry, and a NaN target (which compares equal to nothing) is still
// refused after targets were cached.
TEST(BloomMath, ChooseGeometryRemembersAndStillRefusesBadTargets) {
  const BloomGeometryChoice first = choose_geometry(0.002);
  const BloomGeometryChoice again = choose_geometry(0.002);
  EXPECT_EQ(first.k, again.k);
  EXPECT_EQ(first.bits_per_key, again.bits_per_key);
  EXPECT_THROW((void)choose_geometry(std::numeric_limits<double>::quiet_NaN()),
               std::invalid_argument);
  EXPECT_THROW((void)choose_geometry(-0.001), std::invalid_argument);
}

TEST(BloomMath, FprFromFill) {
  EXPECT_DOUBLE_EQ(expected_fpr_from_fill(0.5, 10), std::ldexp(1.0, -10));
  EXPECT_DOUBLE_EQ(expected_fpr_from_fill(0.0, 3), 0.0);
  EXPECT_DOUBLE_EQ(expected_fpr_from_fill(1.0, 16), 1.0);
  EXPECT_THROW((void)expected_fpr_from_fill(1.5, 3), std::invalid_argument);

  std::vector<std::uint64_t> words(4 * kBlockWords, 0);
  EXPECT_DOUBLE_EQ(fpr_from_block_words(words, 8), 0.0);
  for (std::size_t w = 0; w < 2 * kBlockWords; ++w) {
    words[w] = ~std::uint64_t{0};
  }
  EXPECT_DOUBLE_EQ(fpr_from_block_words(words, 8), 0.5);  // two of four blocks full
  EXPECT_EQ(count_set_bits(words), 2 * kBlockBits);
  EXPECT_DOUBLE_EQ(fpr_from_block_words({}, 8), 0.0);
  words.pop_back();
  EXPECT_THROW((void)fpr_from_block_words(words, 8), std::invalid_argument);
}

TEST(BloomMath, CardinalityFromFillIsWithinFewPercent) {
  for (const double p : {0.01, 0.001}) {
    const BloomGeometryChoice g = choose_geometry(p);
    for (const std::size_t n : {std::size_t{20'000}, std::size_t{200'000}}) {
      const auto blocks = static_cast<std::uint64_t>(
          std::ceil(static_cast<double>(n) * g.bits_per_key / static_cast<double>(kBlockBits)));
      BlockWords words(blocks * kBlockWords, 0);
      const LayerLayout layout{blocks, 1, 0, 0, g.k};
      for (std::size_t i = 0; i < n; ++i) {
        const KeyHash h = hash_key("card-" + std::to_string(i));
        block_add(words.data() + block_word_offset(layout, h), probe_bits(h), g.k);
      }
      const std::uint64_t total = blocks * kBlockBits;
      const double estimate = cardinality_from_fill(count_set_bits(words), total, g.k);
      EXPECT_NEAR(estimate / static_cast<double>(n), 1.0, 0.03) << "p " << p << " n " << n;
      // The per-block FPR estimate tracks the model at the design load.
      EXPECT_NEAR(fpr_from_block_words(words, g.k) / p, 0.95, 0.15) << "p " << p << " n " << n;
    }
  }
  EXPECT_DOUBLE_EQ(cardinality_from_fill(0, 1024, 4), 0.0);
  EXPECT_DOUBLE_EQ(cardinality_from_fill(0, 0, 4), 0.0);
  EXPECT_TRUE(std::isinf(cardinality_from_fill(1024, 1024, 4)));
  EXPECT_THROW((void)cardinality_from_fill(2, 1, 4), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::core
