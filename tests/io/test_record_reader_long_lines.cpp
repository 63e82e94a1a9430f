// Too-long lines (over max_line_bytes) wherever the reader's buffer
// boundaries fall: the kept prefix and the prefix digest must be functions
// of the bytes only, never of how much of the line happened to be buffered
// when the reader started skipping it (the buffer's size, what it read
// before, a resume). Regression tests of the fuzz_record_reader finding
// "record-reader-zstd-damage-long-lines" (docs/reliability.md).
#define XXH_INLINE_ALL
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "io/errors.hpp"
#include "io/records/record_reader.hpp"
#include "io_test_util.hpp"

// Its own namespace: its helpers share names with the other record reader tests (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::io::record_reader_long_lines_tests {
namespace {

using test::TempDir;

InputFile long_lines_input(const TempDir& dir, const std::string& stem, Compression c,
                           std::string_view bytes) {
  const auto path = dir / (stem + test::suffix_for(Format::kPlainLines, c));
  test::write_file(path, bytes);
  return test::input_for(path);
}

// The reader's first read with buffer_bytes = 1 (raised to 64 KiB) fills
// exactly this many decompressed bytes, for every codec.
constexpr std::size_t kFirstBlock = std::size_t{64} << 10;

// One record as the docs define it, computed from the content alone.
struct Expected {
  std::string kept;  // the line, or its first kTooLongPrefixBytes if too long
  std::string terminator;
  std::uint64_t line_bytes = 0;
  std::uint64_t end_offset = 0;
  bool too_long = false;
  std::uint64_t digest = 0;  // prefix digest after this record
};

// The oracle: line rules of record_reader.hpp and the digest rule of
// docs/inputs.md (XXH3-64 chained record by record, seeded with the digest so
// far; a too-long line enters as its kept prefix, seed ^ (length * 4 +
// terminator size + 1)).
std::vector<Expected> oracle(std::string_view content, std::size_t max_line) {
  std::vector<Expected> out;
  std::size_t pos = 0;
  std::uint64_t digest = 0;
  while (pos < content.size()) {
    Expected e;
    const std::size_t nl = content.find('\n', pos);
    std::size_t line_end = nl == std::string_view::npos ? content.size() : nl;
    const std::size_t next = nl == std::string_view::npos ? content.size() : nl + 1;
    if (nl != std::string_view::npos) {
      e.terminator = "\n";
      if (line_end > pos && content[line_end - 1] == '\r') {
        --line_end;
        e.terminator = "\r\n";
      }
    }
    e.line_bytes = line_end - pos;
    e.too_long = e.line_bytes > max_line;
    e.kept = std::string(content.substr(
        pos, e.too_long ? std::min<std::size_t>(e.line_bytes, kTooLongPrefixBytes) : e.line_bytes));
    e.end_offset = next;
    digest = e.too_long
                 ? XXH3_64bits_withSeed(e.kept.data(), e.kept.size(),
                                        digest ^ (e.line_bytes * 4 + e.terminator.size() + 1))
                 : XXH3_64bits_withSeed(content.data() + pos, next - pos, digest);
    e.digest = digest;
    out.push_back(std::move(e));
    pos = next;
  }
  return out;
}

void expect_records(RecordReader& reader, const InputFile& in, const std::vector<Expected>& want) {
  reader.open(in);
  Record rec;
  std::size_t i = 0;
  while (reader.next(rec)) {
    ASSERT_LT(i, want.size());
    SCOPED_TRACE("record " + std::to_string(i + 1));
    EXPECT_EQ(rec.line, want[i].kept);
    EXPECT_EQ(rec.terminator, want[i].terminator);
    EXPECT_EQ(rec.line_bytes, want[i].line_bytes);
    EXPECT_EQ(rec.too_long, want[i].too_long);
    EXPECT_EQ(rec.end_offset, want[i].end_offset);
    EXPECT_EQ(reader.prefix_digest(), want[i].digest);
    ++i;
  }
  EXPECT_EQ(i, want.size());
}

// A long line that starts `before` bytes ahead of the first block boundary:
// the reader meets it with anything from 1 byte to all of it buffered. Each
// file is read by a fresh reader and again by the same reader (its buffer
// now grown to max_line_bytes + 2 + 64 KiB, so the boundaries move).
TEST(IoReaderLongLines, KeptPrefixAndDigestAreTheSameWhereverTheBufferEnds) {
  TempDir dir;
  ReaderOptions options;
  options.buffer_bytes = 1;
  int files = 0;
  for (const std::size_t max_line : {std::size_t{7}, std::size_t{100}}) {
    options.max_line_bytes = max_line;
    for (const std::size_t before : {1UL, 9UL, 20UL, 3001UL, 4097UL, 10001UL}) {
      for (const std::size_t len : {8UL, 3000UL, 4096UL, 4097UL, 10000UL}) {
        for (const std::string_view term : {"\n", "\r\n", ""}) {
          // Short lines ("f\n") up to the long line; an odd gap starts with "g".
          const std::size_t gap = kFirstBlock - std::min(before, kFirstBlock);
          std::string content = gap % 2 == 1 ? "g" : "";
          while (content.size() < gap) content += "f\n";
          std::string line(len, 'L');
          for (std::size_t j = 0; j < len; j += 97) line[j] = static_cast<char>('a' + j % 26);
          content += line;
          content += term;
          if (!term.empty()) content += "after\n";
          for (const Compression comp : test::kAllCompressions) {
            SCOPED_TRACE("max " + std::to_string(max_line) + ", long line of " +
                         std::to_string(len) + " starting " + std::to_string(before) +
                         " bytes before 64 KiB, terminator size " + std::to_string(term.size()) +
                         ", " + std::string(compression_name(comp)));
            const std::string name = "f" + std::to_string(files++);
            const InputFile in = long_lines_input(dir, name, comp, test::compress(comp, content));
            const std::vector<Expected> want = oracle(content, max_line);
            RecordReader reader(options);
            expect_records(reader, in, want);
            expect_records(reader, in, want);
          }
        }
      }
    }
  }
}

// The finding itself (fuzz_record_reader, mode byte 0x22: the bytes below
// handed over as a zstd file, 7-byte line limit): a damaged frame that
// decodes to ~830,000 lines, many of them too long. The reader read it
// through, then, reused, resumed after record 1 with the saved digest, kept a
// 4,056-byte prefix for a too-long line that the resumed read kept 4,096
// bytes of. The resumed read must give the same lines and digests for as far
// as it gets (damaged zstd may stop earlier with a larger buffer, with an
// error), and the kept prefix is always the line's first bytes.
TEST(IoReaderLongLines, FuzzFindingZstdDamageLongLines) {
  static constexpr char kFinding[] =
      "\x28\xb5\x2f\xfd\x00\x50\x0a\x6c\x0d\x0a\x0a\x0a\x0a\x31\x0a\x74"
      "\x0a\x0a\x0a\x6c\x0d\x0a\x0a\x0a\x0a\x4a\x0a\x0a\x0a\x0a\x0a\x0a"
      "\x0a\x0a\x0a\x0d\x0a\x0a\x0a\x0a\x0a\x0b\x0a\x0a\x0a\x0a\x0a\x6c"
      "\x0d\x0a\x0a\x0a\x0a\x31\x0a\x74\x0a\x0a\x0a\x6c\x0d\x00\x00\x0a"
      "\x0a\x0a\x0a\x4a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0d\x0a\x0a\x0a"
      "\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a"
      "\x0a\x0a\x0a\x0a\x0a\x6c\x00\x00\x7f\xfc";
  TempDir dir;
  const InputFile in = long_lines_input(dir, "finding", Compression::kZstd,
                                        std::string_view(kFinding, sizeof kFinding - 1));
  ReaderOptions options;
  options.max_line_bytes = 7;
  options.buffer_bytes = 1;
  RecordReader reader(options);

  struct Line {
    std::string kept;
    std::uint64_t line_bytes, end_offset, digest;
    bool operator==(const Line&) const = default;
  };
  const auto read = [&](bool resume, InputCursor at, std::uint64_t digest, bool& error) {
    std::vector<Line> lines;
    error = false;
    try {
      reader.open(in);
      if (resume) reader.skip_to(at, digest);
      Record rec;
      while (reader.next(rec)) {
        lines.push_back(
            {std::string(rec.line), rec.line_bytes, rec.end_offset, reader.prefix_digest()});
      }
    } catch (const InputError&) {
      error = true;
    }
    return lines;
  };
  bool whole_error = false;
  const std::vector<Line> whole = read(false, {}, 0, whole_error);
  ASSERT_GT(whole.size(), 800000U);
  EXPECT_TRUE(whole_error);  // the frame is damaged
  std::size_t too_long = 0;
  for (const Line& l : whole) {
    if (l.line_bytes <= 7) continue;
    ++too_long;
    ASSERT_EQ(l.kept.size(), std::min<std::uint64_t>(l.line_bytes, kTooLongPrefixBytes));
  }
  EXPECT_GT(too_long, 0U);

  bool rest_error = false;
  const std::vector<Line> rest = read(true, {1, whole[0].end_offset}, whole[0].digest, rest_error);
  ASSERT_LE(rest.size(), whole.size() - 1);
  if (rest.size() < whole.size() - 1) {
    EXPECT_TRUE(rest_error);
  }
  for (std::size_t i = 0; i < rest.size(); ++i) {
    ASSERT_EQ(rest[i], whole[i + 1]) << "record " << i + 2;
  }
}

}  // namespace
}  // namespace bloomshard::io::record_reader_long_lines_tests
