// Compressed resume: a multi-frame zstd or multi-member gzip
// input resumed at a cursor starts decoding at the frame start saved with
// the cursor, never reads the frames before it (they are overwritten with
// garbage here and the resume still succeeds), and reads exactly the
// records a straight read has after the cursor. Single-frame files and
// frame starts that do not work resume from byte 0. Fixtures are built with
// zlib/libzstd directly (io_test_util.hpp); the true frame starts are known
// from the chunk sizes, independently of the reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "io/records/byte_source.hpp"
#include "io/records/record_reader.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

// ~4.4 MiB of lines of varying length; the last one has no newline.
std::string corpus() {
  std::string s;
  for (int i = 0; s.size() < (std::size_t{9} << 19); ++i) {
    s += "record-" + std::to_string(i) + "-" + std::string(static_cast<std::size_t>(i % 97), 'x');
    s += i % 7 == 0 ? "\r\n" : "\n";
  }
  return s + "last line without newline";
}

// A zstd skippable frame (magic 0x184D2A5?, LE size, payload), as the
// seekable format's seek table or pzstd's headers are.
std::string skippable_frame(std::size_t payload) {
  std::string f = "\x50\x2A\x4D\x18";
  for (int i = 0; i < 4; ++i) f += static_cast<char>((payload >> (8 * i)) & 0xFF);
  return f + std::string(payload, '\x5A');
}

struct Framed {
  std::string bytes;               // the compressed file
  std::vector<FrameStart> starts;  // every frame/member start but the first
  std::size_t largest_chunk = 0;
};

// `content` cut into chunks of `chunk` bytes (so frames start mid-line),
// one frame/member each; a skippable frame after the third zstd frame.
Framed framed(Compression c, const std::string& content, std::size_t chunk) {
  Framed f;
  for (std::size_t at = 0; at < content.size(); at += chunk) {
    const std::string_view part = std::string_view(content).substr(at, chunk);
    if (at != 0) f.starts.push_back({f.bytes.size(), at});
    f.bytes += c == Compression::kGzip ? test::gzip_member(part, 1) : test::zstd_frame(part, 1);
    f.largest_chunk = std::max(f.largest_chunk, part.size());
    if (c == Compression::kZstd && at == 2 * chunk) {
      f.starts.push_back({f.bytes.size(), at + part.size()});
      f.bytes += skippable_frame(100);
    }
  }
  return f;
}

InputFile write_input(const TempDir& dir, const std::string& stem, Compression c,
                      std::string_view bytes) {
  const auto path = dir / (stem + test::suffix_for(Format::kPlainLines, c));
  test::write_file(path, bytes);
  return test::input_for(path);
}

struct Position {
  InputCursor cursor;
  std::uint64_t digest = 0;
};

// Reads `records` records straight and says where the reader stands.
Position position_after(const InputFile& in, std::uint64_t records) {
  RecordReader reader;
  reader.open(in);
  Record r;
  while (reader.cursor().records < records) {
    if (!reader.next(r)) throw std::runtime_error("input too short");
  }
  return {reader.cursor(), reader.prefix_digest()};
}

struct Resumed {
  std::vector<std::string> records;  // read after the cursor, with terminators
  RecordReader::ResumeMethod method{};
  std::string fallback;
  InputCursor cursor;  // right after skip_to
  std::uint64_t end_digest = 0;
};

// Resumes at `at` and reads to the end.
Resumed read_resumed(const InputFile& in, const Position& at) {
  RecordReader reader;
  reader.open(in);
  reader.skip_to(at.cursor, at.digest);
  Resumed out{{}, reader.resume_method(), reader.resume_fallback(), reader.cursor(), 0};
  Record r;
  while (reader.next(r)) out.records.push_back(std::string(r.line) + std::string(r.terminator));
  out.end_digest = reader.prefix_digest();
  return out;
}

std::vector<std::string> tail_of(const std::vector<test::OwnedRecord>& all, std::uint64_t from) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < all.size(); ++i) out.push_back(all[i].line + all[i].terminator);
  return out;
}

const Compression kCodecs[] = {Compression::kGzip, Compression::kZstd};

TEST(CompressedResume, MultiFrameResumesAtTheSavedFrameOnly) {
  TempDir dir;
  const std::string content = corpus();
  for (const Compression c : kCodecs) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const Framed f = framed(c, content, 300'001);
    const InputFile in = write_input(dir, "multi", c, f.bytes);
    const auto all = test::read_all(in);
    const std::uint64_t total = all.size();
    const Position end = position_after(in, total);
    for (const std::uint64_t k : {total * 7 / 10, total / 2 + 1, total - 1, total}) {
      SCOPED_TRACE("cursor after " + std::to_string(k) + " of " + std::to_string(total));
      const Position at = position_after(in, k);
      // The saved start is a true one, before the cursor and near it.
      ASSERT_TRUE(at.cursor.frame.has_value());
      EXPECT_NE(std::find(f.starts.begin(), f.starts.end(), *at.cursor.frame), f.starts.end());
      EXPECT_LT(at.cursor.frame->decompressed_offset, at.cursor.decompressed_offset);
      EXPECT_LT(at.cursor.decompressed_offset - at.cursor.frame->decompressed_offset,
                kFrameStartSpacing + f.largest_chunk);

      const Resumed resumed = read_resumed(in, at);
      EXPECT_EQ(resumed.records, tail_of(all, k));
      EXPECT_EQ(resumed.method, RecordReader::ResumeMethod::kFrame);
      EXPECT_TRUE(resumed.fallback.empty());
      EXPECT_EQ(resumed.cursor, at.cursor);       // frame start included
      EXPECT_EQ(resumed.end_digest, end.digest);  // the saved chain goes on as a straight read's

      // Every compressed byte before the saved frame overwritten: the
      // resume still reads the same records, so it never read them.
      std::string damaged = f.bytes;
      std::fill_n(damaged.begin(), at.cursor.frame->compressed_offset, '\xA5');
      const InputFile bad = write_input(dir, "damaged", c, damaged);
      EXPECT_THROW(test::read_all(bad), InputError);  // the damage is real
      const Resumed past_damage = read_resumed(bad, at);
      EXPECT_EQ(past_damage.records, tail_of(all, k));
      EXPECT_EQ(past_damage.method, RecordReader::ResumeMethod::kFrame);
    }
  }
}

TEST(CompressedResume, NoFrameStartNearTheFileStart) {
  TempDir dir;
  const std::string content = corpus();
  for (const Compression c : kCodecs) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const InputFile in = write_input(dir, "multi", c, framed(c, content, 300'001).bytes);
    // Within the first kFrameStartSpacing bytes no start is worth saving.
    const Position early = position_after(in, 100);
    EXPECT_FALSE(early.cursor.frame.has_value());
  }
}

TEST(CompressedResume, SingleFrameFilesResumeFromTheStart) {
  TempDir dir;
  const std::string content = corpus();
  for (const Compression c : kCodecs) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const InputFile in = write_input(dir, "single", c, test::compress(c, content));
    const auto all = test::read_all(in);
    const std::uint64_t k = all.size() * 7 / 10;
    const Position at = position_after(in, k);
    EXPECT_FALSE(at.cursor.frame.has_value());
    const Resumed resumed = read_resumed(in, at);
    EXPECT_EQ(resumed.records, tail_of(all, k));
    EXPECT_EQ(resumed.method, RecordReader::ResumeMethod::kReread);
  }
}

// A saved start that does not decode, or that decodes to other bytes, is
// only a lost shortcut: the resume re-reads from byte 0 (checking the
// digest on the way) and says why.
TEST(CompressedResume, AFrameStartThatDoesNotWorkFallsBackToTheStart) {
  TempDir dir;
  const std::string content = corpus();
  for (const Compression c : kCodecs) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const Framed f = framed(c, content, 300'001);
    const InputFile in = write_input(dir, "multi", c, f.bytes);
    const auto all = test::read_all(in);
    const std::uint64_t k = all.size() * 7 / 10;
    const Position good = position_after(in, k);
    ASSERT_TRUE(good.cursor.frame.has_value());
    const FrameStart g = *good.cursor.frame;
    for (const FrameStart wrong : {FrameStart{g.compressed_offset + 1, g.decompressed_offset},
                                   FrameStart{f.bytes.size() + 10, g.decompressed_offset},
                                   FrameStart{g.compressed_offset, g.decompressed_offset + 1}}) {
      SCOPED_TRACE("frame start " + std::to_string(wrong.compressed_offset) + "/" +
                   std::to_string(wrong.decompressed_offset));
      Position at = good;
      at.cursor.frame = wrong;
      const Resumed resumed = read_resumed(in, at);
      EXPECT_EQ(resumed.method, RecordReader::ResumeMethod::kReread);
      EXPECT_NE(resumed.fallback.find("read from the start instead"), std::string::npos)
          << resumed.fallback;
      EXPECT_EQ(resumed.records, tail_of(all, k));
      EXPECT_EQ(resumed.cursor, good.cursor);  // the re-read found the true start again
    }
    // Without a digest to carry on, the start is not used.
    RecordReader reader;
    reader.open(in);
    reader.skip_to(good.cursor);
    EXPECT_EQ(reader.resume_method(), RecordReader::ResumeMethod::kReread);
    EXPECT_TRUE(reader.resume_fallback().empty());
  }
}

}  // namespace
}  // namespace bloomshard::io
