// The start's file work that the binary's tests reach rarely or not at all,
// in process on real files (counted by the coverage build):
//  - --revalidate-inputs' check of a changed input's records read so far
//    (revalidate_consumed_prefix): each way it refuses, and the one way it
//    accepts;
//  - rank 0's setup (setup_on_rank0): inputs that cannot be found, an input
//    dir without input files, and a stale temporary of a killed attempt
//    that cannot be deleted (a read-only tmpfs; root only, skipped elsewhere);
//  - the metrics of a finished run written from its state
//    (write_metrics_of_finished_run): never over an existing file, never
//    from a generation that does not read.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/run/job_setup.hpp"
#include "app/run/metrics_file.hpp"
#include "app/run/run_state.hpp"
#include "io/records/input_file.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class RunSetupCoverageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-setupcov-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
  }
  void TearDown() override {
    if (mounted_) ::umount(mount_.c_str());
    fs::remove_all(dir_);
  }

  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  }
  static std::string text_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static io::InputFile input_file(const fs::path& p) { return io::discover_inputs({{p}}).at(0); }
  // The progress of a run that read the first `n` records of `p`, as a
  // checkpoint records it (cursor and the digest of what was read).
  static InputProgress read_first(const fs::path& p, std::uint64_t n) {
    InputProgress progress;
    progress.file = input_file(p);
    io::RecordReader reader;
    reader.open(progress.file);
    io::Record r;
    for (std::uint64_t i = 0; i < n; ++i) EXPECT_TRUE(reader.next(r)) << "record " << i;
    progress.cursor = reader.cursor();
    progress.prefix_digest = reader.prefix_digest();
    return progress;
  }

  fs::path dir_;
  fs::path mount_;
  bool mounted_ = false;
};

const std::string kFourRecords = "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n{\"id\":\"d\"}\n";

TEST_F(RunSetupCoverageTest, RevalidationAcceptsAnInputWhoseRecordsReadAreUnchanged) {
  const fs::path f = dir_ / "in/a.jsonl";
  write(f, kFourRecords);
  const InputProgress then = read_first(f, 3);
  write(f, kFourRecords + "{\"id\":\"e\"}\n");  // appended after what was read
  EXPECT_EQ(revalidate_consumed_prefix(then, input_file(f)), "");
}

TEST_F(RunSetupCoverageTest, RevalidationRefusesAnOlderCheckpointWithoutADigest) {
  const fs::path f = dir_ / "in/a.jsonl";
  write(f, kFourRecords);
  InputProgress then = read_first(f, 2);
  then.prefix_digest.reset();
  EXPECT_EQ(revalidate_consumed_prefix(then, input_file(f)),
            "the checkpoint holds no digest of what was read (an older version, or an input read "
            "in the lockstep layout, which saves none)");
}

TEST_F(RunSetupCoverageTest, RevalidationRefusesAnInputThatNowEndsBeforeTheCursor) {
  const fs::path f = dir_ / "in/a.jsonl";
  write(f, kFourRecords);
  const InputProgress then = read_first(f, 4);
  write(f, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
  EXPECT_EQ(revalidate_consumed_prefix(then, input_file(f)), "it now ends after 2");
}

TEST_F(RunSetupCoverageTest, RevalidationRefusesOtherRecordsOfTheSameOrAnotherLength) {
  const fs::path f = dir_ / "in/a.jsonl";
  write(f, kFourRecords);
  const InputProgress then = read_first(f, 3);
  // Same bytes count, another record: only the digest tells.
  write(f, "{\"id\":\"a\"}\n{\"id\":\"X\"}\n{\"id\":\"c\"}\n{\"id\":\"d\"}\n");
  EXPECT_EQ(revalidate_consumed_prefix(then, input_file(f)),
            "its first 3 records are not the ones read before");
  // A longer record: the offset after the third record moved too.
  write(f, "{\"id\":\"a\"}\n{\"id\":\"bb\"}\n{\"id\":\"c\"}\n{\"id\":\"d\"}\n");
  EXPECT_EQ(revalidate_consumed_prefix(then, input_file(f)),
            "its first 3 records are not the ones read before");
}

TEST_F(RunSetupCoverageTest, RevalidationRefusesAnInputThatCannotBeReadUpToTheCursor) {
  const fs::path f = dir_ / "in/a.jsonl";
  write(f, kFourRecords);
  InputProgress then = read_first(f, 3);
  // The same name, now a gzip stream that breaks in its first bytes.
  const fs::path gz = dir_ / "in/a.jsonl.gz";
  write(gz, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + "not deflate data");
  then.file = input_file(gz);
  const std::string why = revalidate_consumed_prefix(then, input_file(gz));
  EXPECT_EQ(why.rfind("it cannot be read up to the cursor: ", 0), 0U) << why;
}

TEST_F(RunSetupCoverageTest, SetupRefusesInputsThatCannotBeFoundBeforeAnyWork) {
  DedupConfig c;
  c.inputs = {(dir_ / "missing").string()};
  c.output_dir = (dir_ / "out").string();
  c.state_dir = (dir_ / "state").string();
  const std::string setup = setup_on_rank0(c);
  ASSERT_FALSE(setup.empty());
  EXPECT_EQ(setup[0], static_cast<char>(kExitUsage)) << setup;
  EXPECT_NE(setup.find((dir_ / "missing").string()), std::string::npos) << setup;
  EXPECT_FALSE(fs::exists(dir_ / "state"));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(RunSetupCoverageTest, SetupRefusesAnInputDirWithNoInputFiles) {
  fs::create_directories(dir_ / "in/empty-subdir");
  DedupConfig c;
  c.inputs = {(dir_ / "in").string()};
  c.output_dir = (dir_ / "out").string();
  c.state_dir = (dir_ / "state").string();
  EXPECT_EQ(setup_on_rank0(c),
            std::string(1, static_cast<char>(kExitUsage)) + "no input files found");
  EXPECT_FALSE(fs::exists(dir_ / "state"));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(RunSetupCoverageTest, SetupFailsNamingAStaleTemporaryItCannotDelete) {
  mount_ = dir_ / "ro";
  fs::create_directories(mount_);
  if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (not root?): " << std::strerror(errno);
  }
  mounted_ = true;
  // A killed attempt's LATEST.tmp in a state dir that became read-only.
  fs::create_directories(mount_ / "state");
  write(mount_ / "state/LATEST.tmp", "7\n");
  ASSERT_EQ(::mount("tmpfs", mount_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=1m"), 0)
      << std::strerror(errno);
  write(dir_ / "in/a.jsonl", kFourRecords);
  DedupConfig c;
  c.inputs = {(dir_ / "in").string()};
  c.output_dir = (dir_ / "out").string();
  c.state_dir = (mount_ / "state").string();
  const std::string setup = setup_on_rank0(c);
  ASSERT_FALSE(setup.empty());
  EXPECT_EQ(setup[0], static_cast<char>(kExitFailure)) << setup;
  EXPECT_NE(
      setup.find("cannot delete the stale temporary " + (mount_ / "state/LATEST.tmp").string()),
      std::string::npos)
      << setup;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "the failed setup prepared the output dir";
}

TEST_F(RunSetupCoverageTest, FinishedRunMetricsNeverOverwriteAFileNorComeFromAnUnreadableState) {
  DedupConfig c;
  c.state_dir = (dir_ / "state").string();
  c.metrics_path = (dir_ / "metrics.json").string();
  // Newest generation (LATEST) and an older one, neither an HDF5 file.
  fs::create_directories(dir_ / "state");
  write(dir_ / "state/ckpt-1.h5", "not a checkpoint");
  write(dir_ / "state/ckpt-2.h5", "not a checkpoint either");
  write(dir_ / "state/LATEST", "2\n");
  write_metrics_of_finished_run(c);
  EXPECT_FALSE(fs::exists(c.metrics_path)) << "metrics written from a state that does not read";
  // A metrics file that exists is the user's (or an earlier finish's).
  write(c.metrics_path, "{\"kept\":true}\n");
  write_metrics_of_finished_run(c);
  EXPECT_EQ(text_of(c.metrics_path), "{\"kept\":true}\n");
}

}  // namespace
}  // namespace bloomshard::app
