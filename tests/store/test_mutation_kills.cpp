// Store behaviour that the mutation check (tests/mutation/mutate.py) found
// untested: how many keys the header check samples, the longest generation
// number, and that a mapping is unmapped when its last owner lets go.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/store/file_mapping.hpp"
#include "bloomshard/store/key_sample.hpp"
#include "bloomshard/store/state_dir.hpp"

namespace bloomshard::store {
namespace {

namespace fs = std::filesystem;

// The first key of each of the first `limit` non-empty slices, no fewer.
TEST(StoreKeySample, TakesTheFirstKeyOfExactlyLimitNonEmptySlices) {
  std::vector<core::SliceBaseData> data(20);
  std::vector<core::SliceBaseView> views;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (i % 4 != 3) data[i] = {{i + 1}, {0, 1}, {static_cast<char>('a' + i)}};
    views.push_back(data[i].view());
  }
  std::vector<SampledKey> out;
  sample_first_keys(views, 100, "run.h5", out, 4);
  ASSERT_EQ(out.size(), 4U);
  EXPECT_EQ(out[0].slice, 100U);
  EXPECT_EQ(out[3].slice, 104U);  // slice 103 is empty
  EXPECT_EQ(out[3].key, "e");
  EXPECT_EQ(out[3].where, "the first key of run.h5 tier-2 slice 104");
  out.clear();
  sample_first_keys(views, 0, "run.h5", out);
  EXPECT_EQ(out.size(), 15U);  // 15 non-empty slices, fewer than kSampledKeysPerRun
}

// A generation number may use all 20 digits of a uint64; 21 are refused.
TEST(StoreStateDir, GenerationNumbersUpTo20Digits) {
  EXPECT_EQ(generation_of("ckpt-18446744073709551615.h5", false),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(generation_of("ckpt-00000000000000000007.h5", false), 7U);
  EXPECT_FALSE(generation_of("ckpt-000000000000000000007.h5", false));
  EXPECT_FALSE(generation_of("ckpt-18446744073709551616.h5", false));  // 2^64
}

// Every hex digit of a run's tag counts, the first one too.
TEST(StoreStateDir, ARunTagReadsAllEightHexDigits) {
  EXPECT_EQ(run_id_of("run-12-1a2b3c4d.h5"), (std::uint64_t{12} << 32) | 0x1a2b3c4dU);
  EXPECT_EQ(run_id_of("run-12-f0000000.h5.tmp"), (std::uint64_t{12} << 32) | 0xf0000000U);
}

// Lines of /proc/self/maps that map `path`.
int mappings_of(const fs::path& path) {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find(path.string()) != std::string::npos) ++n;
  }
  return n;
}

TEST(StoreFileMapping, TheLastOwnerUnmapsTheFile) {
  const fs::path path =
      fs::temp_directory_path() / ("mapping-" + std::to_string(::getpid()) + ".bin");
  std::ofstream(path, std::ios::binary) << std::string(8192, 'x');
  {
    const auto mapping = FileMapping::map(path);
    EXPECT_EQ(mapping->size(), 8192U);
    EXPECT_EQ(mappings_of(path), 1);
  }
  EXPECT_EQ(mappings_of(path), 0);
  fs::remove(path);
}

}  // namespace
}  // namespace bloomshard::store
