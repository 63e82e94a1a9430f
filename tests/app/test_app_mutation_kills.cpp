// Tests that kill surviving mutants of the options, feed, split and state
// folders (docs/testing.md "Mutation check", the sample beyond the first
// five folders): each asserts what a user sees (a refusal's words and exit
// code), not how the code gets there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/options/dedup_options.hpp"

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

}  // namespace
}  // namespace bloomshard::app
