// The exact shard's refusals (docs/coverage.md): a slice range that is not a
// non-empty part of [0, P) is refused at construction, a run index past the
// runs held is refused, and a merged slice is written only into spans of
// exactly the sizes merged_slice_size gave, never past them. A slice the
// shard does not own is refused by every call that takes one, a base is
// attached only to a shard of at most one run, and a delta reservation past
// what the arena can address is refused before anything is allocated.
// Tier 2 stays exact where 64-bit fingerprints collide (delta and merges),
// an empty fold makes no run, the up-front delta reservation is capped, and
// a windowed set tells false positives and refreshes only older slots' keys.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomshard/core/exact_shard.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

// The message of the std::invalid_argument the constructor throws, "" if none.
std::string construction_refusal(SliceRange owned, std::uint32_t num_slices) {
  try {
    ExactShard shard(owned, num_slices);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(CoreCoverageExactShard, SliceRangeMustBeANonEmptyPartOfAllSlices) {
  EXPECT_EQ(construction_refusal({0, 1}, 0),
            "exact shard: slice range [0, 1) not a non-empty part of [0, 0)");
  EXPECT_NE(construction_refusal({0, 1}, kMaxSlices + 1), "");
  EXPECT_NE(construction_refusal({3, 3}, 8), "");  // empty
  EXPECT_NE(construction_refusal({4, 3}, 8), "");  // reversed
  EXPECT_EQ(construction_refusal({7, 9}, 8),
            "exact shard: slice range [7, 9) not a non-empty part of [0, 8)");
  EXPECT_EQ(construction_refusal({7, 8}, 8), "");
  EXPECT_EQ(construction_refusal({0, 1}, kMaxSlices), "");
}

TEST(CoreCoverageExactShard, RunViewRefusesARunNotHeld) {
  ExactShard shard({0, 2}, 2);
  EXPECT_THROW((void)shard.run_view(0, 1), std::out_of_range);  // no run yet
  ASSERT_TRUE(shard.insert(1, 42, "key"));
  shard.fold_delta_into_base();
  ASSERT_EQ(shard.runs().size(), 1U);
  EXPECT_EQ(shard.run_view(0, 1).fingerprints.size(), 1U);
  EXPECT_THROW((void)shard.run_view(1, 1), std::out_of_range);
}

TEST(CoreCoverageExactShard, MergedSliceIsWrittenOnlyIntoSpansOfItsExactSize) {
  ExactShard shard({0, 1}, 1);
  ASSERT_TRUE(shard.insert(0, 7, "seven"));
  ASSERT_TRUE(shard.insert(0, 3, "three"));
  const SliceSize size = shard.merged_slice_size(0);
  ASSERT_EQ(size, (SliceSize{2, 10}));
  std::vector<std::uint64_t> fps(2), offsets(3);
  std::vector<char> bytes(10);
  // One element too few or too many in any span: refused, nothing written.
  std::vector<std::uint64_t> short_fps(1), long_offsets(4);
  std::vector<char> short_bytes(9);
  EXPECT_THROW(shard.write_merged_slice(0, short_fps, offsets, bytes), std::length_error);
  EXPECT_THROW(shard.write_merged_slice(0, fps, long_offsets, bytes), std::length_error);
  EXPECT_THROW(shard.write_merged_slice(0, fps, offsets, short_bytes), std::length_error);
  EXPECT_EQ(long_offsets, std::vector<std::uint64_t>(4, 0));

  shard.write_merged_slice(0, fps, offsets, bytes);
  EXPECT_EQ(fps, (std::vector<std::uint64_t>{3, 7}));  // sorted by fingerprint
  EXPECT_EQ(offsets, (std::vector<std::uint64_t>{0, 5, 10}));
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "threeseven");
}

// The std::out_of_range message of `f`, "" if none.
template <class F>
std::string out_of_range_of(F&& f) {
  try {
    f();
  } catch (const std::out_of_range& e) {
    return e.what();
  }
  return {};
}

TEST(CoreCoverageExactShard, EveryCallRefusesASliceNotOwned) {
  ExactShard shard({2, 4}, 8);
  ASSERT_TRUE(shard.insert(3, 9, "held"));
  const std::string refusal = "exact shard: slice 4 not in owned [2, 4)";
  EXPECT_EQ(out_of_range_of([&] { (void)shard.contains(4, 9, "held"); }), refusal);
  EXPECT_EQ(out_of_range_of([&] { (void)shard.insert(4, 9, "held"); }), refusal);
  EXPECT_EQ(out_of_range_of([&] { (void)shard.newest_holder(4, 9, "held"); }), refusal);
  EXPECT_EQ(out_of_range_of([&] { (void)shard.merged_slice_size(4); }), refusal);
  EXPECT_EQ(out_of_range_of([&] { (void)shard.contains(1, 9, "held"); }),
            "exact shard: slice 1 not in owned [2, 4)");
  EXPECT_TRUE(shard.contains(3, 9, "held"));  // nothing changed
  EXPECT_EQ(shard.size(), 1U);
}

TEST(CoreCoverageExactShard, NewestHolderNamesTheDeltaARunOrNone) {
  ExactShard shard({0, 1}, 1);
  ASSERT_TRUE(shard.insert(0, 5, "five"));
  EXPECT_EQ(shard.newest_holder(0, 5, "five"), ExactShard::kInDelta);
  EXPECT_EQ(shard.newest_holder(0, 5, "fivE"), ExactShard::kNotHeld);  // same fingerprint
  shard.fold_delta_into_base();
  EXPECT_EQ(shard.newest_holder(0, 5, "five"), 0U);
  ExactShard moved(std::move(shard));
  EXPECT_EQ(moved.newest_holder(0, 5, "five"), 0U);
  ExactShard assigned({0, 2}, 2);
  assigned = std::move(moved);
  EXPECT_TRUE(assigned.contains(0, 5, "five"));
  EXPECT_EQ(assigned.owned().last, 1U);
}

TEST(CoreCoverageExactShard, ABaseIsAttachedOnlyToAShardOfAtMostOneRun) {
  ExactShard shard({0, 1}, 1);
  ASSERT_TRUE(shard.insert(0, 5, "five"));
  auto data = std::make_shared<std::vector<SliceBaseData>>(1, shard.merged_slice(0));
  shard.attach_base(0, data->front().view(), data);  // one run: allowed
  shard.clear_delta();
  ASSERT_EQ(shard.runs().size(), 1U);
  ASSERT_TRUE(shard.insert(0, 6, "six"));
  auto second = std::make_shared<std::vector<SliceBaseData>>(1, shard.merged_slice(0, 0));
  shard.replace_newest_runs(0, {2, 0}, {second->front().view()}, second);
  ASSERT_EQ(shard.runs().size(), 2U);
  try {
    shard.attach_base(0, data->front().view(), data);
    ADD_FAILURE() << "attach_base on two runs was not refused";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "exact shard: attach_base on a shard of 2 runs");
  }
  EXPECT_EQ(shard.runs().size(), 2U);
  EXPECT_TRUE(shard.contains(0, 5, "five"));
}

TEST(CoreCoverageExactShard, AReservationPastTheArenaIsRefused) {
  ExactShard shard({0, 1}, 1);
  try {
    shard.reserve_delta((std::uint64_t{1} << 37) + 1);
    ADD_FAILURE() << "a reservation of 2^37 + 1 keys was not refused";
  } catch (const std::length_error& e) {
    EXPECT_STREQ(e.what(),
                 "tier-2 delta index: 137438953473 keys asked for, more than the arena can hold");
  }
  shard.reserve_delta(1000);  // still usable
  EXPECT_TRUE(shard.insert(0, 1, "one"));
}

// Tier 2 is the authority: two keys whose 64-bit fingerprints are equal are
// still two keys, in the delta, in another slice, and when the delta is
// merged with a run that holds the other one (either order of the bytes).
TEST(CoreCoverageExactShard, KeysOfOneFingerprintStayApartInTheDeltaAndInMerges) {
  constexpr std::uint64_t kFp = 0x5eed;
  ExactShard delta_only({0, 2}, 2);
  EXPECT_TRUE(delta_only.insert(0, kFp, "apple"));
  EXPECT_TRUE(delta_only.insert(0, kFp, "pear"));
  EXPECT_TRUE(delta_only.insert(1, kFp, "apple"));
  EXPECT_FALSE(delta_only.insert(0, kFp, "pear"));
  EXPECT_EQ(delta_only.size(), 3U);
  for (const bool run_holds_first : {true, false}) {
    ExactShard shard({0, 2}, 2);
    ASSERT_TRUE(shard.insert(0, kFp, run_holds_first ? "apple" : "pear"));
    shard.fold_delta_into_base();
    ASSERT_EQ(shard.runs().size(), 1U);
    ASSERT_TRUE(shard.insert(0, kFp, run_holds_first ? "pear" : "apple"));
    const SliceBaseData merged = shard.merged_slice(0);
    ASSERT_EQ(merged.fingerprints, (std::vector<std::uint64_t>{kFp, kFp})) << run_holds_first;
    EXPECT_EQ(std::string(merged.bytes.begin(), merged.bytes.end()), "applepear");
    shard.fold_delta_into_base();
    EXPECT_TRUE(shard.contains(0, kFp, "apple"));
    EXPECT_TRUE(shard.contains(0, kFp, "pear"));
    EXPECT_EQ(shard.merged_slice(0).fingerprints.size(), 2U);
  }
}

// Folding an empty delta into at most one run changes nothing: no run made.
TEST(CoreCoverageExactShard, FoldingAnEmptyDeltaMakesNoRun) {
  ExactShard shard({0, 4}, 4);
  shard.fold_delta_into_base();
  EXPECT_TRUE(shard.runs().empty());
}

// A rank whose share of the newest layer is past kMaxReservedDeltaKeys
// (8.4M keys, ~90 MB of index) reserves only that much up front; the delta
// grows its index past it when it must. Unclamped, a 2^25-key share would
// map and fault in ~360 MB before the first key.
TEST(CoreCoverageExactShard, TheUpFrontDeltaReservationIsCapped) {
  ScalableBloomParams p;
  p.initial_capacity = std::uint64_t{1} << 25;
  p.fpr_target = 0.5;  // few Bloom bits: the test's memory is the delta's
  p.num_slices = 1;
  const TwoTierSet set(p, SliceRange{0, 1});
  EXPECT_GT(set.exact().delta_mapped_bytes(), std::uint64_t{64} << 20);
  EXPECT_LT(set.exact().delta_mapped_bytes(), std::uint64_t{128} << 20);
}

// Windowed: a Bloom "maybe" that tier 2 does not hold is a false positive,
// new, never a duplicate; a key held in a run of the current slot is a
// duplicate that needs no refresh, one held in an older slot's run is
// refreshed into the current slot.
TEST(CoreCoverageExactShard, AWindowedSetTellsFalsePositivesAndRefreshesOnlyOlderSlots) {
  ScalableBloomParams p;
  p.initial_capacity = 2000;  // filled by the keys below: maybes at the target's rate
  p.fpr_target = 0.5;
  p.num_slices = 4;
  TwoTierSet set(p, {0, 4});
  set.bloom().start_window(2, 0, std::vector<std::uint64_t>{0});
  for (int i = 0; i < 2000; ++i) {
    const std::string key = test::numbered("fp", i);
    ASSERT_NE(set.decide({hash_key(key), key}), Verdict::kDuplicate) << key;
  }
  EXPECT_GT(set.counters().false_positives, 10U);
  EXPECT_EQ(set.counters().duplicates, 0U);
  test::flush_delta_into_run(set, 1);  // a run of slot 0, the current slot
  const std::string again = test::numbered("fp", 7);
  EXPECT_EQ(set.decide({hash_key(again), again}), Verdict::kDuplicate);
  EXPECT_EQ(set.counters().refreshed, 0U);
  test::flush_delta_into_run(set, 2);
  set.open_slot(1);
  EXPECT_EQ(set.decide({hash_key(again), again}), Verdict::kDuplicate);
  EXPECT_EQ(set.counters().refreshed, 1U);
}

}  // namespace
}  // namespace bloomshard::core
