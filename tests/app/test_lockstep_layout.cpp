// The lockstep layout (app/split/lockstep_layout.hpp) without MPI: which
// runs take it, how blocks are numbered and dealt to the ranks, and where
// each round's blocks land in their outputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <vector>

#include "app/round/key_order.hpp"
#include "app/split/lockstep_layout.hpp"

namespace bloomshard::app {
namespace {

InputProgress input(const char* name, std::uint64_t size, io::Compression c) {
  InputProgress p;
  p.file.relative_path = name;
  p.file.absolute_path = std::string("/in/") + name;
  p.file.size = size;
  p.file.compression = c;
  return p;
}

DedupConfig first_copy_run() {
  DedupConfig c;
  c.kept_copy = KeptCopy::kFirstInInputOrder;
  return c;
}

TEST(LockstepLayout, AppliesToPlainFirstCopyRunsWithOrWithoutState) {
  RunManifest plain;
  plain.inputs = {input("a", 10, io::Compression::kNone), input("b", 0, io::Compression::kNone)};
  RunManifest one_gz = plain;
  one_gz.inputs.push_back(input("c.gz", 5, io::Compression::kGzip));
  DedupConfig c = first_copy_run();
  ASSERT_TRUE(keeps_input_order(c));
  EXPECT_TRUE(lockstep_layout_applies(c, plain));
  EXPECT_FALSE(lockstep_layout_applies(c, one_gz));
  DedupConfig state = c;
  state.state_dir = "/st";
  EXPECT_TRUE(lockstep_layout_applies(state, plain));
  // A state whose cut is not of the frontier shape resumes in the tasks layout.
  RunManifest two_started = plain;
  two_started.inputs[0].cursor = {2, 4};
  two_started.inputs[1].cursor = {1, 3};
  EXPECT_FALSE(lockstep_layout_applies(state, two_started));
  DedupConfig arrival = c;
  arrival.kept_copy = KeptCopy::kArrival;
  EXPECT_FALSE(lockstep_layout_applies(arrival, plain));
  DedupConfig annotate = c;
  annotate.annotate.mode = RunMode::kAnnotate;
  EXPECT_FALSE(lockstep_layout_applies(annotate, plain));
  for (const char* split : {"split-inputs", "split-min-bytes"}) {
    DedupConfig ranges = c;
    ranges.explicit_options.push_back(split);
    EXPECT_FALSE(lockstep_layout_applies(ranges, plain)) << split;
  }
  DedupConfig paragraphs = c;
  paragraphs.key.unit = core::KeyUnit::kParagraph;
  EXPECT_FALSE(lockstep_layout_applies(paragraphs, plain));
}

TEST(LockstepLayout, BlocksAreNumberedInInputOrderAndDealtRoundRobin) {
  RunManifest m;
  m.inputs = {input("a", 30, io::Compression::kNone), input("empty", 0, io::Compression::kNone),
              input("b", 12, io::Compression::kNone)};
  const std::vector<std::vector<io::ByteRange>> cut = {
      {{0, 10}, {10, 21}, {21, 30}}, {}, {{0, 12}}};
  const std::vector<LockstepBlock> blocks = number_blocks(cut);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[2], (LockstepBlock{0, {21, 30}}));
  EXPECT_EQ(blocks[3], (LockstepBlock{2, {0, 12}}));  // the empty input has none
  for (int ranks = 1; ranks <= 4; ++ranks) {
    std::size_t seen = 0;
    for (int r = 0; r < ranks; ++r) {
      std::uint64_t total = 0;
      const std::vector<FileTask> tasks = lockstep_tasks_of_rank(blocks, m, r, ranks, total);
      EXPECT_EQ(total, 42u);
      for (std::size_t k = 0; k < tasks.size(); ++k) {
        const std::size_t b = static_cast<std::size_t>(r) + k * static_cast<std::size_t>(ranks);
        ASSERT_EQ(tasks[k].block, b) << ranks << " ranks, rank " << r;
        EXPECT_EQ(tasks[k].index, blocks[b].input);
        EXPECT_EQ(tasks[k].bytes, blocks[b].bytes);
        EXPECT_EQ(tasks[k].cursor.decompressed_offset, blocks[b].bytes.begin);
        EXPECT_FALSE(tasks[k].range);
      }
      seen += tasks.size();
    }
    EXPECT_EQ(seen, blocks.size());
  }
}

StagedBlock staged(std::size_t block, std::uint64_t bytes, std::uint64_t lines) {
  return {block, bytes, lines};
}

TEST(LockstepLayout, EachBlockLandsAfterTheKeptBytesOfTheBlocksBeforeIt) {
  // Blocks 0-2 of input 0, blocks 3-4 of input 1.
  std::vector<LockstepBlock> blocks = {
      {0, {0, 10}}, {0, {10, 20}}, {0, {20, 30}}, {1, {0, 10}}, {1, {10, 20}}};
  LockstepOutputs out(blocks, 2);
  // Round 0 on 2 ranks: blocks 0 and 1 with 7 and 5 kept bytes, 3 and 2 lines.
  EXPECT_EQ(out.place_all(std::vector<StagedBlock>{staged(0, 7, 3), staged(1, 5, 2)}),
            (std::vector<BlockPlace>{{0, 0}, {7, 3}}));
  // Round 1: block 2 (input 0) and block 3 (input 1), whose read broke.
  EXPECT_EQ(out.place_all(std::vector<StagedBlock>{staged(2, 3, 1), staged(3, 4, kUnknownLines)}),
            (std::vector<BlockPlace>{{12, 5}, {0, 0}}));
  // Round 2: block 4 on rank 0 (its line numbers unknown after the broken
  // block), rank 1 has none left.
  EXPECT_EQ(out.place_all(std::vector<StagedBlock>{staged(4, 9, 2), {}}),
            (std::vector<BlockPlace>{{4, kUnknownLines}, {0, 0}}));
  EXPECT_EQ(out.output_length(0), 15u);
  EXPECT_EQ(out.output_length(1), 13u);
  // Later rounds: nobody has a block.
  EXPECT_EQ(out.place_all(std::vector<StagedBlock>{{}, {}}), (std::vector<BlockPlace>(2)));
}

TEST(LockstepLayout, ABlockOutOfTurnIsALogicError) {
  const std::vector<LockstepBlock> blocks = {{0, {0, 10}}, {0, {10, 20}}, {0, {20, 30}}};
  LockstepOutputs swapped(blocks, 1);
  EXPECT_THROW((void)swapped.place_all(std::vector<StagedBlock>{staged(1, 5, 1), staged(0, 5, 1)}),
               std::logic_error);
  LockstepOutputs gap(blocks, 1);
  EXPECT_THROW((void)gap.place_all(std::vector<StagedBlock>{{}, staged(0, 5, 1)}),
               std::logic_error);
  LockstepOutputs beyond(blocks, 1);
  EXPECT_THROW((void)beyond.place_all(std::vector<StagedBlock>{staged(3, 1, 1)}), std::logic_error);
}

RunManifest frontier_of(std::initializer_list<InputProgress> inputs) {
  RunManifest m;
  m.inputs = inputs;
  return m;
}

InputProgress done(std::uint64_t size, std::uint64_t lines, std::uint64_t length) {
  InputProgress p = input("d", size, io::Compression::kNone);
  p.done = true;
  p.cursor = {lines, size};
  p.output_length = length;
  return p;
}

InputProgress started(std::uint64_t size, std::uint64_t lines, std::uint64_t offset,
                      std::uint64_t length) {
  InputProgress p = input("s", size, io::Compression::kNone);
  p.cursor = {lines, offset};
  p.output_length = length;
  return p;
}

InputProgress untouched(std::uint64_t size) { return input("u", size, io::Compression::kNone); }

TEST(LockstepLayout, OnlyAFrontierShapedCutResumesInLockstep) {
  EXPECT_TRUE(lockstep_resumable(frontier_of({untouched(5), untouched(7)})));    // a new run
  EXPECT_TRUE(lockstep_resumable(frontier_of({done(5, 1, 5), done(6, 2, 0)})));  // finished
  EXPECT_TRUE(lockstep_resumable(frontier_of({done(5, 1, 5), started(9, 1, 4, 4), untouched(3)})));
  // Started before its output grew (every line a duplicate so far).
  EXPECT_TRUE(lockstep_resumable(frontier_of({started(9, 2, 6, 0), untouched(3)})));
  // An incremental run: new inputs after a finished state's.
  EXPECT_TRUE(lockstep_resumable(frontier_of({done(5, 1, 5), untouched(3), untouched(0)})));
  // Two started inputs, a done one after a started or an untouched one.
  EXPECT_FALSE(lockstep_resumable(frontier_of({started(9, 1, 4, 4), started(9, 1, 4, 4)})));
  EXPECT_FALSE(lockstep_resumable(frontier_of({started(9, 1, 4, 4), done(5, 1, 5)})));
  EXPECT_FALSE(lockstep_resumable(frontier_of({untouched(5), done(5, 1, 5)})));
  EXPECT_FALSE(lockstep_resumable(frontier_of({untouched(5), started(9, 1, 4, 4)})));
  // Split ranges are the tasks layout's, done or not.
  RunManifest ranges = frontier_of({done(5, 1, 5), untouched(30)});
  ranges.inputs[1].ranges.resize(2);
  EXPECT_FALSE(lockstep_resumable(ranges));
  // A kept copy waiting in the order table (a tasks-layout cut) is not
  // one a lockstep round expects.
  RunManifest kept = frontier_of({done(5, 1, 5), untouched(3)});
  kept.input_order.emplace();
  EXPECT_TRUE(lockstep_resumable(kept));
  kept.input_order->kept_rows = 1;
  EXPECT_FALSE(lockstep_resumable(kept));
}

TEST(LockstepLayout, BlocksFromAStartDropThoseBeforeItAndBeginTheOneAcrossIt) {
  const std::vector<io::ByteRange> whole = {{0, 10}, {10, 21}, {21, 30}};
  EXPECT_EQ(blocks_from(whole, 0), whole);
  EXPECT_EQ(blocks_from(whole, 10), (std::vector<io::ByteRange>{{10, 21}, {21, 30}}));
  EXPECT_EQ(blocks_from(whole, 14), (std::vector<io::ByteRange>{{14, 21}, {21, 30}}));
  EXPECT_EQ(blocks_from(whole, 30), std::vector<io::ByteRange>{});
}

TEST(LockstepLayout, ACutIsTheFrontierOfThePlacedBlocks) {
  // Input 0 done before, input 1 started at byte 40 (line 4, 25 bytes
  // out), input 2 empty, input 3 untouched.
  const RunManifest m =
      frontier_of({done(50, 5, 30), started(100, 4, 40, 25), untouched(0), untouched(20)});
  const std::vector<LockstepBlock> blocks = {{1, {40, 70}}, {1, {70, 100}}, {3, {0, 20}}};
  LockstepOutputs out(blocks, m);
  // Nothing placed: every input as it started (input 0 left to the manifest).
  std::optional<std::vector<FileState>> cut = out.cut_states();
  ASSERT_TRUE(cut);
  ASSERT_EQ(cut->size(), 3u);
  EXPECT_EQ((*cut)[0].index, 1u);
  EXPECT_EQ((*cut)[0].cursor.records, 4u);
  EXPECT_EQ((*cut)[0].cursor.decompressed_offset, 40u);
  EXPECT_EQ((*cut)[0].output_length, 25u);
  EXPECT_FALSE((*cut)[0].done);
  EXPECT_FALSE((*cut)[0].prefix_digest);
  EXPECT_FALSE((*cut)[1].done);  // the empty input waits for input 1
  // One round of one rank: block 0 (3 lines, 11 bytes kept).
  (void)out.place_all(std::vector<StagedBlock>{staged(0, 11, 3)});
  cut = out.cut_states();
  ASSERT_TRUE(cut);
  EXPECT_EQ((*cut)[0].cursor.records, 7u);
  EXPECT_EQ((*cut)[0].cursor.decompressed_offset, 70u);
  EXPECT_EQ((*cut)[0].output_length, 36u);
  EXPECT_FALSE((*cut)[0].done);
  // Blocks 1 and 2 on two ranks: every input done.
  (void)out.place_all(std::vector<StagedBlock>{staged(1, 2, 2), staged(2, 20, 1)});
  cut = out.cut_states();
  ASSERT_TRUE(cut);
  for (const FileState& s : *cut) EXPECT_TRUE(s.done) << s.index;
  EXPECT_EQ((*cut)[0].cursor.decompressed_offset, 100u);
  EXPECT_EQ((*cut)[0].output_length, 38u);
  EXPECT_EQ((*cut)[1].cursor.decompressed_offset, 0u);  // the empty one
  EXPECT_EQ((*cut)[2].cursor.records, 1u);
  EXPECT_EQ((*cut)[2].cursor.decompressed_offset, 20u);
  EXPECT_EQ((*cut)[2].output_length, 20u);
}

TEST(LockstepLayout, NoCutWhileABrokenInputHasBlocksLeft) {
  const std::vector<LockstepBlock> blocks = {{0, {0, 10}}, {0, {10, 20}}, {1, {0, 10}}};
  LockstepOutputs out(blocks, 2);
  (void)out.place_all(std::vector<StagedBlock>{staged(0, 4, kUnknownLines)});
  EXPECT_FALSE(out.can_cut());
  EXPECT_FALSE(out.cut_states());
  // Its last block placed, the input is done: the cut is whole again.
  (void)out.place_all(std::vector<StagedBlock>{staged(1, 4, 2)});
  ASSERT_TRUE(out.can_cut());
  const std::optional<std::vector<FileState>> cut = out.cut_states();
  ASSERT_TRUE(cut);
  EXPECT_TRUE((*cut)[0].done);
  EXPECT_EQ((*cut)[0].output_length, 8u);
  EXPECT_FALSE((*cut)[1].done);
}

}  // namespace
}  // namespace bloomshard::app
