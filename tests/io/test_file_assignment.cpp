// assign_files_to_ranks: LPT balance bound, determinism, tie-breaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "io/records/file_assignment.hpp"

namespace bloomshard::io {
namespace {

std::vector<std::uint64_t> loads(const std::vector<std::uint64_t>& sizes,
                                 const std::vector<int>& owner, int ranks) {
  std::vector<std::uint64_t> load(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    load[static_cast<std::size_t>(owner[i])] += sizes[i] + 1;
  }
  return load;
}

TEST(IoAssign, BalancedWithinTheLptBound) {
  std::mt19937_64 rng(3);
  for (const int ranks : {1, 2, 3, 4, 7, 16}) {
    std::vector<std::uint64_t> sizes(300);
    for (auto& s : sizes) s = rng() % 1000000 + (rng() % 20 == 0 ? 5000000 : 0);
    const auto owner = assign_files_to_ranks(sizes, ranks);
    ASSERT_EQ(owner.size(), sizes.size());
    for (const int o : owner) {
      EXPECT_GE(o, 0);
      EXPECT_LT(o, ranks);
    }
    const auto load = loads(sizes, owner, ranks);
    const std::uint64_t total = std::accumulate(load.begin(), load.end(), std::uint64_t{0});
    const std::uint64_t biggest = *std::max_element(sizes.begin(), sizes.end()) + 1;
    const double lower_bound =
        std::max(static_cast<double>(total) / ranks, static_cast<double>(biggest));
    const auto max_load = static_cast<double>(*std::max_element(load.begin(), load.end()));
    EXPECT_LE(max_load, lower_bound * 4.0 / 3.0) << ranks << " ranks";
  }
}

TEST(IoAssign, DeterministicWithDocumentedTieBreaks) {
  const std::vector<std::uint64_t> equal(8, 100);
  EXPECT_EQ(assign_files_to_ranks(equal, 3), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1}));
  const std::vector<std::uint64_t> sizes{5, 9, 1, 9, 0, 0, 3};
  // Order by size: 1(9) 3(9) 0(5) 6(3) 2(1) 4(0) 5(0).
  // 1->r0(10) 3->r1(10) 0->r0(16) 6->r1(14) 2->r1(16) 4->r0(17) 5->r1(17).
  EXPECT_EQ(assign_files_to_ranks(sizes, 2), (std::vector<int>{0, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(assign_files_to_ranks(sizes, 2), assign_files_to_ranks(sizes, 2));
}

TEST(IoAssign, MoreRanksThanFilesAndEmptyFiles) {
  const std::vector<std::uint64_t> three{10, 20, 30};
  EXPECT_EQ(assign_files_to_ranks(three, 5), (std::vector<int>{2, 1, 0}));
  const std::vector<std::uint64_t> empties(6, 0);
  EXPECT_EQ(assign_files_to_ranks(empties, 3), (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_TRUE(assign_files_to_ranks(std::vector<std::uint64_t>{}, 4).empty());
  EXPECT_THROW((void)assign_files_to_ranks(three, 0), std::invalid_argument);
}

TEST(IoAssign, InputFileOverloadUsesSizes) {
  std::vector<InputFile> files(4);
  files[0].size = 1;
  files[1].size = 100;
  files[2].size = 50;
  files[3].size = 49;
  // Weights 2 101 51 50: 1->r0, 2->r1, 3->r1 (101), 0 ties at 101 -> r0.
  EXPECT_EQ(assign_files_to_ranks(files, 2), (std::vector<int>{0, 0, 1, 1}));
}

}  // namespace
}  // namespace bloomshard::io
