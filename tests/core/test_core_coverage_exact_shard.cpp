// The exact shard's refusals (docs/coverage.md): a slice range that is not a
// non-empty part of [0, P) is refused at construction, a run index past the
// runs held is refused, and a merged slice is written only into spans of
// exactly the sizes merged_slice_size gave, never past them.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/exact_shard.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/sorted_run.hpp"

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

}  // namespace
}  // namespace bloomshard::core
