// missing_or_short_output: the outputs a checkpoint's manifest records must
// exist with at least their committed lengths before a resume or an
// "already finished" start; the first missing or short one is named with
// both lengths.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/guard/output_guard.hpp"
#include "app/guard/output_presence.hpp"
#include "app/run/run_manifest.hpp"
#include "app/split/split_inputs.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class OutputPresenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("bloomshard-presence-" + std::to_string(::getpid()));
    fs::remove_all(out_);
    fs::create_directories(out_ / "zst");
    fs::create_directories(out_ / kRejectsDirName);
    put("a.jsonl", 10);
    put("zst/b.jsonl.zst", 20);
    put(std::string(kRejectsDirName) + "/rejects-0.jsonl", 5);
    m_.output_dir = out_.string();
    m_.inputs.push_back(input("a.jsonl", 10, true));
    m_.inputs.push_back(input("zst/b.jsonl.zst", 20, false));
    m_.rejects.push_back({"rejects-0.jsonl", 5});
  }
  void TearDown() override { fs::remove_all(out_); }

  void put(const std::string& rel, std::size_t bytes) {
    std::ofstream(out_ / rel, std::ios::binary) << std::string(bytes, 'x');
  }
  static InputProgress input(const std::string& rel, std::uint64_t length, bool done) {
    InputProgress p;
    p.file.relative_path = rel;
    p.output_length = length;
    p.done = done;
    return p;
  }

  fs::path out_;
  RunManifest m_;
};

TEST_F(OutputPresenceTest, AllPresentAtLeastCommitted) {
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
  put("a.jsonl", 15);  // longer: a resume cuts it back
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
}

TEST_F(OutputPresenceTest, MissingFileIsNamedWithItsCommittedLength) {
  fs::remove(out_ / "zst/b.jsonl.zst");
  const std::string why = missing_or_short_output(m_, out_);
  EXPECT_NE(why.find("'" + (out_ / "zst/b.jsonl.zst").string() + "' has 20 committed bytes"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("is missing"), std::string::npos) << why;
}

// An end pass killed before its renames (docs/inputs.md "With --state"): the
// committed bytes of a recorded cut are in the temporary file, which may be
// longer than the output (annotate mode flags lines, dolma's grow).
TEST_F(OutputPresenceTest, ARecordedCutIsCheckedInItsTemporaryFileUntilRenamed) {
  m_.inputs[0].output_length = 14;
  m_.input_order.emplace();
  m_.input_order->cut_outputs.push_back({0, 14});
  put("a.jsonl.retracted-tmp", 14);  // the output itself still has its 10 bytes
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
  put("a.jsonl.retracted-tmp", 12);
  std::string why = missing_or_short_output(m_, out_);
  EXPECT_NE(why.find("a.jsonl.retracted-tmp' has 14 committed bytes"), std::string::npos) << why;
  // Renamed already: the output is checked.
  fs::remove(out_ / "a.jsonl.retracted-tmp");
  why = missing_or_short_output(m_, out_);
  EXPECT_NE(why.find("a.jsonl' has 14 committed bytes in the checkpoint but is only 10 bytes"),
            std::string::npos)
      << why;
  put("a.jsonl", 14);
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
  // A temporary file no generation records is not the output.
  m_.input_order->cut_outputs.clear();
  put("a.jsonl", 10);
  put("a.jsonl.retracted-tmp", 14);
  EXPECT_NE(missing_or_short_output(m_, out_).find("a.jsonl' has 14"), std::string::npos);
}

TEST_F(OutputPresenceTest, ShortFileIsNamedWithBothLengths) {
  put("a.jsonl", 4);
  const std::string why = missing_or_short_output(m_, out_);
  EXPECT_NE(why.find("a.jsonl' has 10 committed bytes in the checkpoint but is only 4 bytes"),
            std::string::npos)
      << why;
}

TEST_F(OutputPresenceTest, RejectFilesCountAndTheRestAreCounted) {
  fs::remove(out_ / kRejectsDirName / "rejects-0.jsonl");
  fs::remove(out_ / "a.jsonl");
  const std::string why = missing_or_short_output(m_, out_);
  EXPECT_NE(why.find("a.jsonl' has 10 committed bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("(and 1 more missing or short outputs)"), std::string::npos) << why;
}

TEST_F(OutputPresenceTest, DoneEmptyMirrorMustExistUnlessSkipped) {
  m_.inputs.push_back(input("c.jsonl", 0, true));
  EXPECT_NE(missing_or_short_output(m_, out_).find("c.jsonl' has 0 committed bytes"),
            std::string::npos);
  m_.inputs.back().skipped = "cannot open";  // a broken input may have no output
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
  m_.inputs.back() = input("c.jsonl", 0, false);  // not started: nothing recorded
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
}

TEST_F(OutputPresenceTest, PartsOfAnUnfinishedSplitInput) {
  InputProgress p = input("big.jsonl", 0, false);
  p.ranges.resize(2);
  p.ranges[0].output_length = 3;
  p.ranges[1].output_length = 7;
  m_.inputs.push_back(p);
  put("big.jsonl", 3);
  const fs::path part = range_output_path(out_, "big.jsonl", 1);
  EXPECT_NE(missing_or_short_output(m_, out_).find(part.string()), std::string::npos);
  fs::create_directories(part.parent_path());
  std::ofstream(part, std::ios::binary) << std::string(7, 'x');
  EXPECT_EQ(missing_or_short_output(m_, out_), "");
}

}  // namespace
}  // namespace bloomshard::app
