// The scalable filter's refusals (docs/coverage.md): each parameter outside
// its documented range is refused by name, at the edge and just inside it,
// and the accessors that take a layer or a slice refuse one the filter does
// not hold instead of reading past it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::core {
namespace {

ScalableBloomParams small_params() {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.01;
  p.num_slices = 8;
  return p;
}

// The message of the std::invalid_argument layer_geometry throws, "" if none.
std::string geometry_refusal(const ScalableBloomParams& p, std::uint32_t index = 0) {
  try {
    (void)layer_geometry(p, index);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(CoreCoverageBloomParams, FprTargetOutsideZeroToHalfIsRefused) {
  ScalableBloomParams p = small_params();
  for (const double bad : {0.0, -0.1, 0.51, std::nan("")}) {
    p.fpr_target = bad;
    EXPECT_NE(geometry_refusal(p).find("FPR target"), std::string::npos) << bad;
  }
  p.fpr_target = 0.5;
  EXPECT_EQ(geometry_refusal(p), "");
}

TEST(CoreCoverageBloomParams, GrowthBelowOneOrNotFiniteIsRefused) {
  ScalableBloomParams p = small_params();
  for (const double bad : {0.99, std::nan(""), std::numeric_limits<double>::infinity()}) {
    p.growth = bad;
    EXPECT_NE(geometry_refusal(p).find("growth"), std::string::npos) << bad;
  }
  p.growth = 1.0;
  EXPECT_EQ(geometry_refusal(p), "");
}

TEST(CoreCoverageBloomParams, TighteningOutsideOpenUnitIntervalIsRefused) {
  ScalableBloomParams p = small_params();
  for (const double bad : {0.0, 1.0, std::nan("")}) {
    p.tightening = bad;
    EXPECT_NE(geometry_refusal(p).find("tightening"), std::string::npos) << bad;
  }
}

TEST(CoreCoverageBloomParams, SliceCountOutsideOneToMaxIsRefused) {
  ScalableBloomParams p = small_params();
  for (const std::uint32_t bad : {0U, kMaxSlices + 1}) {
    p.num_slices = bad;
    EXPECT_NE(geometry_refusal(p).find("slice count " + std::to_string(bad)), std::string::npos);
  }
  p.num_slices = kMaxSlices;
  EXPECT_EQ(geometry_refusal(p), "");
}

TEST(CoreCoverageBloomParams, ZeroCapacityIsRefused) {
  ScalableBloomParams p = small_params();
  p.initial_capacity = 0;
  EXPECT_NE(geometry_refusal(p).find("initial capacity"), std::string::npos);
}

TEST(CoreCoverageBloomParams, LayerCapacityPastTwoToTheSixtyTwoIsRefused) {
  ScalableBloomParams p = small_params();
  p.growth = 2.0;
  p.tightening = 0.999;  // layer 52's target stays within bits-per-key reach
  // 1000 * 2^52 < 2^62 <= 1000 * 2^53.
  EXPECT_EQ(geometry_refusal(p, 52), "");
  EXPECT_EQ(geometry_refusal(p, 53), "layer 53 capacity exceeds 2^62");
}

TEST(CoreCoverageBloomParams, LayerTooLargeInBlocksIsRefused) {
  // Capacity just under 2^62 in one slice: 2^62 blocks of 512 bits need more
  // than 512 bits per key. A block filter reaches that only between p = 1e-14
  // (422 bits per key) and the point where no geometry meets p (1e-18).
  ScalableBloomParams p = small_params();
  p.initial_capacity = 4'600'000'000'000'000'000;
  p.num_slices = 1;
  p.fpr_target = 1e-16;
  const std::string refusal = geometry_refusal(p);
  EXPECT_EQ(refusal, "layer 0 is too large");
}

TEST(CoreCoverageBloomParams, AccessorsRefuseALayerOrSliceNotHeld) {
  ScalableBloom filter(small_params(), SliceRange{2, 4});
  ASSERT_EQ(filter.num_layers(), 1U);
  EXPECT_EQ(filter.slice_words(0, 2).size(), filter.slice_words(0, 3).size());
  EXPECT_THROW((void)filter.slice_words(0, 1), std::out_of_range);  // below the range
  EXPECT_THROW((void)filter.slice_words(0, 4), std::out_of_range);  // past the range
  EXPECT_THROW((void)filter.slice_words(1, 2), std::out_of_range);  // no such layer
  EXPECT_THROW(filter.set_layer_inserted(1, 5), std::out_of_range);
  filter.set_layer_inserted(0, 5);
  EXPECT_EQ(filter.layer_stats(0).inserted, 5U);
}

TEST(CoreCoverageBloomParams, QueryBatchRefusesAShortOutput) {
  ScalableBloom filter(small_params(), SliceRange{0, 8});
  const std::vector<KeyHash> hashes = {hash_key("a"), hash_key("b")};
  std::vector<std::uint8_t> out(1);
  EXPECT_THROW(filter.query_batch(hashes, out), std::invalid_argument);
  out.resize(2);
  filter.insert_batch(std::span<const KeyHash>(hashes).first(1));
  filter.query_batch(hashes, out);
  EXPECT_EQ(out[0], 1);
}

// A layer whose bits fit the block count but not the address space (one
// slice of 2^61 keys at ~60+ bits per key: past SIZE_MAX / 8 words) is
// refused by name before any allocation, not sized by a wrapped product.
TEST(CoreCoverageBloomParams, LayerPastTheAddressSpaceIsRefusedBeforeAllocating) {
  ScalableBloomParams p = small_params();
  p.initial_capacity = std::uint64_t{1} << 61;
  p.num_slices = 1;
  p.fpr_target = 1e-15;
  ASSERT_EQ(geometry_refusal(p), "");  // the layer's own geometry is in range
  try {
    ScalableBloom filter(p, SliceRange{0, 1});
    ADD_FAILURE() << "a layer of " << filter.layer_geometry(0).blocks_per_slice << " blocks made";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "layer 0 does not fit in memory");
  }
}

// A target no probe count reaches within kMaxBitsPerKey is refused, by the
// geometry search and by a layer that asks for it (a deep layer's
// tightened target), not answered with a geometry of 0 probes.
TEST(CoreCoverageBloomParams, ATargetBeyondTheBitsPerKeyLimitIsRefused) {
  try {
    (void)choose_geometry(1e-30);
    ADD_FAILURE() << "a target of 1e-30 got a geometry";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "FPR target 1e-30 needs more than 1000 bits per key");
  }
  ScalableBloomParams p = small_params();
  p.fpr_target = 1e-25;
  EXPECT_NE(geometry_refusal(p).find("bits per key"), std::string::npos) << geometry_refusal(p);
}

TEST(CoreCoverageBloomParams, FprModelsRefuseInfiniteBitsAndFillsOutsideTheUnitInterval) {
  EXPECT_THROW((void)blocked_fpr(std::numeric_limits<double>::infinity(), 8),
               std::invalid_argument);
  for (const double bad : {-0.25, 1.25, std::nan("")}) {
    EXPECT_THROW((void)expected_fpr_from_fill(bad, 8), std::invalid_argument) << bad;
  }
  EXPECT_EQ(expected_fpr_from_fill(0.5, 2), 0.25);
}

// A rank that owns no slice holds no bits: its fill is 0, not 0 / 0.
TEST(CoreCoverageBloomParams, StatsOfAnEmptySliceRangeAreZero) {
  const ScalableBloom filter(small_params(), SliceRange{3, 3});
  const BloomLayerStats s = filter.layer_stats(0);
  EXPECT_EQ(s.fill_ratio, 0.0);
  EXPECT_FALSE(std::isnan(s.fpr_estimate));
}

}  // namespace
}  // namespace bloomshard::core
