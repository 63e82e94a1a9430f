// The sizing plan's arithmetic: distinct keys and duplicates, the
// recommended flags, Bloom bytes equal to the filter's own geometry, the
// false-positive integral against the closed form of a one-layer filter,
// per-rank figures that shrink with ranks, the delta cap, a job without
// --state, and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "core/bloom/sizing_plan.hpp"

namespace bloomshard::core {
namespace {

PlanInputs inputs() {
  PlanInputs in;
  in.records = 1'000'000;
  in.unique_fraction = 0.7;
  in.key_bytes = 40;
  in.record_bytes = 200;
  in.ranks = 4;
  return in;
}

TEST(SizingPlan, KeysAndRecommendedFlags) {
  const SizingPlan p = make_plan(inputs());
  EXPECT_EQ(p.unique_keys, 700'000U);
  EXPECT_EQ(p.duplicates, 300'000U);
  EXPECT_EQ(p.recommended_capacity, 770'000U);  // 10% headroom
  EXPECT_EQ(p.recommended_slices, default_num_slices(4, 770'000));
  EXPECT_EQ(p.recommended_batch_bytes, 4U << 20);  // default_batch_bytes(4)
  EXPECT_EQ(p.layers, 1U);
  EXPECT_EQ(p.messages, 9U);  // 3 collectives x (R - 1)
}

TEST(SizingPlan, DefaultBatchIsSmallerOnSmallJobs) {
  EXPECT_EQ(default_batch_bytes(1), 4U << 20);
  EXPECT_EQ(default_batch_bytes(kSmallBatchMaxRanks), 4U << 20);
  EXPECT_EQ(default_batch_bytes(kSmallBatchMaxRanks + 1), 8U << 20);
  PlanInputs in = inputs();
  in.ranks = kSmallBatchMaxRanks + 1;
  EXPECT_EQ(make_plan(in).recommended_batch_bytes, 8U << 20);
  in.ranks = 16384;  // bounded by what one rank may receive: 1 GiB / (R x wire per input byte)
  EXPECT_LT(make_plan(in).recommended_batch_bytes, 1U << 20);
}

TEST(SizingPlan, BloomBytesAreTheFiltersGeometry) {
  const SizingPlan p = make_plan(inputs());
  ScalableBloomParams params;
  params.initial_capacity = p.in.capacity;
  params.fpr_target = p.in.fpr;
  params.num_slices = p.in.slices;
  const BloomLayerGeometry g = layer_geometry(params, 0);
  EXPECT_DOUBLE_EQ(p.bloom_bytes * 4, static_cast<double>(g.blocks_per_slice) * 64 * p.in.slices);
}

TEST(SizingPlan, FalsePositivesIntegrateTheFillOfOneLayer) {
  PlanInputs in = inputs();
  in.fpr = 0.2;  // loose: many false positives, a stable integral
  in.slices = 64;
  const SizingPlan p = make_plan(in);
  ScalableBloomParams params;
  params.initial_capacity = p.in.capacity;
  params.fpr_target = in.fpr;
  params.num_slices = 64;
  const BloomLayerGeometry g = layer_geometry(params, 0);
  const double bits = static_cast<double>(g.blocks_per_slice) * 512 * 64;
  double want = 0;  // a finer midpoint sum of the same model
  const int steps = 4096;
  for (int s = 0; s < steps; ++s) {
    want += 700'000.0 / steps * blocked_fpr(bits / ((s + 0.5) * 700'000.0 / steps), g.k);
  }
  EXPECT_NEAR(p.false_positives, want, want * 0.01);
  EXPECT_DOUBLE_EQ(p.tier2_lookups, 300'000 + p.false_positives);
}

TEST(SizingPlan, UnderSizedCapacityOpensLayers) {
  PlanInputs in = inputs();
  in.capacity = 100'000;
  const SizingPlan p = make_plan(in);
  EXPECT_GE(p.layers, 3U);  // 100k + 200k + 400k >= 700k
  const SizingPlan sized = make_plan(inputs());
  EXPECT_GT(p.bloom_bytes, 0.0);
  EXPECT_LT(std::abs(p.bloom_bytes - sized.bloom_bytes) / sized.bloom_bytes, 2.0);
}

TEST(SizingPlan, PerRankFiguresShrinkWithRanks) {
  PlanInputs in = inputs();
  in.ranks = 1;
  const SizingPlan one = make_plan(in);
  in.ranks = 8;
  in.slices = one.in.slices;
  const SizingPlan eight = make_plan(in);
  EXPECT_NEAR(eight.tier2_disk_bytes * 8, one.tier2_disk_bytes, 1.0);
  EXPECT_LT(eight.delta_bytes, one.delta_bytes);
  EXPECT_LT(eight.peak_rss_bytes, one.peak_rss_bytes);
  EXPECT_DOUBLE_EQ(eight.state_bytes, one.state_bytes);
}

TEST(SizingPlan, CheckpointIntervalAndDeltaCapBoundTheDelta) {
  PlanInputs in = inputs();
  in.ranks = 1;
  in.records = 100'000'000;
  const SizingPlan capped = make_plan(in);
  EXPECT_LE(capped.delta_bytes, static_cast<double>(in.max_delta_bytes) + 65536);
  EXPECT_GT(capped.checkpoints, 1U);
  in.checkpoint_every = 1;  // 0.8M records/s -> 560k keys per interval
  const SizingPlan timed = make_plan(in);
  EXPECT_NEAR(timed.delta_bytes, 560'000.0 * (kDeltaBytesPerKey + 40) + 65536, 1.0);
  EXPECT_GE(timed.checkpoints, 125U);  // 125 s of reading
}

TEST(SizingPlan, WithoutStateTheDeltaHoldsEveryKeyAndNothingIsSaved) {
  PlanInputs in = inputs();
  in.records = 100'000'000;
  in.checkpoint_every = 1;
  in.checkpoints = false;
  const SizingPlan p = make_plan(in);
  const double keys_per_rank = 70'000'000.0 / 4;
  // No cap by the interval or --max-delta-bytes, and no merge bucket.
  EXPECT_NEAR(p.delta_bytes,
              keys_per_rank * (kDeltaBytesPerKey - kMergeBucketBytesPerKey + 40) + 65536, 1.0);
  EXPECT_EQ(p.checkpoints, 0U);
  EXPECT_EQ(p.state_bytes, 0.0);
  EXPECT_EQ(p.checkpoint_bytes, 0.0);
  EXPECT_EQ(p.tier2_disk_bytes, 0.0);
  EXPECT_DOUBLE_EQ(p.peak_rss_bytes,
                   kBaseRssBytes + p.bloom_bytes + p.delta_bytes + p.round_buffer_bytes);
}

TEST(SizingPlan, RefusesBadInputs) {
  PlanInputs in = inputs();
  in.records = 0;
  EXPECT_THROW((void)make_plan(in), std::invalid_argument);
  in = inputs();
  in.unique_fraction = 1.5;
  EXPECT_THROW((void)make_plan(in), std::invalid_argument);
  in = inputs();
  in.slices = 2;  // fewer than ranks
  EXPECT_THROW((void)make_plan(in), std::invalid_argument);
  in = inputs();
  in.fpr = 0.9;
  EXPECT_THROW((void)make_plan(in), std::invalid_argument);
}

TEST(SizingPlan, SummaryLineNamesTheFigures) {
  const std::string line = plan_summary_line(make_plan(inputs()));
  EXPECT_NE(line.find("plan: 4 ranks, 1.0M records (700.0k distinct)"), std::string::npos) << line;
  EXPECT_NE(line.find("peak RSS"), std::string::npos);
  EXPECT_NE(line.find("tier-2 lookups"), std::string::npos);
}

}  // namespace
// --kept-copy first: each owner's order table is in the peak, planned for
// `ranks` inputs' distinct keys (every distinct key when the inputs are
// unknown); arrival order plans none.
TEST(SizingPlan, InputOrderCountsTheOrderTable) {
  PlanInputs in;
  in.records = 10000000;
  in.unique_fraction = 0.7;
  in.key_bytes = 16;
  in.record_bytes = 160;
  in.ranks = 2;
  in.capacity = 10000000;
  in.checkpoints = false;
  const SizingPlan arrival = make_plan(in);
  EXPECT_EQ(arrival.order_table_bytes, 0.0);
  in.input_order = true;
  in.inputs = 16;
  const SizingPlan first = make_plan(in);
  EXPECT_EQ(first.order_table_bytes, 36.0 * 1048576);  // the benchmark's 24-36 MiB measured
  // The outputs' offset maps (the end pass's places): 6 bytes a record left
  // out, 5M records a rank of which 30% duplicates.
  EXPECT_DOUBLE_EQ(first.offset_map_bytes, 5e6 * 0.3 * 6);
  EXPECT_EQ(arrival.offset_map_bytes, 0.0);
  // The retractions waiting for the end pass: half the duplicates of the
  // 2 of 16 inputs read at a time (3M x 2/16 / 2; the benchmark measured
  // 132,644), 96 bytes each spread over the 2 ranks, and their rows in a
  // checkpoint.
  EXPECT_EQ(first.retractions, 187500.0);
  EXPECT_EQ(first.retraction_bytes, 187500.0 * 96 / 2);
  EXPECT_EQ(arrival.retractions, 0.0);
  EXPECT_EQ(first.peak_rss_bytes, arrival.peak_rss_bytes + first.order_table_bytes +
                                      first.offset_map_bytes + first.retraction_bytes);
  EXPECT_NE(plan_summary_line(first).find(", order table 36.0 MiB/rank"), std::string::npos)
      << plan_summary_line(first);
  EXPECT_EQ(plan_summary_line(arrival).find("order table"), std::string::npos);
  in.inputs = 0;  // unknown: 3.5M keys an owner, 8M slots (192 MiB) grown from 512K
  EXPECT_EQ(make_plan(in).order_table_bytes, (192.0 + 96.0) * 1048576);
  EXPECT_EQ(make_plan(in).retractions, 1.5e6);  // every input at once: half the duplicates
  in.inputs = 1;                                // fewer inputs than ranks: the same bound
  EXPECT_EQ(make_plan(in).order_table_bytes, (192.0 + 96.0) * 1048576);
  in.records = 100000000000;  // the maps are capped: past the cap an output is walked
  EXPECT_EQ(make_plan(in).offset_map_bytes, 64.0 * 1048576);
}

// --kept-copy first in the lockstep layout (plain inputs, no --state): the
// owners' table holds one round's keys at most and is emptied every round;
// nothing is retracted and no output keeps an offset map.
TEST(SizingPlan, LockstepPlansOneRoundsOrderTable) {
  PlanInputs in;
  in.records = 10000000;
  in.unique_fraction = 0.7;
  in.key_bytes = 16;
  in.record_bytes = 160;
  in.ranks = 2;
  in.capacity = 10000000;
  in.checkpoints = false;
  in.batch_bytes = 4 << 20;
  const SizingPlan arrival = make_plan(in);
  in.input_order = true;
  in.inputs = 16;
  const SizingPlan tasks = make_plan(in);
  in.lockstep = true;
  const SizingPlan lockstep = make_plan(in);
  // 4 MiB / 128 B = 32K keys: 64K slots of 24 bytes.
  EXPECT_EQ(lockstep.order_table_bytes, 65536.0 * 24);
  EXPECT_LT(lockstep.order_table_bytes, tasks.order_table_bytes / 20);
  EXPECT_EQ(lockstep.offset_map_bytes, 0.0);
  EXPECT_EQ(lockstep.retractions, 0.0);
  EXPECT_EQ(lockstep.retraction_bytes, 0.0);
  // No read-ahead thread, but the block written in the background holds a
  // batch: the same 4 MiB at this batch size, and less in small rounds.
  EXPECT_EQ(lockstep.peak_rss_bytes, arrival.peak_rss_bytes + lockstep.order_table_bytes);
  in.batch_bytes = 64 << 10;
  EXPECT_NEAR(make_plan(in).round_buffer_bytes, 4.5 * 65536, 1.0);
  EXPECT_NE(plan_summary_line(lockstep).find(", order table 1.5 MiB/rank"), std::string::npos)
      << plan_summary_line(lockstep);
}

}  // namespace bloomshard::core
