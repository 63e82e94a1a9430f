// Slice ownership: slices_of_rank and owner_of_slice are exact inverses for
// many (P, R), ranges tile [0, P) with sizes differing by at most one, bad
// geometry is refused, and key hashes spread evenly over slices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

void check_partition(std::uint32_t num_slices, std::uint32_t num_ranks) {
  SCOPED_TRACE(numbered("P=", num_slices) + numbered(" R=", num_ranks));
  std::uint32_t expected_first = 0;
  const std::uint32_t small = num_slices / num_ranks;
  for (std::uint32_t r = 0; r < num_ranks; ++r) {
    const SliceRange range = slices_of_rank(r, num_ranks, num_slices);
    ASSERT_EQ(range.first, expected_first);
    ASSERT_GE(range.size(), small);
    ASSERT_LE(range.size(), small + 1);
    for (std::uint32_t s = range.first; s < range.last; ++s) {
      ASSERT_EQ(owner_of_slice(s, num_ranks, num_slices), r) << "slice " << s;
      ASSERT_TRUE(range.contains(s));
    }
    expected_first = range.last;
  }
  ASSERT_EQ(expected_first, num_slices);
}

TEST(SliceMap, OwnerIsInverseOfRangesExhaustive) {
  for (const std::uint32_t p : {1U, 2U, 3U, 5U, 7U, 8U, 64U, 100U, 127U, 4096U, 4097U, 10007U}) {
    for (std::uint32_t r = 1; r <= p && r <= 70; ++r) check_partition(p, r);
    check_partition(p, p);
    if (p > 1) check_partition(p, p - 1);
  }
}

TEST(SliceMap, LargestSliceCountHasNoOverflow) {
  for (const std::uint32_t r : {1U, 3U, 1000U, 65537U}) check_partition(kMaxSlices, r);
  check_partition(kMaxSlices, kMaxSlices);
}

TEST(SliceMap, RefusesBadGeometry) {
  EXPECT_THROW((void)slices_of_rank(0, 1, 0), std::invalid_argument);
  EXPECT_THROW((void)slices_of_rank(0, 1, kMaxSlices + 1), std::invalid_argument);
  EXPECT_THROW((void)slices_of_rank(0, 0, 16), std::invalid_argument);
  EXPECT_THROW((void)slices_of_rank(0, 17, 16), std::invalid_argument);  // P < R
  EXPECT_THROW((void)slices_of_rank(4, 4, 16), std::invalid_argument);   // rank >= R
  EXPECT_THROW((void)owner_of_slice(16, 4, 16), std::invalid_argument);  // slice >= P
  EXPECT_THROW((void)owner_of_slice(0, 5, 4), std::invalid_argument);
  EXPECT_THROW((void)owner_of_slice(0, 0, 4), std::invalid_argument);
  try {
    (void)slices_of_rank(0, 17, 16);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("17"), std::string::npos) << e.what();
  }
}

TEST(SliceMap, SliceOfCoversRangeEnds) {
  EXPECT_EQ(slice_of(KeyHash{0, 0}, 4096), 0U);
  EXPECT_EQ(slice_of(KeyHash{~0ULL, 0}, 4096), 4095U);
  EXPECT_EQ(slice_of(KeyHash{~0ULL, 0}, 1), 0U);
  EXPECT_EQ(slice_of(KeyHash{1ULL << 63, 0}, 2), 1U);
  EXPECT_EQ(slice_of(KeyHash{(1ULL << 63) - 1, 0}, 2), 0U);
  EXPECT_EQ(slice_of(KeyHash{~0ULL, 0}, kMaxSlices), kMaxSlices - 1);
}

// Chi-square of 2^18 fixed keys over P slices. Deterministic (fixed keys and
// seed); the bound is mean + 6 sigma of the chi-square with P-1 degrees of
// freedom, far beyond chance yet tight enough to catch a skewed mapping.
void check_uniform(std::uint32_t num_slices) {
  constexpr std::uint32_t kKeys = 1U << 18;
  std::vector<std::uint32_t> counts(num_slices, 0);
  for (std::uint32_t i = 0; i < kKeys; ++i) {
    ++counts[slice_of(hash_key(numbered("https://example.org/doc/", i)), num_slices)];
  }
  const double expected = static_cast<double>(kKeys) / num_slices;
  double chi2 = 0;
  for (const std::uint32_t c : counts) {
    const double d = c - expected;
    chi2 += d * d / expected;
  }
  const double df = num_slices - 1.0;
  EXPECT_LT(chi2, df + 6.0 * std::sqrt(2.0 * df)) << "P=" << num_slices;
  EXPECT_GT(chi2, df - 6.0 * std::sqrt(2.0 * df)) << "P=" << num_slices << " (too regular)";
}

TEST(SliceMap, KeysSpreadUniformlyOverSlices) {
  for (const std::uint32_t p : {7U, 64U, 4096U}) check_uniform(p);
}

TEST(DefaultNumSlices, SmallJobsKeep4096AndLargeOnesScale) {
  EXPECT_EQ(default_num_slices(1, 100'000), 4096U);
  EXPECT_EQ(default_num_slices(32, 1'000'000'000), 16384U);  // capacity / 65536 = 15259
  EXPECT_EQ(default_num_slices(16384, 1'000'000), 1U << 21);
  EXPECT_EQ(default_num_slices(4, 10'000'000'000ULL), 1U << 18);
  EXPECT_EQ(default_num_slices(1U << 20, 1), kMaxSlices);  // capped
  EXPECT_EQ(default_num_slices(1, ~0ULL), kMaxSlices);
}

TEST(DefaultNumSlices, SkewBetweenRanksStaysUnderOnePercent) {
  for (const std::uint32_t ranks : {3U, 7U, 100U, 1000U, 5000U, 16384U, 20000U}) {
    const std::uint32_t p = default_num_slices(ranks, 1'000'000);
    std::uint32_t fewest = p;
    std::uint32_t most = 0;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const std::uint32_t n = slices_of_rank(r, ranks, p).size();
      fewest = std::min(fewest, n);
      most = std::max(most, n);
    }
    EXPECT_LE(static_cast<double>(most - fewest) / fewest, 0.01) << ranks << " ranks, P = " << p;
  }
}

}  // namespace
}  // namespace bloomshard::core
