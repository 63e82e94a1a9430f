// When the rounds open the next Bloom layer: after a round whose agreed
// count fills the newest layer (the compound FPR bound holds only if no
// layer takes more keys than its capacity), and how many keys a sub-round
// may decide when the layer is smaller than the rounding slack.
#include <gtest/gtest.h>

#include "app/round/layer_growth.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::app {
namespace {

constexpr std::uint32_t kSlices = 64;

core::TwoTierSet set_of_capacity(std::uint64_t capacity) {
  core::ScalableBloomParams p;
  p.initial_capacity = capacity;
  p.fpr_target = 0.01;
  p.num_slices = kSlices;
  return core::TwoTierSet(p, {0, kSlices});
}

TEST(LayerGrowthCoverage, ARoundThatFillsTheNewestLayerOpensTheNextOne) {
  core::TwoTierSet set = set_of_capacity(1000);
  LayerGrowth growth(2, 0);
  const std::uint64_t capacity = set.bloom().layer_geometry(0).capacity;
  growth.after_round(set, capacity - 1);
  EXPECT_EQ(set.bloom().num_layers(), 1u) << "a layer with room left stays the newest";
  growth.after_round(set, capacity);
  ASSERT_EQ(set.bloom().num_layers(), 2u) << "a full layer must be followed by a new one";
  // The new layer is empty: a sub-round of its whole capacity fits into it
  // without opening a third.
  growth.before_subround(set, set.bloom().layer_geometry(1).capacity);
  EXPECT_EQ(set.bloom().num_layers(), 2u);
}

TEST(LayerGrowthCoverage, ASubRoundOfATinyLayerTakesHalfItsCapacity) {
  // 4 ranks: a slack of 16 keys; a layer of 20 keys (< 2 x 16) gives
  // sub-rounds of 10 keys, never 4 (capacity - slack) or none.
  core::TwoTierSet set = set_of_capacity(20);
  ASSERT_EQ(set.bloom().layer_geometry(0).capacity, 20u);
  EXPECT_EQ(LayerGrowth(4, 0).max_keys(set), 10u);
  core::TwoTierSet one = set_of_capacity(1);
  EXPECT_EQ(LayerGrowth(4, 0).max_keys(one), 1u) << "at least one key a sub-round";
  EXPECT_EQ(LayerGrowth(1, 0).max_keys(set), 19u) << "with room: capacity less the slack";
}

}  // namespace
}  // namespace bloomshard::app
