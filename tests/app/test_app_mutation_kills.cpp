// Tests that kill surviving mutants of the options and round folders
// (docs/testing.md "Mutation check", the sample beyond the first
// five folders): each asserts what a user sees (a refusal's words and exit
// code), not how the code gets there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/options/dedup_options.hpp"
#include "app/round/layer_growth.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class AppMutationKills : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-app-kills-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "in");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A checkpoint cadence without a --state dir has nowhere to write: refused
// before any work for the smallest cadence too (1 round, 1 second), not only
// for larger ones (checkpoint_options.cpp: `> 0`, a mutant made it `> 1`).
TEST_F(AppMutationKills, ACheckpointCadenceOfOneWithoutAStateIsRefused) {
  const std::string in = (dir_ / "in").string();
  for (const char* flag : {"--checkpoint-rounds", "--checkpoint-every"}) {
    const ParsedDedup p = parse_dedup_options({"--input", in, "--output", "o", flag, "1"});
    ASSERT_TRUE(p.exit_code) << flag;
    EXPECT_EQ(*p.exit_code, kExitUsage) << flag;
    EXPECT_NE(p.message.find("--checkpoint-every/--checkpoint-rounds need --state"),
              std::string::npos)
        << p.message;
  }
}

// A line limit equal to the key limit is accepted (a line that is all key
// fits); one byte less is refused (feed_options.cpp: `<`, a mutant made it
// `<=` and refused the equal limits).
TEST_F(AppMutationKills, ALineLimitEqualToTheKeyLimitIsAcceptedOneLessIsNot) {
  const std::string in = (dir_ / "in").string();
  const ParsedDedup equal = parse_dedup_options(
      {"--input", in, "--output", "o", "--max-line-bytes", "4096", "--max-key-bytes", "4096"});
  EXPECT_FALSE(equal.exit_code) << equal.message;
  const ParsedDedup less = parse_dedup_options(
      {"--input", in, "--output", "o", "--max-line-bytes", "4096", "--max-key-bytes", "4097"});
  ASSERT_TRUE(less.exit_code);
  EXPECT_EQ(*less.exit_code, kExitUsage);
  EXPECT_NE(less.message.find("--max-line-bytes must be >= --max-key-bytes"), std::string::npos)
      << less.message;
}

// An unknown option typed with one dash or three still gets the suggestion
// of its name: every leading dash is stripped, one at a time (a mutant
// stripped two at a time and suggested from "ey-f").
TEST_F(AppMutationKills, AnOptionWithOneOrThreeDashesIsSuggestedByItsName) {
  const std::string in = (dir_ / "in").string();
  for (const char* typed : {"-key-f", "---key-f"}) {
    const ParsedDedup p = parse_dedup_options({"--input", in, "--output", "o", typed, "id"});
    ASSERT_TRUE(p.exit_code) << typed;
    EXPECT_EQ(*p.exit_code, kExitUsage) << typed;
    EXPECT_NE(p.message.find(std::string("unrecognised option '") + typed +
                             "' (did you mean --key-field?)"),
              std::string::npos)
        << p.message;
  }
}

// A sub-round decides at most the newest layer's capacity less one key per
// rank pair (route()'s rounding slack, ranks^2) once the layer holds more
// than twice that slack, else half the capacity (layer_growth.hpp). A
// mutant that moved the threshold to three times the slack halved
// sub-rounds of layers between 2 and 3 slacks.
TEST(AppMutationKillsLayerGrowth, ASubRoundTakesTheCapacityLessTheSlackAboveTwiceTheSlack) {
  core::ScalableBloomParams params;
  params.initial_capacity = 10;
  params.fpr_target = 0.01;
  params.num_slices = 8;
  core::TwoTierSet set(params, {0, 8});
  const std::uint64_t capacity = set.bloom().layer_geometry(0).capacity;
  std::uint32_t ranks = 1;  // the rank count whose slack r^2 puts capacity in (2 r^2, 3 r^2]
  while (!(2 * ranks * ranks < capacity && capacity <= 3 * ranks * ranks) && ranks < 64) ++ranks;
  ASSERT_LT(ranks, 64U) << "capacity " << capacity;
  const std::uint64_t slack = std::uint64_t{ranks} * ranks;
  EXPECT_EQ(LayerGrowth(ranks, 0).max_keys(set), capacity - slack) << "capacity " << capacity;
  // At exactly twice the slack or below: half the capacity.
  const std::uint32_t big = ranks + 1;  // 2 (r+1)^2 >= capacity
  ASSERT_LE(capacity, 2 * std::uint64_t{big} * big);
  EXPECT_EQ(LayerGrowth(big, 0).max_keys(set), std::max<std::uint64_t>(1, capacity / 2));
}

}  // namespace
}  // namespace bloomshard::app
