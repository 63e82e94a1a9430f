// The end pass of the one input order on an uncompressed output, without
// MPI: retracted lines cut by byte ranges found by walking the input beside
// the output, each cut line's key checked against the retracted hash.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/round/retracted_line_cut.hpp"
#include "bloomshard/core/key_hash.hpp"

// A file system without copy_file_range (EXDEV across file systems, ENOSYS
// on old kernels, EOPNOTSUPP on some FUSE and network file systems), for the
// tests that set it: the end pass then copies through a buffer
// (pread/pwrite). This definition in the test binary takes the place of
// libc's for the app library linked into it; unset, it is the system call.
namespace {
std::atomic<bool> copy_file_range_missing{false};
}  // namespace

extern "C" ssize_t copy_file_range(int fd_in, __off64_t* off_in, int fd_out, __off64_t* off_out,
                                   size_t length, unsigned int flags) {
  if (copy_file_range_missing) {
    errno = ENOSYS;
    return -1;
  }
  return ::syscall(SYS_copy_file_range, fd_in, off_in, fd_out, off_out, length, flags);
}

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// While alive: copy_file_range fails with ENOSYS.
struct NoCopyFileRange {
  NoCopyFileRange() { copy_file_range_missing = true; }
  ~NoCopyFileRange() { copy_file_range_missing = false; }
  NoCopyFileRange(const NoCopyFileRange&) = delete;
  NoCopyFileRange& operator=(const NoCopyFileRange&) = delete;
};

// The test's key of a line: its text up to the first ':' (terminator off).
std::optional<core::KeyHash> cut_line_key(std::string_view line) {
  if (line.ends_with('\n')) line.remove_suffix(line.ends_with("\r\n") ? 2 : 1);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return core::hash_key(line.substr(0, colon));
}

class RetractedLineCut : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-line-cut-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Input lines; the output holds the kept ones: a(0) b c e f. "a:2" and
    // "d" were duplicates of earlier copies.
    const std::vector<std::string> lines = {"a:0\n", "b:1\r\n", "a:2\n", "c:3\n",
                                            "d:4\n", "e:5\n",   "f:6"};
    for (const std::string& l : lines) {
      at_.push_back(input_.size());
      input_ += l;
    }
    in_ = write("in.jsonl", input_);
    out_ = write("out.jsonl", output_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  RetractedLine retracted(std::size_t line, std::string_view key) const {
    return {at_[line], core::hash_key(key)};
  }
  PartWithoutRetracted plan(const std::vector<RetractedLine>& r) const {
    return plan_output_without_retracted(in_, input_.size(), out_, output_.size(), r, cut_line_key);
  }
  // Expects the plan of `r` to be refused with a message naming the output
  // and containing `why`.
  void expect_refused(const std::vector<RetractedLine>& r, const std::string& why) const {
    try {
      (void)plan(r);
      ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("out.jsonl"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }

  fs::path dir_;
  std::string input_;
  std::vector<std::uint64_t> at_;
  const std::string output_ = "a:0\nb:1\r\nc:3\ne:5\nf:6";
  fs::path in_;
  fs::path out_;
};

TEST_F(RetractedLineCut, CutsExactlyTheRetractedLinesByByteRanges) {
  // c, and f (the last line, no newline) retracted.
  const PartWithoutRetracted p = plan({retracted(3, "c"), retracted(6, "f")});
  EXPECT_EQ(p.removed_lines, 2u);
  EXPECT_EQ(p.removed_bytes, 7u);
  write_output_without_retracted(out_, p, true);
  EXPECT_EQ(read(out_), "a:0\nb:1\r\ne:5\n");
  EXPECT_FALSE(fs::exists(out_.string() + ".retracted-tmp"));
}

TEST_F(RetractedLineCut, TheFirstAndAdjacentLinesCutLeaveTheRestByteForByte) {
  // a(0) is the written copy of "a" (the duplicate "a:2" was never written);
  // b with its CRLF goes too.
  const PartWithoutRetracted p = plan({retracted(0, "a"), retracted(1, "b")});
  write_output_without_retracted(out_, p, false);
  EXPECT_EQ(read(out_), "c:3\ne:5\nf:6");
}

TEST_F(RetractedLineCut, NothingRetractedKeepsTheWholeOutput) {
  const PartWithoutRetracted p =
      plan_output_without_retracted(dir_ / "absent", 0, out_, output_.size(), {}, cut_line_key);
  write_output_without_retracted(out_, p, false);
  EXPECT_EQ(read(out_), output_);
}

TEST_F(RetractedLineCut, ALineWithAnotherKeyThanTheRetractedOneIsAnError) {
  // The owner retracted key "x" at e's offset: the output does not match.
  expect_refused({retracted(3, "c"), {at_[5], core::hash_key("x")}}, "another key");
  // A line without a key at the retracted offset: the same.
  expect_refused({{at_[3], core::hash_key("c:3")}}, "another key");
  EXPECT_EQ(read(out_), output_) << "a refused plan must not touch the output";
}

TEST_F(RetractedLineCut, AnOffsetThatIsNoWrittenLineIsAnError) {
  // "a:2" and "d" were never written; an offset inside a line; past the end.
  expect_refused({retracted(2, "a")}, "is not a line of the output");
  expect_refused({retracted(4, "d")}, "is not a line of the output");
  expect_refused({{at_[3] + 1, core::hash_key("c")}}, "is not a line of the output");
  expect_refused({{input_.size() + 5, core::hash_key("c")}}, "is not a line of the output");
  // Two retractions of one line.
  expect_refused({retracted(3, "c"), retracted(3, "c")}, "is not a line of the output");
}

TEST_F(RetractedLineCut, AnOutputLineTheInputLacksIsAnError) {
  const std::string foreign = "a:0\nzz:9\n";
  const fs::path out = write("foreign.jsonl", foreign);
  EXPECT_THROW((void)plan_output_without_retracted(in_, input_.size(), out, foreign.size(),
                                                   std::vector{retracted(6, "f")}, cut_line_key),
               std::runtime_error);
}

TEST_F(RetractedLineCut, CopiesOutputsLargerThanOneCopyCall) {
  // 3 MiB of lines around one cut in the middle.
  std::string input;
  std::string output;
  std::uint64_t cut_at = 0;
  for (int i = 0; i < 100000; ++i) {
    const std::string line = "k" + std::to_string(i) + ":" + std::string(20, 'v') + "\n";
    if (i == 50000) cut_at = input.size();
    input += line;
    output += line;
  }
  const fs::path in = write("big.jsonl", input);
  const fs::path out = write("big.out", output);
  const PartWithoutRetracted p = plan_output_without_retracted(
      in, input.size(), out, output.size(),
      std::vector{RetractedLine{cut_at, core::hash_key("k50000")}}, cut_line_key);
  write_output_without_retracted(out, p, false);
  const std::string cut_line = "k50000:" + std::string(20, 'v') + "\n";
  EXPECT_EQ(read(out), output.substr(0, cut_at) + output.substr(cut_at + cut_line.size()));
}

TEST_F(RetractedLineCut, WithoutCopyFileRangeTheBufferCopyCutsTheSameLines) {
  const NoCopyFileRange missing;
  const PartWithoutRetracted p = plan({retracted(3, "c"), retracted(6, "f")});
  write_output_without_retracted(out_, p, true);
  EXPECT_EQ(read(out_), "a:0\nb:1\r\ne:5\n");
  EXPECT_FALSE(fs::exists(out_.string() + ".retracted-tmp"));
  // More than one buffer (1 MiB) of lines around one cut.
  std::string input;
  std::uint64_t cut_at = 0;
  for (int i = 0; i < 100000; ++i) {
    if (i == 50000) cut_at = input.size();
    input += "k" + std::to_string(i) + ":" + std::string(20, 'v') + "\n";
  }
  const fs::path in = write("big.jsonl", input);
  const fs::path out = write("big.out", input);
  write_output_without_retracted(
      out,
      plan_output_without_retracted(in, input.size(), out, input.size(),
                                    std::vector{RetractedLine{cut_at, core::hash_key("k50000")}},
                                    cut_line_key),
      false);
  const std::size_t cut_bytes = ("k50000:" + std::string(20, 'v') + "\n").size();
  EXPECT_EQ(read(out), input.substr(0, cut_at) + input.substr(cut_at + cut_bytes));
}

}  // namespace
}  // namespace bloomshard::app
