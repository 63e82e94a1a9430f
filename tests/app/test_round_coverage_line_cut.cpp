// The end pass's byte-range copy on its less travelled paths: an output or
// a temporary path it cannot open, a plan that reaches past the output's
// end, and an output on another file system than its folder, where the
// kernel refuses copy_file_range (EXDEV) and the copy goes through a buffer.
// Each must give the same bytes as the in-kernel copy or a loud error naming
// the file, never a short or padded output, and leave no temporary file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/round/retracted_line_cut.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// Where an output on another file system than the test's folder can live:
// /dev/shm is a tmpfs on the machines the project runs on.
const fs::path kOtherFileSystem = "/dev/shm";

class LineCutCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string tag = "bloomshard-cut-copy-" + std::to_string(::getpid());
    dir_ = fs::temp_directory_path() / tag;
    fs::create_directories(dir_);
    out_ = dir_ / "out.jsonl";
    write(out_, output_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    if (!elsewhere_.empty()) fs::remove(elsewhere_);
  }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Makes out_ a symlink to a file with `bytes` on another file system, or
  // returns false where there is none.
  bool output_on_another_file_system(const std::string& bytes) {
    struct stat here {};
    struct stat there {};
    if (::stat(dir_.c_str(), &here) != 0 || ::stat(kOtherFileSystem.c_str(), &there) != 0 ||
        here.st_dev == there.st_dev) {
      return false;
    }
    elsewhere_ = kOtherFileSystem / ("bloomshard-cut-copy-" + std::to_string(::getpid()));
    write(elsewhere_, bytes);
    fs::remove(out_);
    fs::create_symlink(elsewhere_, out_);
    return true;
  }
  // Expects write_cut_output(plan) to throw a message holding `what` and
  // `file`, and no temporary file left.
  void expect_copy_refused(const PartWithoutRetracted& plan, const std::string& what,
                           const fs::path& file) const {
    try {
      (void)write_cut_output(out_, plan, true);
      ADD_FAILURE() << "copied";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(cut_output_temp_path(out_))) << "a temporary file was left";
  }

  fs::path dir_;
  fs::path out_;
  fs::path elsewhere_;
  const std::string output_ = "a:0\nb:1\r\nc:3\ne:5\nf:6";
};

TEST_F(LineCutCopy, AMissingOutputIsRefusedNamingIt) {
  fs::remove(out_);
  expect_copy_refused({.keep = {{0, 4}}}, "cannot open", out_);
}

TEST_F(LineCutCopy, ATemporaryPathThatCannotBeCreatedIsRefusedNamingIt) {
  // A folder where the temporary file goes: open(O_WRONLY) fails (EISDIR).
  fs::create_directories(cut_output_temp_path(out_) / "taken");
  try {
    (void)write_cut_output(out_, {.keep = {{0, 4}}}, false);
    ADD_FAILURE() << "copied";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create '" + cut_output_temp_path(out_).string()),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read(out_), output_) << "a refused copy must not touch the output";
}

TEST_F(LineCutCopy, APlanPastTheOutputsEndIsRefusedNotCopiedShort) {
  // The output shrank after the plan (or the plan is wrong): the copy stops
  // with an error instead of writing a shorter file.
  expect_copy_refused({.keep = {{0, 4}, {9, output_.size() + 10}}}, "read past the end of", out_);
  EXPECT_EQ(read(out_), output_);
}

TEST_F(LineCutCopy, AnOutputOnAnotherFileSystemIsCutThroughABufferToTheSameBytes) {
  if (!output_on_another_file_system(output_)) {
    GTEST_SKIP() << kOtherFileSystem << " is not another file system here";
  }
  // Three kept ranges around two cut lines (b and e): each range must land
  // right after the one before it.
  const PartWithoutRetracted plan{.keep = {{0, 4}, {9, 13}, {17, output_.size()}}};
  EXPECT_EQ(write_cut_output(out_, plan, true), 11u);
  commit_cut_output(out_, true);
  EXPECT_EQ(read(out_), "a:0\nc:3\nf:6");
  EXPECT_FALSE(fs::exists(cut_output_temp_path(out_)));
}

TEST_F(LineCutCopy, ABufferedCopyOfSeveralBuffersKeepsEveryByteInPlace) {
  // 3 MiB of lines (the buffer holds 1 MiB) with one line cut in the middle.
  std::string big;
  std::uint64_t cut_at = 0;
  std::uint64_t cut_end = 0;
  for (int i = 0; i < 100000; ++i) {
    if (i == 50000) cut_at = big.size();
    big += "k" + std::to_string(i) + ":" + std::string(20, 'v') + "\n";
    if (i == 50000) cut_end = big.size();
  }
  if (!output_on_another_file_system(big)) {
    GTEST_SKIP() << kOtherFileSystem << " is not another file system here";
  }
  write_output_without_retracted(out_, {.keep = {{0, cut_at}, {cut_end, big.size()}}}, false);
  // Compared whole, not by EXPECT_EQ: gtest's diff of two 3 MiB texts takes minutes.
  const std::string got = read(out_);
  const std::string want = big.substr(0, cut_at) + big.substr(cut_end);
  EXPECT_TRUE(got == want)
      << got.size() << " bytes, want " << want.size() << "; first differing at "
      << std::distance(got.begin(),
                       std::mismatch(got.begin(), got.end(), want.begin(), want.end()).first);
}

TEST_F(LineCutCopy, ABufferedCopyPastTheOutputsEndIsRefusedNamingIt) {
  if (!output_on_another_file_system(output_)) {
    GTEST_SKIP() << kOtherFileSystem << " is not another file system here";
  }
  expect_copy_refused({.keep = {{0, output_.size() + 1}}}, "read past the end of", out_);
  EXPECT_EQ(read(out_), output_);
}

}  // namespace
}  // namespace bloomshard::app
