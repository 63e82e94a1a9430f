// The offset map of an output written whole from its first byte
// (core/order/output_offset_map.hpp): an input offset that was written maps
// to its output offset (the bytes left out before it subtracted), one that
// was left out, lies past the end or comes out of order maps to nothing,
// and a piece noted out of order breaks the map.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/order/output_offset_map.hpp"

namespace bloomshard::core {
namespace {

std::optional<std::uint64_t> out_of(const OutputOffsetMap& map, std::uint64_t input_offset) {
  OutputOffsetMap::Cursor c(map);
  const std::optional<OutputOffsetMap::Place> p = c.find(input_offset);
  if (!p) return std::nullopt;
  return p->output_offset;
}

TEST(OutputOffsetMap, WrittenBytesMapToTheirOutputOffsets) {
  OutputOffsetMap map;
  // Input lines at 0 (10 bytes), 10 (5, left out), 15 (7), 22 (3), 25 (300,
  // left out), 325 (1000): the output holds 0-9, 15-24, 325-1324.
  ASSERT_TRUE(map.note_written(0, 10));
  ASSERT_TRUE(map.note_written(15, 7));
  ASSERT_TRUE(map.note_written(22, 3));
  ASSERT_TRUE(map.note_written(325, 1000));
  EXPECT_EQ(map.output_length(), 1020U);
  EXPECT_EQ(out_of(map, 0), 0U);
  EXPECT_EQ(out_of(map, 15), 10U);
  EXPECT_EQ(out_of(map, 22), 17U);
  EXPECT_EQ(out_of(map, 325), 20U);
  EXPECT_EQ(out_of(map, 1324), 1019U);
  // Left out, and past the end.
  EXPECT_EQ(out_of(map, 10), std::nullopt);
  EXPECT_EQ(out_of(map, 14), std::nullopt);
  EXPECT_EQ(out_of(map, 25), std::nullopt);
  EXPECT_EQ(out_of(map, 1325), std::nullopt);

  // One cursor, ascending: the run ends say where each line must end.
  OutputOffsetMap::Cursor c(map);
  const auto a = c.find(0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->run_end, 10U);
  const auto b = c.find(22);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->output_offset, 17U);
  EXPECT_EQ(b->run_end, 25U);
  EXPECT_EQ(c.find(5), std::nullopt) << "below the previous lookup's run: not found";
  const auto d = c.find(400);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->output_offset, 95U);
  EXPECT_EQ(d->run_end, 1325U);
}

TEST(OutputOffsetMap, AnOutputThatStartsLateOrIsEmptyMapsOnlyWhatWasWritten) {
  OutputOffsetMap empty;
  EXPECT_EQ(out_of(empty, 0), std::nullopt);
  EXPECT_EQ(empty.output_length(), 0U);
  OutputOffsetMap late;  // the first records were all left out
  ASSERT_TRUE(late.note_written(1ULL << 40, 5));
  EXPECT_EQ(out_of(late, 0), std::nullopt);
  EXPECT_EQ(out_of(late, (1ULL << 40) + 4), 4U);
}

TEST(OutputOffsetMap, APieceOutOfOrderBreaksTheMapForGood) {
  OutputOffsetMap map;
  ASSERT_TRUE(map.note_written(100, 10));
  EXPECT_FALSE(map.note_written(105, 10)) << "overlaps the piece before";
  EXPECT_TRUE(map.broken());
  EXPECT_FALSE(map.note_written(200, 10));
  EXPECT_EQ(out_of(map, 100), std::nullopt);
  EXPECT_EQ(map.memory_bytes(), 0U);
  OutputOffsetMap other;
  ASSERT_TRUE(other.note_written(0, 10));
  other.break_map();
  EXPECT_EQ(out_of(other, 0), std::nullopt);
}

// Random inputs: every written byte's output offset is its index in the
// output built by copying, whatever the run and gap lengths (past the 1-,
// 2- and 3-byte LEB128 numbers).
TEST(OutputOffsetMap, MatchesACopiedOutputOnRandomInputs) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    OutputOffsetMap map;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> written;  // (input offset, output offset)
    std::uint64_t in = 0;
    std::uint64_t out = 0;
    const int records = 1 + static_cast<int>(rng() % 2000);
    for (int r = 0; r < records; ++r) {
      const std::uint64_t length = 1 + (rng() % 4 == 0 ? rng() % 300000 : rng() % 200);
      if (rng() % 3 != 0) {
        ASSERT_TRUE(map.note_written(in, length));
        written.emplace_back(in, out);
        written.emplace_back(in + length - 1, out + length - 1);
        out += length;
      } else {
        written.emplace_back(in, ~std::uint64_t{0});  // left out
      }
      in += length;
    }
    EXPECT_EQ(map.output_length(), out);
    OutputOffsetMap::Cursor c(map);
    for (const auto& [input, output] : written) {
      const auto p = c.find(input);
      if (output == ~std::uint64_t{0}) {
        EXPECT_EQ(p, std::nullopt) << "input " << input;
      } else {
        ASSERT_TRUE(p) << "input " << input;
        EXPECT_EQ(p->output_offset, output) << "input " << input;
      }
    }
    // Worst case of the header: 20 bytes a left-out run (plus the last run).
    EXPECT_LE(map.memory_bytes(), 2 * (20 * static_cast<std::size_t>(records) + 64));
  }
}

}  // namespace
}  // namespace bloomshard::core
