// The input sample behind dedup's plan line: a file shorter than the sample
// is counted exactly (records, keys, duplicates, key bytes); longer plain,
// gzip and zstd files are scaled from their first MiB (a zstd decoder's
// input runs a block ahead of its output); files beyond the sampled
// ones are scaled by the same rate; unparsable lines count as records
// without keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "app/feed/input_sample.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class InputSampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("bloomshard-sample-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `records` JSON lines with ids from `first_id` on, repeating
  // every `distinct` records, and a text of varying length.
  void write_jsonl(const std::string& name, int records, int distinct, int first_id = 100000) {
    io::OutputWriter out =
        io::OutputWriter::create(dir_ / name, io::classify_path(name).compression);
    for (int i = 0; i < records; ++i) {
      std::string line = "{\"id\":\"doc-" + std::to_string(first_id + i % distinct) +
                         "\",\"text\":\"" +
                         std::string(static_cast<std::size_t>(40 + i % 61), 'x') +
                         std::to_string(i * 7919 % 1000003) + "\"}";
      out.write(line, "\n");
    }
    out.close();
  }

  std::vector<io::InputFile> inputs() const {
    const std::vector<fs::path> paths{dir_};
    return io::discover_inputs(paths);
  }

  fs::path dir_;
};

DedupConfig config() {
  DedupConfig c;
  c.key.fields = {"id"};
  return c;
}

TEST_F(InputSampleTest, AFileShorterThanTheSampleIsCountedExactly) {
  write_jsonl("a.jsonl", 1000, 800);  // ids repeat after 800: 200 duplicates
  const InputSample s = sample_inputs(config(), inputs());
  EXPECT_EQ(s.files, 1U);
  EXPECT_EQ(s.records, 1000U);
  EXPECT_EQ(s.keys, 1000U);
  EXPECT_EQ(s.duplicates, 200U);
  EXPECT_EQ(s.estimated_records, 1000U);
  EXPECT_DOUBLE_EQ(s.key_bytes, 10.0);  // "doc-1xxxxx"
  EXPECT_NEAR(s.duplicate_fraction(), 0.2, 1e-12);
}

TEST_F(InputSampleTest, LongerFilesAreScaledFromTheirFirstMiB) {
  // ~120 bytes a line: 60000 lines are ~7 MiB, several times the sample.
  write_jsonl("a.jsonl", 60000, 60000);
  write_jsonl("b.jsonl.gz", 60000, 60000, 200000);
  write_jsonl("c.jsonl.zst", 60000, 60000, 300000);
  const InputSample s = sample_inputs(config(), inputs());
  EXPECT_EQ(s.files, 3U);
  EXPECT_LT(s.records, 3U * 60000U);
  EXPECT_EQ(s.duplicates, 0U);
  EXPECT_NEAR(static_cast<double>(s.estimated_records), 180000.0, 180000.0 * 0.02);
}

TEST_F(InputSampleTest, FilesBeyondTheSampledOnesTakeTheirRate) {
  for (int f = 0; f < 9; ++f) write_jsonl("part-" + std::to_string(f) + ".jsonl", 20000, 20000);
  const InputSample s = sample_inputs(config(), inputs());
  EXPECT_EQ(s.files, kSampleFiles);
  EXPECT_NEAR(static_cast<double>(s.estimated_records), 180000.0, 180000.0 * 0.02);
}

TEST_F(InputSampleTest, LinesWithoutAKeyAreRecordsButNoKeys) {
  {
    io::OutputWriter out = io::OutputWriter::create(dir_ / "a.jsonl", io::Compression::kNone);
    out.write("{\"id\":\"x\"}", "\n");
    out.write("not json", "\n");
    out.write("{\"other\":1}", "\n");
    out.close();
  }
  const InputSample s = sample_inputs(config(), inputs());
  EXPECT_EQ(s.records, 3U);
  EXPECT_EQ(s.keys, 1U);
  EXPECT_EQ(s.estimated_records, 3U);
}

TEST_F(InputSampleTest, NoRecordNoEstimate) {
  { io::OutputWriter::create(dir_ / "empty.jsonl", io::Compression::kNone).close(); }
  const InputSample s = sample_inputs(config(), inputs());
  EXPECT_EQ(s.records, 0U);
  EXPECT_EQ(s.estimated_records, 0U);
}

}  // namespace
}  // namespace bloomshard::app
