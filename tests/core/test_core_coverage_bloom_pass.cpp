// The scalable filter's batch pass and window start (docs/coverage.md):
// the one-layer pass is instantiated once per probe count k, so each k the
// geometry can choose is run here against the one-key insert_if_absent of
// a twin filter (same answers, same bits); start_window refuses slot tags
// that are empty, end before the current slot or decrease, naming them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"

namespace bloomshard::core {
namespace {

ScalableBloomParams params_for(double fpr) {
  ScalableBloomParams p;
  p.initial_capacity = 2000;
  p.fpr_target = fpr;
  p.num_slices = 4;
  return p;
}

TEST(CoreCoverageBloomPass, OneLayerBatchPassAnswersAsOneKeyInsertsForEveryK) {
  std::vector<KeyHash> hashes;
  for (int i = 0; i < 1500; ++i) hashes.push_back(hash_key("key-" + std::to_string(i % 1000)));
  std::set<std::uint32_t> ks;
  // From 0.5 down the compound target tightens and k grows through its range.
  for (double fpr = 0.5; fpr > 1e-7; fpr *= 0.7) {
    ScalableBloom batch(params_for(fpr), {0, 4});
    const std::uint32_t k = batch.layer_geometry(0).k;
    if (!ks.insert(k).second) continue;
    ScalableBloom single(params_for(fpr), {0, 4});
    std::vector<std::uint8_t> absent(hashes.size(), 9);
    ASSERT_EQ(batch.insert_if_absent_batch(hashes, absent), hashes.size()) << "k " << k;
    std::size_t repeats_absent = 0;
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      ASSERT_EQ(absent[i], single.insert_if_absent(hashes[i]) ? 1U : 0U) << "k " << k << " #" << i;
      if (i >= 1000) repeats_absent += absent[i];
    }
    EXPECT_EQ(repeats_absent, 0U) << "k " << k;  // a repeat is never absent
    EXPECT_EQ(batch.newest_layer_inserted(), single.newest_layer_inserted()) << "k " << k;
    for (std::uint32_t s = 0; s < 4; ++s) {
      const auto a = batch.slice_words(0, s);
      const auto b = single.slice_words(0, s);
      ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "k " << k;
    }
  }
  EXPECT_GE(ks.size(), 12U);  // most of 1..kMaxProbes
}

// The std::invalid_argument message of start_window, or a marker.
std::string window_refusal(std::uint64_t current, std::vector<std::uint64_t> slots) {
  ScalableBloom bloom(params_for(0.01), {0, 4});
  try {
    bloom.start_window(2, current, slots);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no refusal)";
}

TEST(CoreCoverageBloomPass, StartWindowNamesBadSlotTags) {
  EXPECT_EQ(window_refusal(3, {}), "a windowed filter's newest layer must belong to slot 3");
  EXPECT_EQ(window_refusal(3, {1, 2}), "a windowed filter's newest layer must belong to slot 3");
  EXPECT_EQ(window_refusal(3, {2, 1, 3}), "Bloom layer slot tags decrease at #1 (2 then 1)");
  EXPECT_EQ(window_refusal(3, {2, 3, 3}), "(no refusal)");
}

// k = 1 is chosen only for a first layer target above about 0.41: a
// compound target of 0.5 with a loose tightening (0.1) gives 0.45.
TEST(CoreCoverageBloomPass, OneLayerBatchPassWithOneProbeAnswersAsOneKeyInserts) {
  ScalableBloomParams p = params_for(0.5);
  p.tightening = 0.1;
  ScalableBloom batch(p, {0, 4});
  ScalableBloom single(p, {0, 4});
  ASSERT_EQ(batch.layer_geometry(0).k, 1U);
  std::vector<KeyHash> hashes;
  for (int i = 0; i < 300; ++i) hashes.push_back(hash_key("key-" + std::to_string(i % 200)));
  std::vector<std::uint8_t> absent(hashes.size(), 9);
  ASSERT_EQ(batch.insert_if_absent_batch(hashes, absent), hashes.size());
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    ASSERT_EQ(absent[i], single.insert_if_absent(hashes[i]) ? 1U : 0U) << "#" << i;
  }
  for (std::uint32_t s = 0; s < 4; ++s) {
    const auto a = batch.slice_words(0, s);
    const auto b = single.slice_words(0, s);
    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
}

}  // namespace
}  // namespace bloomshard::core
