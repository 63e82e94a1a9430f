// The state directory's names and listing (store/state_dir.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bloomshard/store/state_dir.hpp"

namespace bloomshard::store {
namespace {

namespace fs = std::filesystem;

TEST(StoreStateDir, RunNamesRoundTrip) {
  const std::uint64_t id = (std::uint64_t{12} << 32) | 0x00ab01cdU;
  const fs::path p = run_path("/s", id);
  EXPECT_EQ(p, fs::path("/s/run-12-00ab01cd.h5"));
  EXPECT_EQ(run_id_of(p), id);
  EXPECT_EQ(run_id_of(fs::path("/s/run-12-00ab01cd.h5.tmp")), id);
  EXPECT_FALSE(run_id_of(fs::path("/s/run-12-ab01cd.h5")));
  EXPECT_FALSE(run_id_of(fs::path("/s/ckpt-12.h5")));
}

TEST(StoreStateDir, GenerationNames) {
  EXPECT_EQ(generation_path("/s", 7), fs::path("/s/ckpt-7.h5"));
  EXPECT_EQ(generation_of("ckpt-7.h5", false), 7U);
  EXPECT_FALSE(generation_of("ckpt-7.h5", true));
  EXPECT_EQ(generation_of("ckpt-7.h5.tmp", true), 7U);
  EXPECT_FALSE(generation_of("ckpt-x.h5", false));
  EXPECT_FALSE(generation_of("ckpt-.h5", false));
}

TEST(StoreStateDir, ResumeTriesLatestThenNewestFirst) {
  const fs::path dir = fs::temp_directory_path() / ("state-dir-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::uint64_t g : std::vector<std::uint64_t>{3, 5, 9}) {
    std::ofstream(generation_path(dir, g)) << "x";
  }
  std::ofstream(dir / "ckpt-11.h5.tmp") << "x";  // never committed
  EXPECT_EQ(list_generations(dir), (std::vector<std::uint64_t>{9, 5, 3}));
  EXPECT_EQ(resume_candidates(dir), (std::vector<std::uint64_t>{9, 5, 3}));
  std::ofstream(dir / "LATEST") << "5\n";
  EXPECT_EQ(read_latest(dir), 5U);
  EXPECT_EQ(resume_candidates(dir), (std::vector<std::uint64_t>{5, 9, 3}));
  std::ofstream(dir / "LATEST") << "7\n";  // names a generation whose file is gone
  EXPECT_EQ(resume_candidates(dir), (std::vector<std::uint64_t>{9, 5, 3}));
  std::ofstream(dir / "LATEST") << "5x";
  EXPECT_FALSE(read_latest(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bloomshard::store
