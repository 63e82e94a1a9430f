// Tests written for mutants that survived the suite (tests/mutation/mutate.py,
// docs/testing.md "Mutation check"): each pins one boundary or one call of
// the sequential core that no other test told apart from a changed one.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/scalable_bloom.hpp"

namespace bloomshard::core {
namespace {

// The what() of the std::invalid_argument that `f` throws, or a marker.
template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

// A target of exactly 0 is refused as outside (0, 0.5], not searched for:
// the search would end with another message ("needs more than ... bits").
TEST(MutationKills, AZeroFprTargetIsRefusedAsOutOfRangeNotSearched) {
  EXPECT_EQ(invalid_argument_of([] { (void)choose_geometry(0.0); }),
            "FPR target 0.000000 outside (0, 0.5]");
  EXPECT_NO_THROW((void)choose_geometry(0.5));
}

// A tightening of exactly 0 is refused: layer 0 alone would not notice
// (its target p (1 - r) r^0 is p), every later layer's target would be 0.
TEST(MutationKills, AZeroTighteningIsRefusedAtLayerZero) {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.01;
  p.tightening = 0.0;
  EXPECT_EQ(invalid_argument_of([&] { (void)layer_geometry(p, 0); }),
            "tightening 0.000000 outside (0, 1)");
}

}  // namespace
}  // namespace bloomshard::core
