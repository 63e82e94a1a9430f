// decide_start's refusals that need no checkpoint, in process, on real
// files: a RUN.json that names no run, and a --state path that is not a
// directory. (The refusals that need a saved generation run through the
// binary: tests/e2e/start_refusals.sh.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/run/run_state.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class StartDecisionCoverageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-startcov-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "in/a.jsonl") << "{\"id\":\"a\"}\n";
    config_.inputs = {(dir_ / "in").string()};
    config_.output_dir = (dir_ / "out").string();
    config_.state_dir = (dir_ / "state").string();
    args_ = {dir_ / "in"};
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<io::InputFile> inputs() const { return io::discover_inputs(args_); }

  static std::string text_of(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
  DedupConfig config_;
  std::vector<fs::path> args_;
};

// A RUN.json without a run_id (cut short by a crash of a build that did
// not rename it into place, or written by hand) is not this run's: the
// start must not take the output dir as its own restart's.
TEST_F(StartDecisionCoverageTest, ARunJsonThatNamesNoRunIsAnotherRunsState) {
  fs::create_directories(dir_ / "state");
  const fs::path identity = dir_ / "state" / kRunIdentityName;
  for (const std::string text : {"", "{}\n", "{\"run_id\":"}) {
    std::ofstream(identity, std::ios::trunc) << text;
    const StartDecision d = decide_start(config_, args_, inputs());
    EXPECT_EQ(d.exit_code, kExitUsage) << d.error;
    EXPECT_NE(d.error.find("state dir '" + config_.state_dir + "' belongs to another run (" +
                           std::string(kRunIdentityName) + " run_id , this run " +
                           run_identity(config_, inputs()) + ") that wrote no checkpoint"),
              std::string::npos)
        << "RUN.json '" << text << "': " << d.error;
    EXPECT_EQ(text_of(identity), text) << "the refused start rewrote RUN.json";
    EXPECT_FALSE(fs::exists(dir_ / "out")) << "the refused start prepared the output dir";
  }
}

// --state naming a regular file: the start fails naming it (exit 1), it
// neither writes into it nor prepares the output dir.
TEST_F(StartDecisionCoverageTest, AStatePathThatIsAFileFailsTheStartNamingIt) {
  std::ofstream(dir_ / "state") << "not a directory\n";
  const StartDecision d = decide_start(config_, args_, inputs());
  EXPECT_EQ(d.exit_code, kExitFailure) << d.error;
  EXPECT_EQ(d.error.rfind("cannot prepare the run: ", 0), 0U) << d.error;
  EXPECT_NE(d.error.find(config_.state_dir), std::string::npos) << d.error;
  EXPECT_EQ(text_of(dir_ / "state"), "not a directory\n");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace
}  // namespace bloomshard::app
