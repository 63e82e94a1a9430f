// Split inputs without MPI: only what balance needs is cut, the
// manifest's ranges round-trip and are checked on reading, ranges become
// tasks balanced by unread bytes, and range-relative reject line numbers are
// made absolute.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "app/run/run_manifest.hpp"
#include "app/split/range_join.hpp"
#include "app/split/rank_tasks.hpp"
#include "app/split/split_inputs.hpp"
#include "io/output/reject_writer.hpp"
#include "io/records/file_assignment.hpp"

namespace bloomshard::app {
namespace {

RunManifest split_run_manifest() {
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

using Sizes = std::vector<std::uint64_t>;

Sizes plan(const Sizes& sizes, const Sizes& max_counts, int ranks) {
  return plan_range_counts(sizes, max_counts, ranks);
}

// The 10M-record synth corpus (--files 8, seed 1): file sizes in bytes.
const std::vector<std::uint64_t> kCorpus = {45790174,  277184519, 279100883, 372345097,
                                            325859831, 372529892, 46586808,  46557493};

// Largest rank load over the mean when the inputs are cut as `counts` says
// (nominal pieces) and assigned longest first, as tasks_of_rank does.
double planned_imbalance(const std::vector<std::uint64_t>& sizes,
                         const std::vector<std::uint64_t>& counts, int ranks) {
  std::vector<std::uint64_t> pieces;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (std::uint64_t k = 0; k < counts[i]; ++k) {
      pieces.push_back(sizes[i] * (k + 1) / counts[i] - sizes[i] * k / counts[i]);
    }
  }
  const std::vector<int> owners = io::assign_files_to_ranks(pieces, ranks);
  std::vector<std::uint64_t> load(static_cast<std::size_t>(ranks), 0);
  for (std::size_t j = 0; j < pieces.size(); ++j) {
    load[static_cast<std::size_t>(owners[j])] += pieces[j];
  }
  const std::uint64_t total = std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0});
  return static_cast<double>(*std::max_element(load.begin(), load.end())) /
         (static_cast<double>(total) / ranks);
}

TEST(SplitPlan, WholeFilesThatBalanceStayWhole) {
  const std::vector<std::uint64_t> any(kCorpus.size(), 1000);
  // Whole files at 2 ranks: 1.052 of the mean; at 1 rank nothing to balance.
  EXPECT_LT(planned_imbalance(kCorpus, std::vector<std::uint64_t>(kCorpus.size(), 1), 2),
            kSplitMaxImbalance);
  EXPECT_EQ(plan_range_counts(kCorpus, any, 2), std::vector<std::uint64_t>(kCorpus.size(), 1));
  EXPECT_EQ(plan_range_counts(kCorpus, any, 1), std::vector<std::uint64_t>(kCorpus.size(), 1));
  // Many small files on few ranks.
  const std::vector<std::uint64_t> small(100, 1000);
  EXPECT_EQ(plan_range_counts(small, small, 7), std::vector<std::uint64_t>(100, 1));
  EXPECT_TRUE(plan({}, {}, 4).empty());
}

TEST(SplitPlan, OnlyTheBigFilesAreCutIntoAsFewRangesAsBalanceNeeds) {
  // At 4 ranks whole files give 1.26: the largest file is halved, no more.
  const std::vector<std::uint64_t> any(kCorpus.size(), 1000);
  const std::vector<std::uint64_t> counts = plan_range_counts(kCorpus, any, 4);
  EXPECT_EQ(counts, (std::vector<std::uint64_t>{1, 1, 1, 1, 1, 2, 1, 1}));
  EXPECT_LE(planned_imbalance(kCorpus, counts, 4), kSplitMaxImbalance);
  // One file alone: as many ranges as ranks, within the maximum count.
  const std::vector<std::uint64_t> one = {std::uint64_t{1} << 30};
  for (const int ranks : {1, 2, 3, 4, 16, 64}) {
    EXPECT_EQ(plan(one, {1000}, ranks)[0], static_cast<std::uint64_t>(ranks));
  }
  EXPECT_EQ(plan(one, {3}, 4)[0], 3u);
  // The balance reached, over mixes of sizes and rank counts.
  std::uint64_t x = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(1 + trial % 13));
    for (std::uint64_t& size : sizes) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      size = (x >> 33) % (std::uint64_t{1} << 30) + 1;
    }
    const int ranks = 1 + trial % 9;
    const std::vector<std::uint64_t> plan =
        plan_range_counts(sizes, std::vector<std::uint64_t>(sizes.size(), 4096), ranks);
    EXPECT_LE(planned_imbalance(sizes, plan, ranks), kSplitMaxImbalance)
        << "trial " << trial << ", " << sizes.size() << " files on " << ranks << " ranks";
  }
}

TEST(SplitPlan, AnInputThatMayNotBeCutSetsTheFloor) {
  // A 10 GB .gz (may not be cut) dominates 2 ranks: cutting the 1 GB plain
  // file cannot help, so it stays whole.
  const std::vector<std::uint64_t> sizes = {10ULL << 30, 1ULL << 30};
  EXPECT_EQ(plan(sizes, {1, 1000}, 2), (std::vector<std::uint64_t>{1, 1}));
  // Two 4 GB files and a 6 GB .gz on 3 ranks: the goal is 1.1 x 6 GB, met
  // with the files whole (one rank each).
  EXPECT_EQ(plan({4ULL << 30, 4ULL << 30, 6ULL << 30}, {1000, 1000, 1}, 3),
            (std::vector<std::uint64_t>{1, 1, 1}));
  // A file that may take only 2 ranges on 4 ranks: the best it can do.
  EXPECT_EQ(plan({1ULL << 30}, {2}, 4), (std::vector<std::uint64_t>{2}));
  EXPECT_THROW((void)plan(sizes, {1}, 2), std::invalid_argument);
  EXPECT_THROW((void)plan(sizes, {1, 1}, 0), std::invalid_argument);
}

TEST(SplitPlan, ManyRanksStayCheap) {
  // One 1 TB file and a thousand small ones at 16384 ranks; ten 100 GB
  // files at 4096 ranks.
  std::vector<std::uint64_t> sizes(1000, 1 << 20);
  sizes.push_back(1ULL << 40);
  const std::vector<std::uint64_t> counts =
      plan_range_counts(sizes, std::vector<std::uint64_t>(sizes.size(), 1ULL << 20), 16384);
  EXPECT_LE(planned_imbalance(sizes, counts, 16384), kSplitMaxImbalance);
  const std::vector<std::uint64_t> ten(10, 100ULL << 30);
  EXPECT_LE(
      planned_imbalance(
          ten, plan_range_counts(ten, std::vector<std::uint64_t>(10, 1ULL << 20), 4096), 4096),
      kSplitMaxImbalance);
}

TEST(SplitManifest, RangesRoundTrip) {
  const RunManifest m = split_run_manifest();
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
  EXPECT_FALSE(has_retracted_records(back));
}

TEST(SplitManifest, RetractedRecordsRoundTripAndAreChecked) {
  RunManifest m = split_run_manifest();
  m.inputs[1].ranges[1].retracted = {1000, 1010, 1399};
  m.inputs[1].ranges[2].retracted = {2999};
  const RunManifest back = manifest_from_json(manifest_to_json(m));
  EXPECT_TRUE(has_retracted_records(back));
  EXPECT_EQ(back.inputs[1].ranges[1].retracted, (std::vector<std::uint64_t>{1000, 1010, 1399}));
  EXPECT_EQ(back.inputs[1].ranges[2].retracted, (std::vector<std::uint64_t>{2999}));
  EXPECT_TRUE(back.inputs[1].ranges[0].retracted.empty());
  const auto refused = [](std::size_t range, std::vector<std::uint64_t> offsets) {
    RunManifest bad = split_run_manifest();
    bad.inputs[1].ranges[range].retracted = std::move(offsets);
    EXPECT_THROW((void)manifest_from_json(manifest_to_json(bad)), std::runtime_error);
  };
  refused(0, {5});           // range 0 is read in order: never retracted
  refused(1, {1400});        // not read yet (at or past the cursor)
  refused(1, {999});         // before its range
  refused(1, {1010, 1000});  // out of order
  refused(1, {1010, 1010});  // twice
}

TEST(SplitManifest, RangesThatDoNotTileTheFileAreRefused) {
  const auto refused = [](auto change) {
    RunManifest m = split_run_manifest();
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
  RunManifest m = split_run_manifest();
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
