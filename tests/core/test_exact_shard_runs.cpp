// Tier 2 as immutable sorted runs: a checkpoint's new run is the delta alone
// (depth 0) or the delta merged with the newest runs (a compaction);
// lookups see delta + every run; merging any depth gives the sorted union,
// each key once; and the tiered compaction policy keeps runs bounded at a
// stated write amplification.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bloomshard/core/exact_shard.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "core/tier2/run_compaction.hpp"
#include "core_test_util.hpp"

// Its own namespace: its helpers share names with test_exact_shard.cpp (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::core::exact_shard_runs_tests {
namespace {

using test::numbered;

constexpr std::uint32_t kP = 16;

struct Key {
  std::uint32_t slice;
  std::uint64_t fp;
  std::string bytes;
};

Key run_key(std::string bytes) {
  const KeyHash h = hash_key(bytes);
  return {slice_of(h, kP), fingerprint(h), std::move(bytes)};
}

// Writes the shard's new run of `depth` (merge_slice per slice) into memory
// and makes it the newest run in place of the newest `depth` runs.
void checkpoint(ExactShard& shard, std::size_t depth, std::uint64_t id, std::uint32_t level) {
  auto data = std::make_shared<std::vector<SliceBaseData>>();
  std::vector<SliceBaseView> views;
  for (std::uint32_t s = shard.owned().first; s < shard.owned().last; ++s) {
    data->push_back(shard.merged_slice(s, depth));
  }
  for (const SliceBaseData& d : *data) views.push_back(d.view());
  for (const SliceBaseView& v : views) validate_base(v);
  shard.replace_newest_runs(depth, {id, level}, std::move(views), data);
  shard.clear_delta();
}

TEST(ExactShardRuns, DeltaRunsThenCompaction) {
  ExactShard shard({0, kP}, kP);
  std::vector<Key> all;
  std::uint64_t id = 0;
  for (int batch = 0; batch < 5; ++batch) {
    for (int i = 0; i < 300; ++i) {
      Key k = run_key(numbered("b" + std::to_string(batch) + "-", i));
      ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
      all.push_back(std::move(k));
    }
    // A re-insert of an older batch's key is refused (it is in a run).
    if (batch > 0) {
      EXPECT_FALSE(shard.insert(all[0].slice, all[0].fp, all[0].bytes));
    }
    // The delta alone is the new run: it holds only this batch's keys.
    std::uint64_t delta_run_keys = 0;
    for (std::uint32_t s = 0; s < kP; ++s) delta_run_keys += shard.merged_slice_size(s, 0).keys;
    EXPECT_EQ(delta_run_keys, 300U);
    checkpoint(shard, 0, ++id, 0);
    EXPECT_EQ(shard.runs().size(), static_cast<std::size_t>(batch + 1));
    EXPECT_EQ(shard.delta_keys(), 0U);
    EXPECT_EQ(shard.base_keys(), all.size());
  }
  for (const Key& k : all) EXPECT_TRUE(shard.contains(k.slice, k.fp, k.bytes)) << k.bytes;
  EXPECT_FALSE(shard.contains(run_key("never").slice, run_key("never").fp, "never"));

  // New keys, then a run that absorbs the newest 3 runs.
  for (int i = 0; i < 100; ++i) {
    Key k = run_key(numbered("late-", i));
    ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
    all.push_back(std::move(k));
  }
  std::uint64_t merged_keys = 0;
  for (std::uint32_t s = 0; s < kP; ++s) merged_keys += shard.merged_slice_size(s, 3).keys;
  EXPECT_EQ(merged_keys, 3U * 300 + 100);
  checkpoint(shard, 3, ++id, 1);
  ASSERT_EQ(shard.runs().size(), 3U);
  EXPECT_EQ(shard.runs()[0], (RunInfo{1, 0}));
  EXPECT_EQ(shard.runs()[1], (RunInfo{2, 0}));
  EXPECT_EQ(shard.runs()[2], (RunInfo{6, 1}));
  EXPECT_EQ(shard.base_keys(), all.size());
  for (const Key& k : all) EXPECT_TRUE(shard.contains(k.slice, k.fp, k.bytes)) << k.bytes;

  // The full merge is the sorted union, each key once.
  std::set<std::pair<std::uint64_t, std::string>> want;
  for (const Key& k : all) want.insert({k.fp, k.bytes});
  std::size_t seen = 0;
  for (std::uint32_t s = 0; s < kP; ++s) {
    const SliceBaseData m = shard.merged_slice(s);
    validate_base(m.view());
    for (std::size_t i = 0; i < m.fingerprints.size(); ++i) {
      EXPECT_TRUE(want.count({m.fingerprints[i], std::string(m.view().key(i))}));
    }
    seen += m.fingerprints.size();
  }
  EXPECT_EQ(seen, want.size());

  // fold_delta_into_base leaves one in-memory run with everything.
  shard.fold_delta_into_base();
  EXPECT_EQ(shard.runs().size(), 1U);
  EXPECT_EQ(shard.base_keys(), all.size());
  for (const Key& k : all) EXPECT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
}

TEST(ExactShardRuns, RunAttachedOverTheDeltaIsMergedOnce) {
  ExactShard shard({0, kP}, kP);
  std::vector<Key> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(run_key(numbered("k", i)));
  for (const Key& k : keys) ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
  // The new run is attached before the delta is dropped (as a rebase does):
  // until clear_delta every key is in both, and merges emit it once.
  auto data = std::make_shared<std::vector<SliceBaseData>>();
  std::vector<SliceBaseView> views;
  for (std::uint32_t s = 0; s < kP; ++s) data->push_back(shard.merged_slice(s, 0));
  for (const SliceBaseData& d : *data) views.push_back(d.view());
  shard.replace_newest_runs(0, {7, 0}, views, data);
  std::uint64_t keys_once = 0;
  for (std::uint32_t s = 0; s < kP; ++s) keys_once += shard.merged_slice(s).fingerprints.size();
  EXPECT_EQ(keys_once, keys.size());
  shard.clear_delta();
  EXPECT_EQ(shard.size(), keys.size());
  EXPECT_THROW(shard.replace_newest_runs(0, {8, 0}, std::vector<SliceBaseView>(3), nullptr),
               std::invalid_argument);
  EXPECT_THROW((void)shard.run_view(1, 0), std::out_of_range);
}

// Simulates `checkpoints` equal deltas under `policy`: returns the write
// amplification (run keys written / final keys) and checks the run bound.
double simulate(const CompactionPolicy& policy, int checkpoints, std::size_t& most_runs) {
  std::vector<std::uint32_t> levels;
  std::vector<std::uint64_t> sizes;
  std::uint64_t written = 0;
  most_runs = 0;
  for (int c = 0; c < checkpoints; ++c) {
    const CompactionPlan plan = plan_compaction(levels, policy);
    std::uint64_t size = 1;
    for (std::size_t i = 0; i < plan.merge_runs; ++i) {
      size += sizes.back();
      sizes.pop_back();
      levels.pop_back();
    }
    written += size;
    sizes.push_back(size);
    levels.push_back(plan.level);
    most_runs = std::max(most_runs, levels.size());
  }
  return static_cast<double>(written) / checkpoints;
}

TEST(ExactShardRuns, RefreshedKeysLiveInTheReusedDeltaOfANewSlot) {
  // A windowed state: slot 0's keys become a run, the delta is cleared (its
  // memory kept), and some of them are seen again in slot 1: insert_refresh
  // copies them into the delta, where lookups now find them first and the
  // slot's run (depth 0) holds them, next to keys new in slot 1.
  ExactShard shard({0, kP}, kP);
  std::vector<Key> old_keys;
  for (int i = 0; i < 2000; ++i) old_keys.push_back(run_key(numbered("slot0-", i)));
  for (const Key& k : old_keys) shard.insert_new(k.slice, k.fp, k.bytes);
  checkpoint(shard, 0, 1, 0);
  const std::uint64_t mapped = shard.delta_mapped_bytes();
  std::set<std::string> refreshed;
  for (std::size_t i = 0; i < old_keys.size(); i += 3) {
    const Key& k = old_keys[i];
    ASSERT_EQ(shard.newest_holder(k.slice, k.fp, k.bytes), 0U);  // the slot-0 run
    shard.insert_refresh(k.slice, k.fp, k.bytes);
    ASSERT_EQ(shard.newest_holder(k.slice, k.fp, k.bytes), ExactShard::kInDelta);
    refreshed.insert(k.bytes);
  }
  std::vector<Key> new_keys;
  for (int i = 0; i < 1000; ++i) new_keys.push_back(run_key(numbered("slot1-", i)));
  for (const Key& k : new_keys) ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
  EXPECT_EQ(shard.delta_mapped_bytes(), mapped);  // the cleared delta's memory held them
  EXPECT_EQ(shard.delta_keys(), refreshed.size() + new_keys.size());
  std::set<std::string> in_delta_run;
  for (std::uint32_t s = 0; s < kP; ++s) {
    const SliceBaseData run = shard.merged_slice(s, 0);
    ASSERT_NO_THROW(validate_base(run.view()));
    for (std::size_t i = 0; i < run.fingerprints.size(); ++i) {
      in_delta_run.insert(std::string(run.view().key(i)));
    }
  }
  std::set<std::string> expect = refreshed;
  for (const Key& k : new_keys) expect.insert(k.bytes);
  EXPECT_EQ(in_delta_run, expect);
  for (std::size_t i = 1; i < old_keys.size(); i += 3) {  // not refreshed: only in the run
    const Key& k = old_keys[i];
    EXPECT_EQ(shard.newest_holder(k.slice, k.fp, k.bytes), 0U);
  }
}

TEST(RunCompaction, TieredPlans) {
  const CompactionPolicy p{4, 10};
  EXPECT_EQ(plan_compaction({}, p), (CompactionPlan{0, 0}));
  const std::vector<std::uint32_t> three_l0{0, 0, 0};
  EXPECT_EQ(plan_compaction(three_l0, p), (CompactionPlan{3, 1}));
  const std::vector<std::uint32_t> cascade{1, 1, 1, 0, 0, 0};
  EXPECT_EQ(plan_compaction(cascade, p), (CompactionPlan{6, 2}));
  const std::vector<std::uint32_t> two{2, 1, 0, 0};
  EXPECT_EQ(plan_compaction(two, p), (CompactionPlan{0, 0}));
  // A format-1 run: everything into one base run, once.
  const std::vector<std::uint32_t> legacy{kLegacyRunLevel, 0};
  EXPECT_EQ(plan_compaction(legacy, p), (CompactionPlan{2, kBaseRunLevel}));
  const std::vector<std::uint32_t> base{kBaseRunLevel, 0, 0};
  EXPECT_EQ(plan_compaction(base, p), (CompactionPlan{0, 0}));
  // The cap: 10 runs of distinct levels, the new one absorbs the newest.
  const std::vector<std::uint32_t> full{9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_EQ(plan_compaction(full, p), (CompactionPlan{1, 1}));
  EXPECT_THROW((void)plan_compaction({}, {1, 10}), std::invalid_argument);
  EXPECT_THROW((void)plan_compaction({}, {4, 0}), std::invalid_argument);
}

// A segment's last checkpoint defers the cascade but never the cap; the
// next segment's first checkpoint absorbs the deferred level.
TEST(RunCompaction, CapOnlyDefersTheCascadeToTheNextSegment) {
  const CompactionPolicy last{4, 10, true};
  const std::vector<std::uint32_t> three_l0{0, 0, 0};
  EXPECT_EQ(plan_compaction(three_l0, last), (CompactionPlan{0, 0}));
  const std::vector<std::uint32_t> four_l0{0, 0, 0, 0};
  EXPECT_EQ(plan_compaction(four_l0, CompactionPolicy{4, 10}), (CompactionPlan{4, 1}));
  const std::vector<std::uint32_t> full{9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_EQ(plan_compaction(full, last), (CompactionPlan{1, 1}));
  const std::vector<std::uint32_t> legacy{kLegacyRunLevel};
  EXPECT_EQ(plan_compaction(legacy, last), (CompactionPlan{1, kBaseRunLevel}));
}

TEST(RunCompaction, WriteAmplificationAndRunBound) {
  std::size_t most = 0;
  // The figures run_compaction.hpp states (equal deltas, fanout 4, cap 10).
  const double wa10 = simulate({4, 10}, 10, most);
  EXPECT_LE(most, 4U);
  EXPECT_NEAR(wa10, 1.6, 0.05);
  const double wa64 = simulate({4, 10}, 64, most);
  EXPECT_NEAR(wa64, 3.25, 0.05);
  EXPECT_LE(most, 10U);
  const double wa1000 = simulate({4, 10}, 1000, most);
  EXPECT_LE(most, 10U);
  EXPECT_NEAR(wa1000, 4.26, 0.05);
  std::printf(
      "write amplification (fanout 4, cap 10): %.2f at 10, %.2f at 64, %.2f at 1000 "
      "checkpoints\n",
      wa10, wa64, wa1000);
}

}  // namespace
}  // namespace bloomshard::core::exact_shard_runs_tests
