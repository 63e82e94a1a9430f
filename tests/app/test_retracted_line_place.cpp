// The end pass placing retracted lines by the output's offset map
// (app/round/retracted_line_place.hpp), without MPI: the plan is the one
// the walk beside the input makes, and any check that fails (the output
// not the length the map wrote, a resumed output, a line holding another
// key, a place that is not a line's start) gives no plan, so that the
// caller walks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "app/round/retracted_line_place.hpp"
#include "bloomshard/core/key_hash.hpp"

// Its own namespace: its helpers share names with test_retracted_annotations.cpp (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::app::retracted_line_place_tests {
namespace {

namespace fs = std::filesystem;

// The test's key of a line: its text up to the first ':' (terminator off).
std::optional<core::KeyHash> placed_line_key(std::string_view line) {
  if (line.ends_with('\n')) line.remove_suffix(line.ends_with("\r\n") ? 2 : 1);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return core::hash_key(line.substr(0, colon));
}

std::vector<RetractedLine> lines(std::initializer_list<RetractedLine> l) { return l; }

class RetractedLinePlace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bloomshard-line-place-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the input of `lines` and the output of those with keep[i], and
  // notes the written ones in map_ as the feed does.
  void make(const std::vector<std::string>& lines, const std::vector<bool>& keep) {
    input_.clear();
    output_.clear();
    at_.clear();
    map_ = core::OutputOffsetMap();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      at_.push_back(input_.size());
      if (keep[i]) {
        EXPECT_TRUE(map_.note_written(input_.size(), lines[i].size()));
        output_ += lines[i];
      }
      input_ += lines[i];
    }
    in_ = dir_ / "in.jsonl";
    out_ = dir_ / "out.jsonl";
    std::ofstream(in_, std::ios::binary) << input_;
    std::ofstream(out_, std::ios::binary) << output_;
  }
  RetractedLine retracted(std::size_t line, std::string_view key) const {
    return {at_[line], core::hash_key(key)};
  }
  std::optional<PartWithoutRetracted> by_map(const std::vector<RetractedLine>& r) const {
    return plan_cut_by_offset_map(out_, output_.size(), map_, r, placed_line_key);
  }
  PartWithoutRetracted by_walk(const std::vector<RetractedLine>& r) const {
    return plan_output_without_retracted(in_, input_.size(), out_, output_.size(), r,
                                         placed_line_key);
  }
  void expect_same_plan(const std::vector<RetractedLine>& r) const {
    const std::optional<PartWithoutRetracted> m = by_map(r);
    ASSERT_TRUE(m) << "the map gave no plan where the walk places every line";
    const PartWithoutRetracted w = by_walk(r);
    EXPECT_EQ(m->keep, w.keep);
    EXPECT_EQ(m->removed_lines, w.removed_lines);
    EXPECT_EQ(m->removed_bytes, w.removed_bytes);
  }

  fs::path dir_;
  std::string input_;
  std::string output_;
  std::vector<std::uint64_t> at_;
  core::OutputOffsetMap map_;
  fs::path in_;
  fs::path out_;
};

const std::vector<std::string> kLines = {"a:0\n", "b:1\r\n", "a:2\n", "c:3\n",
                                         "d:4\n", "e:5\n",   "f:6"};
const std::vector<bool> kKeep = {true, true, false, true, false, true, true};

TEST_F(RetractedLinePlace, PlacesTheLinesTheWalkPlaces) {
  make(kLines, kKeep);                                       // the output: a:0 b:1 c:3 e:5 f:6
  expect_same_plan({retracted(3, "c"), retracted(6, "f")});  // f: the last line, no newline
  expect_same_plan({retracted(0, "a"), retracted(1, "b")});  // the first, and a CRLF line
  expect_same_plan({retracted(5, "e")});
  expect_same_plan({});
  const std::optional<PartWithoutRetracted> p = by_map({retracted(3, "c"), retracted(6, "f")});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->removed_lines, 2U);
  EXPECT_EQ(p->removed_bytes, 7U);
  write_output_without_retracted(out_, *p, false);
  std::ifstream in(out_, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "a:0\nb:1\r\ne:5\n");
}

TEST_F(RetractedLinePlace, PlacesLongLinesAcrossSeveralReads) {
  // Lines longer than the first read (1 KiB) and than 8x it.
  const std::vector<std::string> lines = {"x:" + std::string(3000, 'x') + "\n",
                                          "y:" + std::string(20000, 'y') + "\n", "z:1\n",
                                          "w:" + std::string(9000, 'w')};
  make(lines, {true, false, true, true});
  expect_same_plan({retracted(0, "x"), retracted(3, "w")});
}

TEST_F(RetractedLinePlace, RandomOutputsGiveTheWalksPlan) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 30; ++round) {
    std::vector<std::string> lines;
    std::vector<bool> keep;
    const int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      lines.push_back("k" + std::to_string(i) + ":" + std::string(rng() % 40, 'v') +
                      (rng() % 5 == 0 ? "\r\n" : "\n"));
      keep.push_back(rng() % 3 != 0);
    }
    make(lines, keep);
    std::vector<RetractedLine> r;
    for (int i = 0; i < n; ++i) {
      if (keep[static_cast<std::size_t>(i)] && rng() % 4 == 0) {
        r.push_back(retracted(static_cast<std::size_t>(i), "k" + std::to_string(i)));
      }
    }
    expect_same_plan(r);
    if (HasFatalFailure()) return;
  }
}

TEST_F(RetractedLinePlace, AnOutputOfAnotherLengthThanTheMapsIsLeftToTheWalk) {
  make(kLines, kKeep);
  // A resumed output, or one changed since: its length is not what the map
  // noted.
  EXPECT_FALSE(plan_cut_by_offset_map(out_, output_.size() + 4, map_, lines({retracted(3, "c")}),
                                      placed_line_key));
  EXPECT_FALSE(plan_cut_by_offset_map(out_, output_.size() - 1, map_, lines({retracted(3, "c")}),
                                      placed_line_key));
  core::OutputOffsetMap broken = map_;
  broken.break_map();
  EXPECT_FALSE(plan_cut_by_offset_map(out_, output_.size(), broken, lines({retracted(3, "c")}),
                                      placed_line_key));
}

TEST_F(RetractedLinePlace, AMismatchingLineIsLeftToTheWalk) {
  make(kLines, kKeep);
  // Another key at a written line's place.
  EXPECT_FALSE(by_map({{at_[3], core::hash_key("x")}}));
  // A line that was not written (a duplicate, left out).
  EXPECT_FALSE(by_map({retracted(2, "a")}));
  // Not a line's start: the map would place it inside a line.
  EXPECT_FALSE(by_map({{at_[3] + 1, core::hash_key("c")}}));
  // Offsets out of order, or twice.
  EXPECT_FALSE(by_map({retracted(5, "e"), retracted(3, "c")}));
  EXPECT_FALSE(by_map({retracted(3, "c"), retracted(3, "c")}));
  // The output changed under the map (same length, bytes moved): the line
  // at the mapped place holds another key.
  std::ofstream(out_, std::ios::binary) << "a:0\nb:1\r\nXc:3\n:5\nf:6";
  EXPECT_FALSE(by_map({retracted(3, "c")}));
}

TEST_F(RetractedLinePlace, APlaceInsideALineIsLeftToTheWalkEvenWhereItsTailLooksRight) {
  // "bc:1"'s tail "c:1" holds key "c": only the newline check before the
  // place tells it is not a line of its own.
  make({"a:0\n", "bc:1\n", "c:2\n"}, {true, true, true});
  EXPECT_FALSE(by_map({{at_[1] + 1, core::hash_key("c")}}));
  EXPECT_TRUE(by_map({retracted(2, "c")}));
}

TEST_F(RetractedLinePlace, AMapThatWroteLessThanItsRunHoldsIsLeftToTheWalk) {
  make(kLines, kKeep);
  // A map whose run ends inside the retracted line: the line does not end
  // within what the map says was written there.
  core::OutputOffsetMap short_run;
  ASSERT_TRUE(short_run.note_written(0, at_[2]));  // a:0 b:1
  ASSERT_TRUE(short_run.note_written(at_[3], 2));  // "c:" only
  ASSERT_TRUE(short_run.note_written(at_[3] + 3, output_.size() - at_[2] - 2));
  ASSERT_EQ(short_run.output_length(), output_.size());
  EXPECT_FALSE(plan_cut_by_offset_map(out_, output_.size(), short_run, lines({retracted(3, "c")}),
                                      placed_line_key));
}

}  // namespace
}  // namespace bloomshard::app::retracted_line_place_tests
