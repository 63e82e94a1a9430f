// The walk of an input range beside its output part (the join and the end
// pass both place retracted lines with it) on its less travelled paths: a
// line longer than the read buffer, an input shorter than its recorded
// range, a missing input, an empty part and a retracted offset after the
// last written line. Each gives the right plan or a loud error naming the
// file, never a plan that cuts the wrong bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/split/range_join.hpp"
#include "app/split/retracted_lines.hpp"
#include "io/output/reject_writer.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class WrittenLineWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-line-walk-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  static std::string apply(const std::string& part, const PartWithoutRetracted& plan) {
    std::string out;
    for (const auto& [from, to] : plan.keep) out += part.substr(from, to - from);
    return out;
  }
  // Expects `plan` to throw a message holding each of `words`.
  template <class F>
  static void expect_refused(F plan, const std::vector<std::string>& words) {
    try {
      plan();
      ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
      for (const std::string& w : words) {
        EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
      }
    }
  }
  fs::path dir_;
};

TEST_F(WrittenLineWalk, ALineLongerThanTheReadBufferIsWalkedWhole) {
  // A 9 MiB line (the buffer starts at 4 MiB and must double twice), kept,
  // between short ones; the line after it retracted.
  const std::string huge = std::string(9u << 20, 'h') + "\n";
  const std::string input = "a\n" + huge + "b\n" + "c\n";
  const std::string part = input;  // every line kept
  const fs::path in = write("in.txt", input);
  const fs::path out = write("part", part);
  const std::uint64_t b_at = 2 + huge.size();
  const PartWithoutRetracted plan =
      plan_part_without_retracted(in, 0, input.size(), out, part.size(), std::vector{b_at});
  EXPECT_EQ(plan.removed_lines, 1u);
  EXPECT_EQ(plan.removed_bytes, 2u);
  EXPECT_EQ(apply(part, plan), "a\n" + huge + "c\n");
}

TEST_F(WrittenLineWalk, AnInputShorterThanItsRecordedRangeIsRefusedNamingIt) {
  // The input lost its tail after the run recorded the range [0, 12) and
  // wrote x3 from it.
  const fs::path in = write("in.txt", "x1\nx2\n");
  const fs::path out = write("part", "x1\nx2\nx3\n");
  expect_refused(
      [&] { (void)plan_part_without_retracted(in, 0, 12, out, 9, std::vector<std::uint64_t>{6}); },
      {in.string(), "ends at byte 6, before 12"});
}

TEST_F(WrittenLineWalk, APartShorterThanItsCommittedLengthIsRefusedNamingIt) {
  const fs::path in = write("in.txt", "x1\nx2\nx3\n");
  const fs::path out = write("part", "x1\nx2\n");
  expect_refused(
      [&] { (void)plan_part_without_retracted(in, 0, 9, out, 9, std::vector<std::uint64_t>{6}); },
      {out.string(), "ends at byte 6, before 9"});
}

TEST_F(WrittenLineWalk, AMissingInputIsRefusedNamingIt) {
  const fs::path out = write("part", "x1\n");
  expect_refused(
      [&] {
        (void)plan_part_without_retracted(dir_ / "gone.txt", 0, 3, out, 3,
                                          std::vector<std::uint64_t>{0});
      },
      {"cannot open", (dir_ / "gone.txt").string()});
}

TEST_F(WrittenLineWalk, ARetractedOffsetNoWrittenLineHasIsRefused) {
  const std::string input = "x1\nx2\nx3\n";
  const fs::path in = write("in.txt", input);
  // An empty part holds no line at all: nothing to cut, so a retraction of
  // it is an error, not a no-op.
  const fs::path empty = write("empty", "");
  expect_refused(
      [&] {
        (void)plan_part_without_retracted(in, 0, input.size(), empty, 0,
                                          std::vector<std::uint64_t>{3});
      },
      {"the retracted record at byte 3 is not a line of its output part", empty.string()});
  // A part whose last written line comes before the retracted offset.
  const fs::path part = write("part", "x1\nx2\n");
  expect_refused(
      [&] {
        (void)plan_part_without_retracted(in, 0, input.size(), part, 6,
                                          std::vector<std::uint64_t>{0, 6});
      },
      {"the retracted record at byte 6 is not a line of its output part"});
}

TEST(SplitRejectsCoverage, ALastRejectLineWithoutANewlineIsRenumberedAsItIs) {
  // The join renumbers a range's rejects by whole lines; a last line
  // without its newline (a part cut short by hand) is renumbered too, and
  // no newline is made up for it.
  std::string lines;
  io::append_reject_json(lines, "/in/a.jsonl", 1, "missing key field", "{}", false);
  io::append_reject_json(lines, "/in/a.jsonl", 2, "missing key field", "[]", false);
  ASSERT_TRUE(lines.ends_with('\n'));
  lines.pop_back();
  std::string expected;
  io::append_reject_json(expected, "/in/a.jsonl", 10, "missing key field", "{}", false);
  io::append_reject_json(expected, "/in/a.jsonl", 11, "missing key field", "[]", false);
  expected.pop_back();
  EXPECT_EQ(renumber_rejects(lines, "/in/a.jsonl", 10), expected);
}

}  // namespace
}  // namespace bloomshard::app
