// The lockstep layout (app/split/lockstep_layout.hpp) without MPI: which
// runs take it, how blocks are numbered and dealt to the ranks, and where
// each round's blocks land in their outputs.
#include <gtest/gtest.h>

#include <cstdint>
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

TEST(LockstepLayout, AppliesToPlainFirstCopyRunsWithoutStateOnly) {
  const std::vector<InputProgress> plain = {input("a", 10, io::Compression::kNone),
                                            input("b", 0, io::Compression::kNone)};
  std::vector<InputProgress> one_gz = plain;
  one_gz.push_back(input("c.gz", 5, io::Compression::kGzip));
  DedupConfig c = first_copy_run();
  ASSERT_TRUE(keeps_input_order(c));
  EXPECT_TRUE(lockstep_layout_applies(c, plain));
  EXPECT_FALSE(lockstep_layout_applies(c, one_gz));
  DedupConfig state = c;
  state.state_dir = "/st";
  EXPECT_FALSE(lockstep_layout_applies(state, plain));
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

}  // namespace
}  // namespace bloomshard::app
