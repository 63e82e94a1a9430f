// The store's real-file paths (docs/coverage.md): mapping a file that
// cannot be opened or mapped is refused naming the file and the system's
// reason, an empty file maps to no bytes, a range past the end names the
// dataset and the sizes, and the read-ahead hints leave the bytes as they
// are; in a state directory only files named as run files are listed as
// runs (sorted), and a LATEST that is missing, too long or not a number
// names no generation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bloomshard/store/file_mapping.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/state_dir.hpp"

namespace bloomshard::store {
namespace {

namespace fs = std::filesystem;

// A fresh directory of this test process, removed with its files.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The CheckpointError text of mapping `path`, or a marker.
std::string map_refusal(const fs::path& path) {
  try {
    (void)FileMapping::map(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(mapped)";
}

TEST(StoreCoverageFiles, AFileThatCannotBeOpenedOrMappedIsNamedWithTheReason) {
  const TempDir dir("store-map");
  const fs::path missing = dir.path() / "ckpt-3.h5";
  EXPECT_EQ(map_refusal(missing),
            "cannot open " + missing.string() + " to map it: No such file or directory");
  // A directory opens read-only, but has no pages to map.
  EXPECT_EQ(map_refusal(dir.path()), "cannot mmap " + dir.path().string() + ": No such device");
}

TEST(StoreCoverageFiles, AnEmptyFileMapsToNoBytesAndAnyRangeOfItIsPastTheEnd) {
  const TempDir dir("store-map-empty");
  const fs::path empty = dir.path() / "empty.h5";
  std::ofstream(empty, std::ios::binary).flush();
  const auto mapping = FileMapping::map(empty);
  EXPECT_EQ(mapping->size(), 0U);
  EXPECT_TRUE(mapping->range(0, 0, "/tier2/bytes").empty());
  mapping->advise_random();  // no pages: nothing to advise, no fault
  mapping->advise_willneed();
  try {
    (void)mapping->range(0, 1, "/tier2/bytes");
    ADD_FAILURE() << "a range of an empty file was given";
  } catch (const CheckpointError& e) {
    EXPECT_STREQ(e.what(),
                 "/tier2/bytes lies beyond the end of the file (offset 0 + 1 > 0 bytes): the file "
                 "is truncated");
  }
}

TEST(StoreCoverageFiles, ReadAheadHintsLeaveTheBytesAndRangesAreBounded) {
  const TempDir dir("store-map-hints");
  const fs::path file = dir.path() / "run.h5";
  std::string bytes(3 * 4096 + 100, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  std::ofstream(file, std::ios::binary) << bytes;
  const auto mapping = FileMapping::map(file);
  mapping->advise_random();
  mapping->advise_willneed();
  mapping->advise_willneed(5000, 1 << 20);     // past the end: clipped
  mapping->advise_willneed(bytes.size(), 10);  // at the end: nothing
  mapping->advise_willneed(10, 0);             // empty: nothing
  const auto all = mapping->range(0, bytes.size(), "/tier2/bytes");
  ASSERT_EQ(all.size(), bytes.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(all.data()), all.size()), bytes);
  EXPECT_EQ(mapping->range(bytes.size() - 1, 1, "x")[0], static_cast<std::byte>(bytes.back()));
  EXPECT_THROW((void)mapping->range(bytes.size() + 1, 1, "x"), CheckpointError);  // offset past
  EXPECT_THROW((void)mapping->range(1, bytes.size(), "x"), CheckpointError);      // length past
  EXPECT_THROW((void)mapping->range(~0ULL, 2, "x"), CheckpointError);             // no overflow
}

TEST(StoreCoverageFiles, OnlyRunFileNamesAreListedAsRunsSorted) {
  const TempDir dir("store-runs");
  for (const char* name :
       {"run-2-0000000a.h5", "run-1-ffffffff.h5", "run-1-0000000b.h5.tmp", "run-1-0000000g.h5",
        "run-1-gggggggg.h5", "run-1-000000001.h5", "run-x-0000000a.h5",
        "run-4294967296-00000001.h5", "run-1.h5", "run-1-0000000a.h5.bak", "ckpt-3.h5", "LATEST"}) {
    std::ofstream(dir.path() / name) << "x";
  }
  const std::vector<fs::path> runs = list_run_files(dir.path());
  std::vector<std::string> names;
  for (const fs::path& p : runs) names.push_back(p.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"run-1-0000000b.h5.tmp", "run-1-ffffffff.h5",
                                             "run-2-0000000a.h5"}));
  EXPECT_EQ(run_id_of(runs[1]), (std::uint64_t{1} << 32) | 0xffffffffU);
  EXPECT_TRUE(list_run_files(dir.path() / "no-such-dir").empty());
}

TEST(StoreCoverageFiles, ALatestThatIsMissingTooLongOrNotANumberNamesNoGeneration) {
  const TempDir dir("store-latest");
  EXPECT_FALSE(read_latest(dir.path()));  // missing
  std::ofstream(dir.path() / "LATEST") << "12";
  EXPECT_EQ(read_latest(dir.path()), 12U);  // no newline
  std::ofstream(dir.path() / "LATEST") << "";
  EXPECT_FALSE(read_latest(dir.path()));  // empty
  std::ofstream(dir.path() / "LATEST") << std::string(70, '1');
  EXPECT_FALSE(read_latest(dir.path()));  // longer than any generation number
  std::ofstream(dir.path() / "LATEST") << "18446744073709551615\n";
  EXPECT_EQ(read_latest(dir.path()), 18446744073709551615ULL);
  std::ofstream(dir.path() / "LATEST") << "18446744073709551616\n";
  EXPECT_FALSE(read_latest(dir.path()));  // past 64 bits
  // A directory named like a generation is not one.
  fs::create_directories(dir.path() / "ckpt-4.h5");
  std::ofstream(dir.path() / "ckpt-2.h5") << "x";
  EXPECT_EQ(list_generations(dir.path()), std::vector<std::uint64_t>{2});
  EXPECT_TRUE(list_generations(dir.path() / "no-such-dir").empty());
}

}  // namespace
}  // namespace bloomshard::store
