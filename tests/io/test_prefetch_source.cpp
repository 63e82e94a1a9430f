// PrefetchSource, the reader's read-ahead thread: blocks handed out in order
// whatever the read sizes; an error handed out after the bytes before it,
// and at the same line by a reader; a bounded read-ahead that stops cleanly
// mid-file; nothing read ahead survives a seek or goes past a range's end;
// a reader's cursor is the consumed position, not the prefetched one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/errors.hpp"
#include "io/records/prefetch_source.hpp"
#include "io/records/record_reader.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

char pattern_byte(std::uint64_t i) { return static_cast<char>('a' + (i * 7 + i / 251) % 26); }

// What a scripted source was asked and gave, readable after it is gone.
struct Tally {
  std::atomic<std::uint64_t> reads{0};
  std::atomic<std::uint64_t> bytes{0};
};

// An endless (or `total`-byte) stream of pattern bytes, in reads of at most
// `step` bytes; throws "damage" once `fail_after` bytes are given (as the
// codecs do: the bytes before the damage first, the error on the next call,
// and again on every later call); each read can sleep.
class ScriptedSource final : public ByteSource {
 public:
  struct Script {
    std::uint64_t total = UINT64_MAX;
    std::size_t step = 1000;
    std::uint64_t fail_after = UINT64_MAX;
    std::chrono::milliseconds sleep{0};
  };
  ScriptedSource(Script script, std::shared_ptr<Tally> tally)
      : script_(script), tally_(std::move(tally)) {}
  std::size_t read(std::span<char> dst) override {
    ++tally_->reads;
    if (script_.sleep.count() > 0) std::this_thread::sleep_for(script_.sleep);
    if (at_ >= script_.fail_after)
      throw InputError("scripted", 0, 0, "damage at " + std::to_string(at_));
    const std::uint64_t end = std::min(script_.total, script_.fail_after);
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>({dst.size(), script_.step, end - at_}));
    for (std::size_t i = 0; i < n; ++i) dst[i] = pattern_byte(at_ + i);
    at_ += n;
    tally_->bytes += n;
    return n;
  }
  std::uint64_t compressed_offset() const noexcept override { return at_; }

 private:
  Script script_;
  std::shared_ptr<Tally> tally_;
  std::uint64_t at_ = 0;
};

std::unique_ptr<ScriptedSource> scripted(ScriptedSource::Script s, std::shared_ptr<Tally> t) {
  return std::make_unique<ScriptedSource>(s, std::move(t));
}

// Waits until the source's read count stops moving (the thread blocks on a
// full queue or has ended), at most ~2 s.
void settle(const Tally& t) {
  std::uint64_t last = UINT64_MAX;
  for (int i = 0; i < 200 && t.reads.load() != last; ++i) {
    last = t.reads.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST(IoPrefetch, BlocksArriveInOrderWhateverTheReadSizes) {
  const std::uint64_t total = 3'000'017;
  auto tally = std::make_shared<Tally>();
  PrefetchSource src(scripted({.total = total, .step = 7001}, tally),
                     {.blocks = 3, .block_bytes = 4096 + 13});
  std::mt19937 rng(5);
  std::string got;
  std::vector<char> buf(70000);
  for (;;) {
    const std::size_t want = 1 + rng() % buf.size();
    const std::size_t n = src.read(std::span<char>(buf.data(), want));
    ASSERT_LE(n, want);
    if (n == 0) break;
    got.append(buf.data(), n);
  }
  ASSERT_EQ(got.size(), total);
  for (std::uint64_t i = 0; i < total; ++i) {
    if (got[i] != pattern_byte(i)) FAIL() << "byte " << i << " out of order";
  }
  EXPECT_EQ(src.read(buf), 0U);  // the end stays the end
  EXPECT_EQ(src.compressed_offset(), total);
}

TEST(IoPrefetch, AnErrorComesAfterEveryByteBeforeIt) {
  const std::uint64_t fail_after = 100'003;
  auto tally = std::make_shared<Tally>();
  PrefetchSource src(scripted({.step = 4096, .fail_after = fail_after}, tally),
                     {.blocks = 64, .block_bytes = 4096});
  std::vector<char> buf(1000);
  ASSERT_EQ(src.read(std::span<char>(buf.data(), 1)), 1U);
  settle(*tally);  // the thread has met the damage long before the caller
  std::uint64_t got = 1;
  try {
    for (;;) {
      const std::size_t n = src.read(buf);
      ASSERT_NE(n, 0U) << "the end instead of the error";
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(buf[i], pattern_byte(got + i));
      got += n;
    }
  } catch (const InputError& e) {
    EXPECT_EQ(got, fail_after);
    EXPECT_EQ(e.reason(), "damage at " + std::to_string(fail_after));
  }
  EXPECT_THROW((void)src.read(buf), InputError);  // and on every later call
}

// The reader over damaged gzip and zstd inputs: the same records, the same
// error (line, offset, reason) and the same cursor with read-ahead as without.
TEST(IoPrefetch, AReaderReportsDamageAtTheSameLine) {
  TempDir dir;
  std::string payload;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) payload += "line-" + std::to_string(rng()) + "\n";
  struct Outcome {
    std::vector<std::string> lines;
    std::string error;
    std::uint64_t line = 0, offset = 0;
    InputCursor cursor;
  };
  const auto read = [](const InputFile& in, std::size_t prefetch) {
    Outcome o;
    RecordReader reader({.buffer_bytes = 64 << 10, .prefetch_blocks = prefetch});
    reader.open(in);
    Record r;
    try {
      while (reader.next(r)) o.lines.emplace_back(r.line);
    } catch (const InputError& e) {
      o.error = e.reason();
      o.line = e.line();
      o.offset = e.offset();
    }
    o.cursor = reader.cursor();
    return o;
  };
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    const std::string full = test::compress(comp, payload);
    for (const std::size_t cut : {full.size() / 3, full.size() - 9}) {
      SCOPED_TRACE(std::string(compression_name(comp)) + " cut at " + std::to_string(cut));
      const std::string path = (dir / ("cut" + std::to_string(cut) + ".txt")).string() +
                               (comp == Compression::kGzip ? ".gz" : ".zst");
      test::write_file(path, std::string_view(full).substr(0, cut));
      const InputFile in = test::input_for(path);
      const Outcome plain = read(in, 0);
      const Outcome ahead = read(in, 4);
      ASSERT_FALSE(plain.error.empty());
      EXPECT_GT(plain.lines.size(), 1000U);
      EXPECT_EQ(ahead.lines, plain.lines);
      EXPECT_EQ(ahead.error, plain.error);
      EXPECT_EQ(ahead.line, plain.line);
      EXPECT_EQ(ahead.offset, plain.offset);
      EXPECT_EQ(ahead.cursor, plain.cursor);
    }
  }
}

TEST(IoPrefetch, ReadAheadIsBoundedAndStopsCleanlyMidFile) {
  auto tally = std::make_shared<Tally>();
  {
    PrefetchSource src(scripted({.step = 4096}, tally), {.blocks = 3, .block_bytes = 4096});
    std::vector<char> buf(10);
    ASSERT_EQ(src.read(buf), 10U);
    // The thread fills its 3 blocks (however slowly a loaded machine runs
    // it), then stops reading.
    for (int i = 0; i < 1000 && tally->bytes.load() < 3U * 4096; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    settle(*tally);
    // 3 blocks, the one being handed out among them: nothing beyond.
    EXPECT_EQ(tally->bytes.load(), 3U * 4096);
  }  // the destructor stops the thread with the queue full
  const std::uint64_t reads = tally->reads.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(tally->reads.load(), reads);  // nothing reads after it

  // Stopped while the thread is inside a slow read: it waits for that read.
  auto slow = std::make_shared<Tally>();
  const auto begun = std::chrono::steady_clock::now();
  {
    PrefetchSource src(scripted({.step = 100, .sleep = std::chrono::milliseconds(100)}, slow),
                       {.blocks = 2, .block_bytes = 100});
    std::vector<char> buf(50);
    ASSERT_EQ(src.read(buf), 50U);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(2));
  const std::uint64_t slow_reads = slow->reads.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(slow->reads.load(), slow_reads);
}

// After a seek the next byte is the one sought, and nothing read ahead
// before it is handed out.
TEST(IoPrefetch, NothingReadAheadSurvivesASeek) {
  TempDir dir;
  std::string content(3'000'000, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = pattern_byte(i);
  test::write_file(dir / "plain.txt", content);
  PrefetchSource src(open_byte_source(dir / "plain.txt", Compression::kNone),
                     {.blocks = 4, .block_bytes = 65536});
  ASSERT_TRUE(src.seekable());
  std::vector<char> buf(1000);
  ASSERT_EQ(src.read(buf), 1000U);
  for (const std::uint64_t to : {std::uint64_t{2'500'000}, std::uint64_t{17}, std::uint64_t{0}}) {
    SCOPED_TRACE("seek to " + std::to_string(to));
    src.seek(to);
    EXPECT_EQ(src.compressed_offset(), to);
    const std::size_t n = src.read(buf);
    ASSERT_EQ(n, 1000U);
    EXPECT_EQ(std::string_view(buf.data(), n), std::string_view(content).substr(to, n));
  }
}

// The thread reads at most read_limit bytes of the wrapped source; a reader
// over a range of a file reads ahead up to the range's end, never past it.
TEST(IoPrefetch, NeverReadsPastItsLimit) {
  auto tally = std::make_shared<Tally>();
  PrefetchSource src(scripted({.total = 50000, .step = 3000}, tally),
                     {.blocks = 8, .block_bytes = 4096, .read_limit = 10'001});
  std::vector<char> buf(20000);
  std::uint64_t got = 0;
  while (const std::size_t n = src.read(buf)) got += n;
  settle(*tally);
  EXPECT_EQ(got, 10'001U);
  EXPECT_EQ(tally->bytes.load(), 10'001U);

  TempDir dir;
  std::string content;
  for (int i = 0; i < 100000; ++i) content += "r" + std::to_string(i) + "\n";
  test::write_file(dir / "range.txt", content);
  const InputFile in = test::input_for(dir / "range.txt");
  const std::uint64_t begin = content.find("r20000\n");
  const std::uint64_t end = content.find("r70000\n");
  const auto lines = [&](std::size_t prefetch) {
    RecordReader reader({.buffer_bytes = 64 << 10, .prefetch_blocks = prefetch});
    reader.open_range(in, begin, end);
    std::vector<std::string> out;
    Record r;
    while (reader.next(r)) out.emplace_back(r.line);
    EXPECT_EQ(reader.cursor().decompressed_offset, end);
    return out;
  };
  const auto ahead = lines(4);
  EXPECT_EQ(ahead, lines(0));
  ASSERT_EQ(ahead.size(), 50000U);
  EXPECT_EQ(ahead.back(), "r69999");
}

// A checkpoint saves the consumed position: with read-ahead a reader's
// cursor (frame start included) and digest after k records are those of a
// reader without it, and a resume from them reads on at record k + 1.
TEST(IoPrefetch, CursorsAreTheConsumedPosition) {
  TempDir dir;
  // Three members or frames of ~1.7 MB: frame starts are noted 1 MiB apart.
  const auto line = [](int i) { return "k" + std::to_string(i) + " " + std::string(36, 'x'); };
  std::string a, b, c;
  for (int i = 0; i < 120000; ++i) (i < 40000 ? a : i < 80000 ? b : c) += line(i) + "\n";
  for (const Compression comp : {Compression::kNone, Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const std::string path = (dir / "multi.txt").string() + (comp == Compression::kGzip   ? ".gz"
                                                             : comp == Compression::kZstd ? ".zst"
                                                                                          : "");
    test::write_file(
        path, comp == Compression::kNone ? a + b + c : test::compress_chunks(comp, {a, b, c}));
    const InputFile in = test::input_for(path);
    for (const std::uint64_t k : {std::uint64_t{1}, std::uint64_t{50000}, std::uint64_t{119999}}) {
      SCOPED_TRACE("after " + std::to_string(k));
      const auto position = [&](std::size_t prefetch) {
        RecordReader reader({.buffer_bytes = 64 << 10, .prefetch_blocks = prefetch});
        reader.open(in);
        Record r;
        for (std::uint64_t i = 0; i < k; ++i) EXPECT_TRUE(reader.next(r));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it read ahead
        return std::pair(reader.cursor(), reader.prefix_digest());
      };
      const auto [cursor, digest] = position(4);
      EXPECT_EQ(cursor, position(0).first);
      EXPECT_EQ(digest, position(0).second);
      RecordReader resumed({.buffer_bytes = 64 << 10, .prefetch_blocks = 4});
      resumed.open(in);
      resumed.skip_to(cursor, digest);
      Record r;
      ASSERT_TRUE(resumed.next(r));
      EXPECT_EQ(r.line, line(static_cast<int>(k)));
      EXPECT_EQ(r.line_number, k + 1);
    }
  }
}

}  // namespace
}  // namespace bloomshard::io
