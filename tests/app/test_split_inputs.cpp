// Split inputs (issue 12) without MPI: the manifest's ranges round-trip and
// are checked on reading, ranges become tasks balanced by unread bytes, and
// range-relative reject line numbers are made absolute.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "bloomshard/app/range_join.hpp"
#include "bloomshard/app/rank_tasks.hpp"
#include "bloomshard/app/run_manifest.hpp"
#include "bloomshard/app/split_inputs.hpp"
#include "bloomshard/io/reject_writer.hpp"

namespace bloomshard::app {
namespace {

RunManifest split_manifest() {
  RunManifest m;
  m.run_id = "0123456789abcdef";
  m.output_dir = "/out";
  InputProgress whole;
  whole.file.absolute_path = "/in/small.txt";
  whole.file.relative_path = "small.txt";
  whole.file.size = 10;
  m.inputs.push_back(whole);
  InputProgress big;
  big.file.absolute_path = "/in/big.jsonl";
  big.file.relative_path = "big.jsonl";
  big.file.size = 3000;
  big.file.format = io::Format::kJsonLines;
  for (std::uint64_t b = 0; b < 3000; b += 1000) {
    RangeProgress r;
    r.begin = b;
    r.end = b + 1000;
    r.cursor = {0, b};
    big.ranges.push_back(r);
  }
  big.ranges[1].cursor = {7, 1400};
  big.ranges[1].output_length = 123;
  big.ranges[1].reject_length = 45;
  big.ranges[1].prefix_digest = 99;
  big.ranges[2].done = true;
  big.ranges[2].cursor = {20, 3000};
  m.inputs.push_back(big);
  return m;
}

TEST(SplitManifest, RangesRoundTrip) {
  const RunManifest m = split_manifest();
  EXPECT_TRUE(has_split_inputs(m));
  const RunManifest back = manifest_from_json(manifest_to_json(m));
  ASSERT_EQ(back.inputs.size(), 2u);
  EXPECT_TRUE(back.inputs[0].ranges.empty());
  ASSERT_EQ(back.inputs[1].ranges.size(), 3u);
  const RangeProgress& r = back.inputs[1].ranges[1];
  EXPECT_EQ(r.begin, 1000u);
  EXPECT_EQ(r.end, 2000u);
  EXPECT_EQ(r.cursor, (io::InputCursor{7, 1400}));
  EXPECT_EQ(r.output_length, 123u);
  EXPECT_EQ(r.reject_length, 45u);
  EXPECT_EQ(r.prefix_digest, std::optional<std::uint64_t>(99));
  EXPECT_TRUE(back.inputs[1].ranges[2].done);
  EXPECT_FALSE(has_split_inputs(manifest_from_json(manifest_to_json(RunManifest{}))));
}

TEST(SplitManifest, RangesThatDoNotTileTheFileAreRefused) {
  const auto refused = [](auto change) {
    RunManifest m = split_manifest();
    change(m.inputs[1]);
    EXPECT_THROW((void)manifest_from_json(manifest_to_json(m)), std::runtime_error);
  };
  refused([](InputProgress& p) { p.ranges[1].begin = 999; });         // gap/overlap
  refused([](InputProgress& p) { p.ranges.pop_back(); });             // short of the end
  refused([](InputProgress& p) { p.ranges[0].cursor = {3, 1500}; });  // outside its range
  refused([](InputProgress& p) { p.ranges[0].cursor = {0, 10}; });    // records 0 off start
  refused([](InputProgress& p) { p.file.compression = io::Compression::kZstd; });
}

TEST(SplitTasks, OpenRangesAreTasksBalancedByUnreadBytes) {
  RunManifest m = split_manifest();
  const std::vector<std::size_t> first = first_units(m);
  EXPECT_EQ(first, (std::vector<std::size_t>{0, 1, 4}));
  std::vector<FileTask> all;
  std::uint64_t total = 0;
  for (int r = 0; r < 2; ++r) {
    for (FileTask& t : tasks_of_rank(m, r, 2, total)) all.push_back(std::move(t));
  }
  EXPECT_EQ(total, 3010u);
  // The small file and ranges 0 and 1 (range 2 is done), each once.
  ASSERT_EQ(all.size(), 3u);
  std::size_t ranges = 0;
  for (const FileTask& t : all) {
    if (!t.range) continue;
    ++ranges;
    EXPECT_EQ(t.index, 1u);
    EXPECT_EQ(t.bytes.begin, 1000 * *t.range);
    if (*t.range == 1) {
      EXPECT_EQ(t.cursor, (io::InputCursor{7, 1400}));
      EXPECT_EQ(t.reject_length, 45u);
    }
  }
  EXPECT_EQ(ranges, 2u);
  // Range 0 (1000 unread bytes) and range 1 (600) go to different ranks.
  const auto mine = tasks_of_rank(m, 0, 2, total);
  const auto theirs = tasks_of_rank(m, 1, 2, total);
  EXPECT_FALSE(mine.empty());
  EXPECT_FALSE(theirs.empty());
}

TEST(SplitRejects, RenumberAddsTheRangesFirstLine) {
  std::string lines;
  io::append_reject_json(lines, "/in/big \"q\".jsonl", 1, "missing key field", "{}", false);
  io::append_reject_json(lines, "/in/big \"q\".jsonl", 12, "line too long", "x", true);
  io::append_reject_json(lines, "/in/other", 5, "missing key field", "y", false);
  const std::string out = renumber_rejects(lines, "/in/big \"q\".jsonl", 101);
  std::string expected;
  io::append_reject_json(expected, "/in/big \"q\".jsonl", 101, "missing key field", "{}", false);
  io::append_reject_json(expected, "/in/big \"q\".jsonl", 112, "line too long", "x", true);
  io::append_reject_json(expected, "/in/other", 5, "missing key field", "y", false);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(renumber_rejects("", "/f", 7), "");
}

TEST(SplitPaths, PartsLiveUnderRanges) {
  EXPECT_EQ(range_output_path("/out", "a/b.txt", 3), "/out/_ranges/a/b.txt.range-3");
  EXPECT_EQ(range_reject_path("/out", "a/b.txt", 3), "/out/_ranges/a/b.txt.range-3.rejects.jsonl");
}

}  // namespace
}  // namespace bloomshard::app
