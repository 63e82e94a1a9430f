// The sizing plan's input checks and labels (docs/coverage.md): each
// bound of each checked input refused with the message that names the
// option, values given by the user kept instead of the recommended ones,
// and the count labels of each magnitude.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/slice_map.hpp"
#include "core/bloom/sizing_plan.hpp"

namespace bloomshard::core {
namespace {

PlanInputs valid() {
  PlanInputs in;
  in.records = 1'000'000;
  in.unique_fraction = 0.5;
  in.ranks = 4;
  return in;
}

// The std::invalid_argument message of make_plan on `in` changed by `edit`.
std::string refusal(const std::function<void(PlanInputs&)>& edit) {
  PlanInputs in = valid();
  edit(in);
  try {
    (void)make_plan(in);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no refusal)";
}

TEST(CoreCoverageSizingPlan, EachBoundOfEachInputIsRefusedNamingTheOption) {
  const std::string fraction = "--unique-fraction must be in (0, 1]";
  EXPECT_EQ(refusal([](PlanInputs& in) { in.unique_fraction = 0; }), fraction);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.unique_fraction = 1.01; }), fraction);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.unique_fraction = 1; }), "(no refusal)");
  const std::string fpr = "--fpr must be in (0, 0.5]";
  EXPECT_EQ(refusal([](PlanInputs& in) { in.fpr = 0; }), fpr);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.fpr = 0.51; }), fpr);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.fpr = 0.5; }), "(no refusal)");
  const std::string dups = "--batch-duplicate-fraction must be in [0, 1]";
  EXPECT_EQ(refusal([](PlanInputs& in) { in.batch_duplicate_fraction = -0.1; }), dups);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.batch_duplicate_fraction = 1.1; }), dups);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.batch_duplicate_fraction = 1; }), "(no refusal)");
  const std::string slices = "--slices must be >= --ranks and <= the slice limit";
  EXPECT_EQ(refusal([](PlanInputs& in) { in.slices = 3; }), slices);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.slices = kMaxSlices + 1; }), slices);
  EXPECT_EQ(refusal([](PlanInputs& in) { in.slices = kMaxSlices; }), "(no refusal)");
  EXPECT_EQ(refusal([](PlanInputs& in) { in.checkpoint_every = -1; }),
            "--checkpoint-every must be >= 0");
  EXPECT_EQ(refusal([](PlanInputs& in) { in.records_per_second = 0; }),
            "--records-per-second must be > 0");
  EXPECT_EQ(refusal([](PlanInputs& in) { in.disk_bandwidth = 0; }), "--disk-bandwidth must be > 0");
}

TEST(CoreCoverageSizingPlan, GivenValuesAreKeptAndTheRecommendedOnesStillReported) {
  PlanInputs in = valid();
  in.capacity = 12345;
  in.slices = 64;
  in.batch_bytes = 65536;
  const SizingPlan given = make_plan(in);
  const SizingPlan recommended = make_plan(valid());
  EXPECT_EQ(given.in.capacity, 12345U);
  EXPECT_EQ(given.in.slices, 64U);
  EXPECT_EQ(given.in.batch_bytes, 65536U);
  EXPECT_EQ(given.recommended_capacity, recommended.in.capacity);
  EXPECT_EQ(given.recommended_slices, recommended.in.slices);
  EXPECT_EQ(given.recommended_batch_bytes, recommended.in.batch_bytes);
  EXPECT_EQ(recommended.in.capacity, 550000U);  // ceil(500000 x 1.1)
}

TEST(CoreCoverageSizingPlan, CountLabelsOfEachMagnitude) {
  EXPECT_EQ(count_label(999), "999");
  EXPECT_EQ(count_label(1500), "1.5k");
  EXPECT_EQ(count_label(2.5e6), "2.5M");
  EXPECT_EQ(count_label(3.25e9), "3.2G");
  EXPECT_EQ(mib_label(1.5 * 1048576), "1.5 MiB");
  EXPECT_EQ(mib_label(200.4 * 1048576), "200 MiB");
}

// docs/performance.md, "Round size": 4 MiB rounds up to 64 ranks, 8 MiB above.
TEST(CoreCoverageSizingPlan, DefaultRoundSizeDoublesAbove64Ranks) {
  EXPECT_EQ(default_batch_bytes(1), std::uint64_t{4} << 20);
  EXPECT_EQ(default_batch_bytes(kSmallBatchMaxRanks), std::uint64_t{4} << 20);
  EXPECT_EQ(default_batch_bytes(kSmallBatchMaxRanks + 1), std::uint64_t{8} << 20);
}

}  // namespace
}  // namespace bloomshard::core
