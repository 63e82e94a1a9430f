// The pre-flight of written paths on a real directory tree. The read-only
// case needs a read-only mount (root ignores permission bits): it is
// tested for real in tests/faults/path_rules.sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include "app/guard/path_preflight.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;
using Kind = WritePath::Kind;

class PathPreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-preflight-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "afile") << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string check(std::vector<WritePath> paths) { return check_write_paths(paths); }
  fs::path dir_;
};

TEST_F(PathPreflightTest, AcceptsNewDirsAndFilesInThem) {
  EXPECT_EQ(check({{"--output", dir_ / "a/b/out", Kind::kDirectory},
                   {"--metrics", dir_ / "a/b/out/m.json", Kind::kFile},
                   {"--metrics", dir_ / "m.json", Kind::kFile}}),
            "");
  EXPECT_FALSE(fs::exists(dir_ / "a")) << "the check created something";
  EXPECT_EQ(check({{"--output", dir_.string() + "/out/", Kind::kDirectory}}), "");
}

TEST_F(PathPreflightTest, NamesTheOptionThePathAndTheReason) {
  const std::string d = dir_.string();
  EXPECT_EQ(check({{"--metrics", dir_ / "nope/m.json", Kind::kFile}}),
            "--metrics '" + d + "/nope/m.json': its directory '" + d + "/nope' does not exist");
  EXPECT_EQ(check({{"--output", dir_ / "afile/out", Kind::kDirectory}}),
            "--output '" + d + "/afile/out': '" + d + "/afile' is not a directory");
  EXPECT_EQ(check({{"--output", dir_ / "afile", Kind::kDirectory}}),
            "--output '" + d + "/afile': it exists and is not a directory");
  EXPECT_EQ(check({{"--metrics", dir_ / "in", Kind::kFile}}),
            "--metrics '" + d + "/in': it is a directory, not a file");
  EXPECT_EQ(check({{"--metrics", dir_ / "afile/m.json", Kind::kFile}}),
            "--metrics '" + d + "/afile/m.json': '" + d + "/afile' is not a directory");
}

TEST_F(PathPreflightTest, OverlapWithInputsEitherWay) {
  const std::vector<fs::path> inputs{dir_ / "in"};
  EXPECT_NE(overlap_with_inputs("output dir", dir_ / "in/out", inputs).find("overlap"),
            std::string::npos);
  EXPECT_NE(overlap_with_inputs("--state", dir_, inputs).find("overlap"), std::string::npos);
  EXPECT_EQ(overlap_with_inputs("output dir", dir_ / "out", inputs), "");
}

}  // namespace
}  // namespace bloomshard::app
