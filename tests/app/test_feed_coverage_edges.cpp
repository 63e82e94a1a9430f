// Edges of src/app/feed that the coverage run found untaken, in process:
// the input sample behind the plan line (a CRLF line's key is the LF
// line's; a sample without keys has no duplicate fraction; a sampled kind
// that read no bytes is scaled by the rate of all samples), and the window
// check of a resume when the input's windows cannot be read (removed after
// the listing, or not a regular file any more): a refusal that names the
// file, never a crash or a silent pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/feed/input_sample.hpp"
#include "app/feed/input_windows.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class FeedCoverageEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bloomshard-feed-edges-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }

  std::vector<io::InputFile> inputs() const {
    const std::vector<fs::path> paths{dir_};
    return io::discover_inputs(paths);
  }

  fs::path dir_;
};

DedupConfig id_keys() {
  DedupConfig c;
  c.key.fields = {"id"};
  return c;
}

TEST_F(FeedCoverageEdges, ASampledCrlfLineHasTheKeyOfItsLfTwin) {
  write("a.txt", "same\r\nsame\nother\r\n");
  const InputSample s = sample_inputs(id_keys(), inputs());
  EXPECT_EQ(s.records, 3U);
  EXPECT_EQ(s.keys, 3U);
  EXPECT_EQ(s.duplicates, 1U);              // "same\r" would be a key of its own
  EXPECT_DOUBLE_EQ(s.key_bytes, 13.0 / 3);  // "same", "same", "other": no '\r'
}

TEST_F(FeedCoverageEdges, ASampleWithoutKeysHasNoDuplicateFraction) {
  write("a.jsonl", "not json\n{\"other\":1}\n");
  const InputSample s = sample_inputs(id_keys(), inputs());
  EXPECT_EQ(s.records, 2U);
  EXPECT_EQ(s.keys, 0U);
  EXPECT_EQ(s.duplicate_fraction(), 0.0);  // not 0/0
}

TEST_F(FeedCoverageEdges, AKindWhoseSampleReadNoBytesTakesTheRateOfAllSamples) {
  // 100 plain records of 20 bytes, and a .gz input that is not gzip: its
  // sample breaks before a byte (the job reports the damage when it reads
  // there), so the rate of the samples that read something sizes it.
  std::string plain;
  for (int i = 0; i < 100; ++i) {
    const std::string id = std::to_string(1000 + i);
    plain += "{\"id\":\"" + id + "\",\"t\":1}\n";
  }
  ASSERT_EQ(plain.size(), 2000U);
  write("a.jsonl", plain);
  write("b.jsonl.gz", std::string(1000, 'z'));
  const InputSample s = sample_inputs(id_keys(), inputs());
  EXPECT_EQ(s.files, 2U);
  EXPECT_EQ(s.records, 100U);
  // a.jsonl exactly (100), b's 1000 bytes at 100 records per 2000 bytes (50).
  EXPECT_EQ(s.estimated_records, 150U);
}

InputProgress started_input(const fs::path& path, std::uint64_t size) {
  InputProgress p;
  p.file.absolute_path = path;
  p.file.relative_path = path.filename().string();
  p.file.size = size;
  p.cursor.records = 1;
  p.cursor.decompressed_offset = size;
  p.window = InputWindow{size, 1};
  return p;
}

TEST_F(FeedCoverageEdges, AnInputRemovedAfterTheListingIsRefusedByName) {
  write("gone.txt", "line\n");
  const InputProgress then = started_input(dir_ / "gone.txt", 5);
  io::InputFile now = then.file;
  fs::remove(dir_ / "gone.txt");
  const std::string why = window_difference(then, now);
  EXPECT_EQ(why.rfind("its windows cannot be read: cannot open '", 0), 0U) << why;
  EXPECT_NE(why.find("gone.txt"), std::string::npos) << why;
}

TEST_F(FeedCoverageEdges, AnInputThatIsNoLongerAFileIsRefusedByName) {
  fs::create_directories(dir_ / "was-a-file.txt");
  const InputProgress then = started_input(dir_ / "was-a-file.txt", 5);
  const std::string why = window_difference(then, then.file);
  EXPECT_EQ(why.rfind("its windows cannot be read: cannot read '", 0), 0U) << why;
  EXPECT_NE(why.find("was-a-file.txt': Is a directory"), std::string::npos) << why;
}

}  // namespace
}  // namespace bloomshard::app
