// io/line_ranges: the range count, and cuts moved to line starts, checked
// against line starts found independently (std::string::find); and
// RecordReader::open_range reading the ranges back to back as the whole file.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "io/records/line_ranges.hpp"
#include "io/records/record_reader.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

std::filesystem::path write_file(const TempDir& dir, const std::string& content) {
  const auto path = dir / "in.txt";
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// The oracle: positions p with p == 0 or content[p - 1] == '\n', plus size.
std::vector<std::uint64_t> line_starts(const std::string& content) {
  std::vector<std::uint64_t> starts{0};
  for (std::size_t p = content.find('\n'); p != std::string::npos; p = content.find('\n', p + 1)) {
    starts.push_back(p + 1);
  }
  if (starts.back() != content.size()) starts.push_back(content.size());
  return starts;
}

void expect_tiling(const std::string& content, const std::vector<ByteRange>& ranges) {
  ASSERT_FALSE(ranges.empty());
  const std::vector<std::uint64_t> starts = line_starts(content);
  std::uint64_t at = 0;
  for (const ByteRange& r : ranges) {
    EXPECT_EQ(r.begin, at);
    EXPECT_LT(r.begin, r.end) << "empty range kept";
    EXPECT_TRUE(std::binary_search(starts.begin(), starts.end(), r.end))
        << r.end << " is not a line start";
    at = r.end;
  }
  EXPECT_EQ(at, content.size());
}

// Every line of the whole file, read once by ranges back to back.
std::vector<std::string> read_all(const InputFile& f, const std::vector<ByteRange>& ranges) {
  std::vector<std::string> lines;
  RecordReader reader;
  Record r;
  for (const ByteRange& g : ranges) {
    reader.open_range(f, g.begin, g.end);
    std::uint64_t n = 0;
    while (reader.next(r)) {
      EXPECT_EQ(r.line_number, ++n) << "line numbers count from the range's start";
      lines.push_back(std::string(r.line) + std::string(r.terminator));
    }
    EXPECT_EQ(reader.cursor().decompressed_offset, g.end);
  }
  return lines;
}

std::vector<std::string> read_whole(const InputFile& f) {
  std::vector<std::string> lines;
  RecordReader reader;
  Record r;
  reader.open(f);
  while (reader.next(r)) lines.push_back(std::string(r.line) + std::string(r.terminator));
  return lines;
}

InputFile plain(const std::filesystem::path& path, std::uint64_t size) {
  InputFile f;
  f.absolute_path = path;
  f.relative_path = "in.txt";
  f.size = size;
  return f;
}

TEST(RangeCount, SmallFilesStayWhole) {
  EXPECT_EQ(range_count_for(100, 100, 64, 100), 1u);  // not larger than the threshold
  EXPECT_EQ(range_count_for(99, 1000, 4, 100), 1u);
}

TEST(RangeCount, AboutAQuarterOfARanksShare) {
  // 4 files of 1000 bytes on 2 ranks: ranges of 4000 / 8 = 500 bytes.
  EXPECT_EQ(range_count_for(1000, 4000, 2, 10), 2u);
  // One file on 4 ranks: 16 ranges.
  EXPECT_EQ(range_count_for(1600, 1600, 4, 10), 16u);
  // Never below the minimum range size.
  EXPECT_EQ(range_count_for(1600, 1600, 4, 400), 4u);
  // A count from the rank count on is a multiple of it: 1017 / 67 ~ 15 -> 12
  // on 4 ranks (15 would give one rank 3 ranges and the others 4).
  EXPECT_EQ(range_count_for(1017, 1017, 4, 67), 12u);
  EXPECT_EQ(range_count_for(300, 1017, 4, 67), 4u);
  EXPECT_EQ(range_count_for(200, 1017, 4, 67), 3u);  // fewer than the ranks: as is
  EXPECT_THROW((void)range_count_for(1, 1, 0, 1), std::invalid_argument);
  EXPECT_THROW((void)range_count_for(1, 1, 1, 0), std::invalid_argument);
}

TEST(LineRanges, RandomLinesTileTheFileAtLineStarts) {
  TempDir dir;
  std::mt19937_64 rng(12);
  for (int round = 0; round < 20; ++round) {
    std::string content;
    const int lines = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < lines; ++i) {
      content.append(rng() % 90, static_cast<char>('a' + rng() % 26));
      content += rng() % 5 == 0 ? "\r\n" : "\n";
    }
    if (rng() % 2) content += "tail without newline";
    const auto path = write_file(dir, content);
    const std::uint64_t count = 1 + rng() % 40;
    const auto ranges = line_aligned_ranges(path, content.size(), count);
    EXPECT_LE(ranges.size(), count);
    expect_tiling(content, ranges);
    const InputFile f = plain(path, content.size());
    EXPECT_EQ(read_all(f, ranges), read_whole(f));
  }
}

TEST(LineRanges, CrLfCutsFallAfterTheNewline) {
  TempDir dir;
  std::string content;
  for (int i = 0; i < 50; ++i) content += "0123456789\r\n";  // 12 bytes a line
  const auto path = write_file(dir, content);
  const auto ranges = line_aligned_ranges(path, content.size(), 7);
  expect_tiling(content, ranges);
  for (const ByteRange& r : ranges) EXPECT_EQ(r.begin % 12, 0u);
}

TEST(LineRanges, ALineLongerThanARangeDropsTheRangesItCovers) {
  TempDir dir;
  const std::string content = "short\n" + std::string(10000, 'x') + "\nend\n";
  const auto path = write_file(dir, content);
  const auto ranges = line_aligned_ranges(path, content.size(), 10);
  expect_tiling(content, ranges);
  // Cuts: the long line's end, and nothing inside it.
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].end, 6u + 10001u);
}

TEST(LineRanges, NoNewlineAtAllIsOneRange) {
  TempDir dir;
  const std::string content(5000, 'y');
  const auto path = write_file(dir, content);
  const auto ranges = line_aligned_ranges(path, content.size(), 8);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0], (ByteRange{0, 5000}));
}

TEST(LineRanges, NoTrailingNewlineKeepsTheLastLineInTheLastRange) {
  TempDir dir;
  std::string content;
  for (int i = 0; i < 100; ++i) content += "line " + std::to_string(i) + "\n";
  content += "last";
  const auto path = write_file(dir, content);
  const auto ranges = line_aligned_ranges(path, content.size(), 5);
  expect_tiling(content, ranges);
  const InputFile f = plain(path, content.size());
  const auto lines = read_all(f, ranges);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "last");
}

TEST(LineRanges, EmptyFileAndOneRange) {
  TempDir dir;
  const auto path = write_file(dir, "");
  EXPECT_EQ(line_aligned_ranges(path, 0, 4), (std::vector<ByteRange>{{0, 0}}));
  const auto other = write_file(dir, "a\nb\n");
  EXPECT_EQ(line_aligned_ranges(other, 4, 1), (std::vector<ByteRange>{{0, 4}}));
}

TEST(LineRanges, UnreadableFileThrowsInputError) {
  EXPECT_THROW((void)line_aligned_ranges("/nonexistent/bloomshard/x", 100, 4), InputError);
}

TEST(RecordReaderRange, ResumesInsideARangeAndStopsAtItsEnd) {
  TempDir dir;
  std::string content;
  for (int i = 0; i < 30; ++i) content += "r" + std::to_string(i) + "\n";
  const auto path = write_file(dir, content);
  const InputFile f = plain(path, content.size());
  const auto ranges = line_aligned_ranges(path, content.size(), 3);
  ASSERT_EQ(ranges.size(), 3u);
  RecordReader reader;
  Record r;
  reader.open_range(f, ranges[1].begin, ranges[1].end);
  ASSERT_TRUE(reader.next(r));
  ASSERT_TRUE(reader.next(r));
  const InputCursor at = reader.cursor();
  const std::uint64_t digest = reader.prefix_digest();
  std::vector<std::string> rest;
  while (reader.next(r)) rest.emplace_back(r.line);

  RecordReader again;
  again.open_range(f, ranges[1].begin, ranges[1].end);
  again.skip_to(at, digest);
  std::vector<std::string> resumed;
  while (again.next(r)) resumed.emplace_back(r.line);
  EXPECT_EQ(resumed, rest);
  EXPECT_EQ(again.cursor().decompressed_offset, ranges[1].end);
  EXPECT_EQ(again.cursor().records, at.records + rest.size());

  // A cursor outside the range, or a zero count away from its start, is refused.
  RecordReader bad;
  bad.open_range(f, ranges[1].begin, ranges[1].end);
  EXPECT_THROW(bad.skip_to({1, ranges[2].end}), InputError);
  RecordReader zero;
  zero.open_range(f, ranges[1].begin, ranges[1].end);
  EXPECT_THROW(zero.skip_to({0, 0}), InputError);
}

TEST(RecordReaderRange, RefusesCompressedFiles) {
  InputFile f;
  f.absolute_path = "/tmp/x.gz";
  f.compression = Compression::kGzip;
  RecordReader reader;
  EXPECT_THROW(reader.open_range(f, 0, 10), std::invalid_argument);
}

// The lockstep layout's blocks: block k holds the lines that start in
// [k B, (k + 1) B), so a block begins at the first line start at or after
// k B; blocks left empty by a long line are dropped.
TEST(LineBlocks, EachBlockHoldsTheLinesThatStartInItsBytes) {
  TempDir dir;
  std::mt19937_64 rng(31);
  for (int round = 0; round < 20; ++round) {
    std::string content;
    const int lines = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < lines; ++i) {
      content.append(rng() % 7 == 0 ? rng() % 700 : rng() % 60, 'a');
      content += "\n";
    }
    if (rng() % 2) content += "tail without newline";
    const auto path = write_file(dir, content);
    const std::uint64_t block = 16 + rng() % 300;
    const auto blocks = line_aligned_blocks(path, content.size(), block);
    expect_tiling(content, blocks);
    // Every line start s of a block lies in the same [k B, (k + 1) B), k
    // growing from block to block.
    const std::vector<std::uint64_t> starts = line_starts(content);
    std::uint64_t last_k = 0;
    for (std::size_t j = 0; j < blocks.size(); ++j) {
      const std::uint64_t k = blocks[j].begin / block;
      if (j > 0) {
        EXPECT_GT(k, last_k);
      }
      last_k = k;
      for (const std::uint64_t st : starts) {
        if (st >= blocks[j].begin && st < blocks[j].end) {
          EXPECT_EQ(st / block, k) << st;
        }
      }
    }
    const InputFile f = plain(path, content.size());
    EXPECT_EQ(read_all(f, blocks), read_whole(f));
  }
}

TEST(LineBlocks, CutsAtMultiplesOfTheBlockMoveToTheNextLineStart) {
  TempDir dir;
  const std::string content = "aaaa\nbb\ncccccc\nd\n";  // lines start at 0, 5, 8, 15
  const auto path = write_file(dir, content);
  const auto blocks = line_aligned_blocks(path, content.size(), 5);
  // Nominal cuts 5, 10, 15: lines starting in [0,5) [5,10) [10,15) [15,17).
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0], (ByteRange{0, 5}));
  EXPECT_EQ(blocks[1], (ByteRange{5, 15}));  // [10, 15) holds no line start: dropped
  EXPECT_EQ(blocks[2], (ByteRange{15, 17}));
}

TEST(LineBlocks, EmptyAndSmallFiles) {
  TempDir dir;
  const auto empty = write_file(dir, "");
  EXPECT_TRUE(line_aligned_blocks(empty, 0, 4096).empty());
  const auto small = write_file(dir, "one line\n");
  EXPECT_EQ(line_aligned_blocks(small, 9, 4096), (std::vector<ByteRange>{{0, 9}}));
  EXPECT_THROW((void)line_aligned_blocks(small, 9, 0), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::io
