// RecordReader's batched reading: peek_lines() + consume() must
// read exactly what next() reads (lines, terminators, line numbers, offsets,
// prefix digests, cursors), for every codec, with too-long lines, CRLF, a
// last line without newline and small buffers; and share_buffer() must keep
// every byte of the records read while it is held (across refills, a
// skipped too-long line and the next file) without changing what is read.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/records/record_reader.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

// Short lines of random lengths, some long ones, some too long for a 100 KB
// limit, both terminators, and a last line without newline.
std::string batched_corpus(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  for (int i = 0; i < 3000; ++i) {
    std::size_t n = rng() % 300;
    if (rng() % 200 == 0) n = 60000 + rng() % 50000;  // long, sometimes over the limit
    if (rng() % 500 == 0) n = 250000;                 // too long
    s += std::string(n, static_cast<char>('a' + rng() % 26));
    s += rng() % 3 == 0 ? "\r\n" : "\n";
  }
  s += "last line without newline";
  return s;
}

constexpr ReaderOptions kOptions{.max_line_bytes = 100000, .buffer_bytes = 64 << 10};

struct Expected {
  test::OwnedRecord record;
  std::uint64_t digest_after = 0;
};

std::vector<Expected> read_one_by_one(const InputFile& file) {
  RecordReader reader(kOptions);
  reader.open(file);
  std::vector<Expected> out;
  Record r;
  while (reader.next(r)) {
    out.push_back({{std::string(r.line), std::string(r.terminator), r.line_number, r.end_offset,
                    r.line_bytes, r.too_long},
                   reader.prefix_digest()});
  }
  return out;
}

void expect_record(const Record& r, const test::OwnedRecord& want) {
  EXPECT_EQ(r.line, want.line);
  EXPECT_EQ(r.terminator, want.terminator);
  EXPECT_EQ(r.line_number, want.line_number);
  EXPECT_EQ(r.end_offset, want.end_offset);
  EXPECT_EQ(r.line_bytes, want.line_bytes);
  EXPECT_EQ(r.too_long, want.too_long);
}

// A record kept while its buffer was shared, and what its bytes must be.
struct Held {
  std::string_view bytes;
  std::string want;
};

TEST(RecordReaderBatched, PeekConsumeAndSharingReadWhatNextReads) {
  TempDir dir;
  for (const std::uint64_t seed : {1U, 2U}) {
    const std::string content = batched_corpus(seed);
    for (const Compression c : test::kAllCompressions) {
      const auto path =
          dir / ("in" + std::to_string(seed) + test::suffix_for(Format::kPlainLines, c));
      test::write_file(path, c == Compression::kNone ? content : test::compress(c, content));
      const InputFile file = test::input_for(path);
      const std::vector<Expected> want = read_one_by_one(file);

      std::mt19937_64 rng(seed * 10 + static_cast<unsigned>(c));
      RecordReader reader(kOptions);
      reader.open(file);
      std::vector<Record> peeked(64);
      std::vector<BufferRef> shared;
      std::vector<Held> held;
      std::size_t i = 0;
      Record r;
      for (;;) {
        const std::size_t want_n = 1 + rng() % peeked.size();
        const std::size_t n = reader.peek_lines(std::span(peeked).first(want_n));
        ASSERT_LE(n, want_n);
        // Shared after the records are in the buffer, as the feed does.
        const bool share = rng() % 3 == 0;
        if (n > 0) {
          if (share) shared.push_back(reader.share_buffer());
          ASSERT_LE(i + n, want.size());
          for (std::size_t k = 0; k < n; ++k) {
            expect_record(peeked[k], want[i + k].record);
            // Terminator bytes follow the line where it lies.
            EXPECT_EQ(std::string_view(peeked[k].line.data(),
                                       peeked[k].line.size() + peeked[k].terminator.size()),
                      want[i + k].record.line + want[i + k].record.terminator);
          }
          const std::size_t take = 1 + rng() % n;
          if (share) {
            for (std::size_t k = 0; k < take; ++k) {
              held.push_back(
                  {{peeked[k].line.data(), peeked[k].line.size() + peeked[k].terminator.size()},
                   want[i + k].record.line + want[i + k].record.terminator});
            }
          }
          reader.consume(std::span(peeked).first(take));
          i += take;
          ASSERT_EQ(reader.cursor().records, want[i - 1].record.line_number);
          ASSERT_EQ(reader.cursor().decompressed_offset, want[i - 1].record.end_offset);
          ASSERT_EQ(reader.prefix_digest(), want[i - 1].digest_after);
        } else {
          if (!reader.next(r)) break;
          if (share) shared.push_back(reader.share_buffer());
          ASSERT_LT(i, want.size());
          expect_record(r, want[i].record);
          if (share && !r.too_long) {
            held.push_back({{r.line.data(), r.line.size() + r.terminator.size()},
                            want[i].record.line + want[i].record.terminator});
          }
          ++i;
          ASSERT_EQ(reader.prefix_digest(), want[i - 1].digest_after);
        }
        if (shared.size() > 6 && rng() % 4 == 0) {
          // Let go of the oldest buffers, as a round batch does at clear().
          for (const Held& h : held) ASSERT_EQ(h.bytes, h.want);
          held.clear();
          shared.clear();
        }
      }
      EXPECT_EQ(i, want.size());
      for (const Held& h : held) EXPECT_EQ(h.bytes, h.want);
    }
  }
}

// A shared buffer outlives a too-long line skipped in pieces and the open()
// of the next file: the reader must not read into it from its start again.
TEST(RecordReaderBatched, SharedBufferSurvivesSkipsAndTheNextFile) {
  TempDir dir;
  const std::string first = "alpha\nbeta\n" + std::string(300000, 'x') + "\ngamma\n";
  const std::string second = "delta\n" + std::string(5000, 'd') + "\nepsilon\n";
  test::write_file(dir / "a.txt", first);
  test::write_file(dir / "b.txt", second);
  RecordReader reader(kOptions);
  reader.open(test::input_for(dir / "a.txt"));
  Record r;
  ASSERT_TRUE(reader.next(r));
  BufferRef keep = reader.share_buffer();
  const std::string_view alpha(r.line.data(), 6);
  ASSERT_TRUE(reader.next(r));
  const std::string_view beta(r.line.data(), 5);
  ASSERT_TRUE(reader.next(r));
  EXPECT_TRUE(r.too_long);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.line, "gamma");
  BufferRef keep2 = reader.share_buffer();
  const std::string_view gamma(r.line.data(), 6);
  reader.open(test::input_for(dir / "b.txt"));
  std::vector<std::string> lines;
  while (reader.next(r)) lines.emplace_back(r.line);
  EXPECT_EQ(lines, (std::vector<std::string>{"delta", std::string(5000, 'd'), "epsilon"}));
  EXPECT_EQ(alpha, "alpha\n");
  EXPECT_EQ(beta, "beta\n");
  EXPECT_EQ(gamma, "gamma\n");
}

TEST(RecordReaderBatched, ConsumeOnlyTheNextPeekedRecords) {
  TempDir dir;
  test::write_file(dir / "a.txt", "one\ntwo\nthree\n");
  RecordReader reader(kOptions);
  reader.open(test::input_for(dir / "a.txt"));
  std::vector<Record> peeked(8);
  EXPECT_EQ(reader.peek_lines(peeked), 0U);  // peeking does not read
  Record r;
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.line, "one");
  ASSERT_EQ(reader.peek_lines(peeked), 2U);
  EXPECT_THROW(reader.consume(std::span(peeked).subspan(1, 1)), std::logic_error);
  reader.consume(std::span(peeked).first(1));
  EXPECT_THROW(reader.consume(std::span(peeked).first(1)), std::logic_error);  // consumed already
  ASSERT_EQ(reader.peek_lines(peeked), 1U);
  EXPECT_EQ(peeked[0].line, "three");
  EXPECT_EQ(peeked[0].line_number, 3U);
  reader.consume(std::span(peeked).first(1));
  EXPECT_EQ(reader.peek_lines(peeked), 0U);
  EXPECT_FALSE(reader.next(r));
  EXPECT_EQ(reader.cursor().records, 3U);
  EXPECT_EQ(reader.cursor().decompressed_offset, 14U);
}

}  // namespace
}  // namespace bloomshard::io
