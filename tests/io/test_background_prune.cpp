// prune_generations_in_background: deletes the same generations as the
// synchronous prune, one at a time, and hands a failure to the next wait
// instead of throwing on its thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint_generations.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

void touch_generation(const TempDir& dir, std::uint64_t g) {
  std::ofstream(generation_path(dir.path(), g)) << "generation " << g;
}

TEST(BackgroundPrune, KeepsTheNewestAndReportsNoError) {
  TempDir dir;
  for (std::uint64_t g = 1; g <= 5; ++g) touch_generation(dir, g);
  prune_generations_in_background(dir.path(), 4, 2);  // never touches 5 (newer)
  prune_generations_in_background(dir.path(), 5, 2);  // waits for the first
  EXPECT_EQ(wait_for_background_prune(), "");
  EXPECT_EQ(list_generations(dir.path()), (std::vector<std::uint64_t>{5, 4}));
  EXPECT_EQ(wait_for_background_prune(), "");  // nothing pending
}

TEST(BackgroundPrune, FailureIsReturnedByTheNextWait) {
  TempDir dir;
  for (std::uint64_t g = 1; g <= 3; ++g) touch_generation(dir, g);
  prune_generations_in_background(dir.path(), 3, 0);  // keep = 0: prune_generations refuses
  const std::string error = wait_for_background_prune();
  EXPECT_NE(error.find("not deleted"), std::string::npos) << error;
  EXPECT_NE(error.find(dir.path().string()), std::string::npos) << error;
  EXPECT_NE(error.find("keep must be >= 1"), std::string::npos) << error;
  EXPECT_EQ(wait_for_background_prune(), "");  // reported once
  EXPECT_EQ(list_generations(dir.path()).size(), 3U);
}

// The temporaries of killed writes go at the next start; names that are
// not of our patterns, and committed files, stay.
TEST(StaleTemporaries, RemovesOurTmpNamesOnly) {
  TempDir dir;
  touch_generation(dir, 3);
  const std::filesystem::path run = run_path(dir.path(), (std::uint64_t{3} << 32) | 0xabcdU);
  std::ofstream(run) << "run";
  const std::vector<std::string> ours{"ckpt-4.h5.tmp", run.filename().string() + ".tmp",
                                      "run-4-0000beef.h5.tmp", "LATEST.tmp", ".reserve.tmp"};
  const std::vector<std::string> others{"notes.tmp", "ckpt-x.h5.tmp", "run-4-beef.h5.tmp",
                                        "RUN.json"};
  for (const auto& n : ours) std::ofstream(dir.path() / n) << "x";
  for (const auto& n : others) std::ofstream(dir.path() / n) << "x";
  EXPECT_EQ(remove_stale_temporaries(dir.path()).size(), ours.size());
  for (const auto& n : ours) EXPECT_FALSE(std::filesystem::exists(dir.path() / n)) << n;
  for (const auto& n : others) EXPECT_TRUE(std::filesystem::exists(dir.path() / n)) << n;
  EXPECT_TRUE(std::filesystem::exists(run));
  EXPECT_EQ(list_generations(dir.path()), (std::vector<std::uint64_t>{3}));
  EXPECT_TRUE(remove_stale_temporaries(dir.path() / "missing").empty());
}

// No attempt makes a directory by a temporary's name: one that sits there
// is not ours to delete (the write that needs the name reports it).
TEST(StaleTemporaries, LeavesDirectoriesOfOurNames) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / ".reserve.tmp" / "occupied");
  std::filesystem::create_directory(dir.path() / "ckpt-5.h5.tmp");
  EXPECT_TRUE(remove_stale_temporaries(dir.path()).empty());
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / ".reserve.tmp" / "occupied"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "ckpt-5.h5.tmp"));
}

}  // namespace
}  // namespace bloomshard::io
