// RecordReader: every compression, CRLF, missing final newline, empty files
// and lines, long lines, truncated/corrupt input, buffer boundaries, resume.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <random>

#include "io/errors.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/record_reader.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::OwnedRecord;
using test::TempDir;

struct Expected {
  std::string line;
  std::string terminator;
};

// Splits `content` the way the reader must, as an oracle.
std::vector<Expected> split_lines(std::string_view content) {
  std::vector<Expected> out;
  std::size_t pos = 0;
  while (pos < content.size()) {
    const std::size_t nl = content.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.push_back({std::string(content.substr(pos)), ""});
      break;
    }
    std::size_t end = nl;
    std::string term = "\n";
    if (end > pos && content[end - 1] == '\r') {
      --end;
      term = "\r\n";
    }
    out.push_back({std::string(content.substr(pos, end - pos)), term});
    pos = nl + 1;
  }
  return out;
}

void expect_matches(const std::vector<OwnedRecord>& got, std::string_view content) {
  const auto want = split_lines(content);
  ASSERT_EQ(got.size(), want.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(got[i].line, want[i].line);
    EXPECT_EQ(got[i].terminator, want[i].terminator);
    EXPECT_EQ(got[i].line_number, i + 1);
    EXPECT_FALSE(got[i].too_long);
    offset += want[i].line.size() + want[i].terminator.size();
    EXPECT_EQ(got[i].end_offset, offset);
  }
}

InputFile make_input(const TempDir& dir, const std::string& stem, Format f, Compression c,
                     std::string_view compressed_bytes) {
  const auto path = dir / (stem + test::suffix_for(f, c));
  test::write_file(path, compressed_bytes);
  return test::input_for(path);
}

const std::string kMixed =
    "alpha\n{\"id\":\"b\"}\r\n\n\r\nline with \r inside\n"
    "\xC3\xA9t\xC3\xA9\nlast line without newline";

TEST(IoReader, RoundTripEveryFormatAndCompression) {
  TempDir dir;
  for (const Format f : {Format::kPlainLines, Format::kJsonLines}) {
    for (const Compression in_c : test::kAllCompressions) {
      for (const Compression out_c : test::kAllCompressions) {
        SCOPED_TRACE(std::string(format_name(f)) + " " + std::string(compression_name(in_c)) +
                     " -> " + std::string(compression_name(out_c)));
        const InputFile in = make_input(dir, "in", f, in_c, test::compress(in_c, kMixed));
        EXPECT_EQ(in.format, f);
        EXPECT_EQ(in.compression, in_c);
        expect_matches(test::read_all(in), kMixed);

        // Reader -> writer keeps every record byte-identical.
        const auto out_path = dir / ("out" + test::suffix_for(f, out_c));
        {
          RecordReader reader;
          reader.open(in);
          auto writer = OutputWriter::create(out_path, out_c);
          Record r;
          while (reader.next(r)) writer.write(r.line, r.terminator);
          writer.close();
        }
        EXPECT_EQ(test::decompress(out_c, test::read_file(out_path)), kMixed);
        expect_matches(test::read_all(test::input_for(out_path)), kMixed);
      }
    }
  }
}

TEST(IoReader, MultiMemberGzipAndMultiFrameZstd) {
  TempDir dir;
  // Chunk borders fall mid-line and between the '\r' and '\n' of a CRLF.
  const std::string a = "first\r";
  const std::string b = "\nsec";
  const std::string c = "ond\nthird\n";
  const std::string d;  // an empty member/frame in the middle
  const std::string e = "fourth";
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const InputFile in = make_input(dir, "multi", Format::kPlainLines, comp,
                                    test::compress_chunks(comp, {a, b, c, d, e}));
    const auto got = test::read_all(in);
    expect_matches(got, a + b + c + d + e);
    ASSERT_EQ(got.size(), 4U);
    EXPECT_EQ(got[0].line, "first");
    EXPECT_EQ(got[0].terminator, "\r\n");
  }
}

TEST(IoReader, CrlfAndMissingFinalNewline) {
  TempDir dir;
  const InputFile in =
      make_input(dir, "crlf", Format::kPlainLines, Compression::kNone, "a\r\nb\nc\r");
  const auto got = test::read_all(in);
  ASSERT_EQ(got.size(), 3U);
  EXPECT_EQ(got[0].line, "a");
  EXPECT_EQ(got[0].terminator, "\r\n");
  EXPECT_EQ(got[1].line, "b");
  EXPECT_EQ(got[1].terminator, "\n");
  EXPECT_EQ(got[2].line, "c\r");  // a lone '\r' at EOF is not a terminator
  EXPECT_EQ(got[2].terminator, "");
  EXPECT_EQ(got[2].end_offset, 7U);
}

TEST(IoReader, EmptyFilesGiveNoRecords) {
  TempDir dir;
  EXPECT_TRUE(
      test::read_all(make_input(dir, "zero", Format::kPlainLines, Compression::kNone, "")).empty());
  for (const Compression comp : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    // A valid stream of empty content (one empty member or frame).
    EXPECT_TRUE(
        test::read_all(make_input(dir, "empty", Format::kJsonLines, comp, test::compress(comp, "")))
            .empty());
  }
}

// A zero-byte .gz/.zst holds no member or frame: `gzip -t` and `zstd -t`
// call it truncated, and so does the reader (skipped or failed like any
// truncated input), at line 1, byte 0.
TEST(IoReader, ZeroByteCompressedFileIsTruncated) {
  TempDir dir;
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const InputFile in = make_input(dir, "zero", Format::kJsonLines, comp, "");
    try {
      (void)test::read_all(in);
      ADD_FAILURE() << "a zero-byte compressed file was read as empty";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), in.absolute_path.string());
      EXPECT_EQ(e.line(), 1U);
      EXPECT_NE(e.reason().find("truncated"), std::string::npos) << e.reason();
      EXPECT_NE(e.reason().find("empty file"), std::string::npos) << e.reason();
    }
  }
}

TEST(IoReader, EmptyLinesAreRecords) {
  TempDir dir;
  const InputFile in = make_input(dir, "blank", Format::kPlainLines, Compression::kZstd,
                                  test::compress(Compression::kZstd, "\n\n\r\nx\n\n"));
  const auto got = test::read_all(in);
  ASSERT_EQ(got.size(), 5U);
  EXPECT_EQ(got[0].line, "");
  EXPECT_EQ(got[2].terminator, "\r\n");
  EXPECT_EQ(got[3].line, "x");
  EXPECT_EQ(got[4].line, "");
  EXPECT_EQ(got[4].end_offset, 7U);
}

TEST(IoReader, TruncatedCompressedInputThrowsNamingTheFile) {
  TempDir dir;
  std::string payload;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) payload += "record-" + std::to_string(rng()) + "\n";
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const std::string full = test::compress(comp, payload);
    for (const std::size_t cut :
         {full.size() - 1, full.size() - 9, full.size() / 2, std::size_t{5}}) {
      const InputFile in = make_input(dir, "trunc" + std::to_string(cut), Format::kPlainLines, comp,
                                      std::string_view(full).substr(0, cut));
      try {
        (void)test::read_all(in);
        ADD_FAILURE() << "no error for a stream cut at " << cut << " of " << full.size();
      } catch (const InputError& e) {
        EXPECT_EQ(e.file(), in.absolute_path.string());
        EXPECT_NE(std::string(e.what()).find(in.absolute_path.string()), std::string::npos);
        EXPECT_GE(e.line(), 1U);
        EXPECT_TRUE(e.reason().find("truncated") != std::string::npos ||
                    e.reason().find("corrupt") != std::string::npos)
            << e.reason();
      }
    }
  }
}

// --on-input-error skip keeps the records before the damage, so the reader
// must deliver every complete line the codec can decode before it (also
// when the damage is found in the same block as them), then throw. The
// independent decoder (zlib / libzstd driven directly) tells how many.
TEST(IoReader, EveryLineBeforeTheDamageIsDelivered) {
  TempDir dir;
  std::string payload;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) payload += "line-" + std::to_string(rng()) + "\n";
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const std::string full = test::compress(comp, payload);
    for (const std::size_t cut : {full.size() / 2, full.size() - 9, full.size() * 3 / 4}) {
      const std::string cut_bytes = full.substr(0, cut);
      // Decodable prefix: what the decoder yields before it notices the cut.
      std::string decodable;
      std::vector<char> out(1 << 16);
      if (comp == Compression::kGzip) {
        z_stream z{};
        ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(cut_bytes.data()));
        z.avail_in = static_cast<uInt>(cut_bytes.size());
        int rc = Z_OK;
        do {
          z.next_out = reinterpret_cast<Bytef*>(out.data());
          z.avail_out = static_cast<uInt>(out.size());
          rc = inflate(&z, Z_NO_FLUSH);
          decodable.append(out.data(), out.size() - z.avail_out);
        } while (rc == Z_OK);
        inflateEnd(&z);
      } else {
        ZSTD_DCtx* d = ZSTD_createDCtx();
        ZSTD_inBuffer in{cut_bytes.data(), cut_bytes.size(), 0};
        for (;;) {
          ZSTD_outBuffer o{out.data(), out.size(), 0};
          const std::size_t rc = ZSTD_decompressStream(d, &o, &in);
          ASSERT_FALSE(ZSTD_isError(rc));
          decodable.append(out.data(), o.pos);
          if (in.pos == in.size && o.pos < o.size) break;
        }
        ZSTD_freeDCtx(d);
      }
      const std::size_t whole_lines =
          static_cast<std::size_t>(std::count(decodable.begin(), decodable.end(), '\n'));
      ASSERT_GT(whole_lines, 0U) << "cut " << cut << " leaves nothing decodable";
      const InputFile in =
          make_input(dir, "cut" + std::to_string(cut), Format::kPlainLines, comp, cut_bytes);
      RecordReader reader;
      reader.open(in);
      Record r;
      std::size_t got = 0;
      std::size_t pos = 0;
      try {
        while (reader.next(r)) {
          const std::size_t nl = payload.find('\n', pos);
          ASSERT_EQ(r.line, std::string_view(payload).substr(pos, nl - pos));
          pos = nl + 1;
          ++got;
        }
        ADD_FAILURE() << "no error at the cut";
      } catch (const InputError& e) {
        EXPECT_EQ(e.line(), whole_lines + 1) << e.what();
      }
      EXPECT_EQ(got, whole_lines);
      EXPECT_EQ(reader.cursor().records, whole_lines);
      EXPECT_EQ(reader.cursor().decompressed_offset, pos);
    }
  }
}

TEST(IoReader, CorruptCompressedInputThrows) {
  TempDir dir;
  const std::string payload(100000, 'q');
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    std::string bad = test::compress(comp, payload + "\n");
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5A);
    bad[bad.size() - 3] = static_cast<char>(bad[bad.size() - 3] ^ 0x5A);  // checksum area
    const InputFile in = make_input(dir, "corrupt", Format::kPlainLines, comp, bad);
    EXPECT_THROW((void)test::read_all(in), InputError);
    // Trailing garbage after a valid member/frame is not silently ignored.
    const InputFile tail = make_input(dir, "tail", Format::kPlainLines, comp,
                                      test::compress(comp, "ok\n") + "garbage!");
    EXPECT_THROW((void)test::read_all(tail), InputError);
  }
}

TEST(IoReader, LongLineIsRejectedAndReadingContinues) {
  TempDir dir;
  const std::size_t max = 100;
  const std::string huge(1 << 20, 'L');  // spans many 64 KiB buffer fills
  const std::string content = "short\n" + std::string(max, 'm') + "\r\n" +
                              std::string(max + 1, 'n') + "\n" + huge + "\r\n" + "after\n" +
                              std::string(max, 'o') + "\r\n" + huge;
  ReaderOptions options;
  options.max_line_bytes = max;
  options.buffer_bytes = 1;  // raised to the 64 KiB minimum
  for (const Compression comp : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const InputFile in =
        make_input(dir, "long", Format::kPlainLines, comp, test::compress(comp, content));
    const auto got = test::read_all(in, options);
    ASSERT_EQ(got.size(), 7U);
    EXPECT_EQ(got[0].line, "short");
    EXPECT_FALSE(got[1].too_long);  // exactly max bytes + CRLF fits
    EXPECT_EQ(got[1].line.size(), max);
    EXPECT_EQ(got[1].terminator, "\r\n");
    EXPECT_TRUE(got[2].too_long);  // max + 1
    EXPECT_EQ(got[2].line_bytes, max + 1);
    EXPECT_TRUE(got[3].too_long);
    EXPECT_EQ(got[3].line, huge.substr(0, kTooLongPrefixBytes));
    EXPECT_EQ(got[3].line_bytes, huge.size());
    EXPECT_EQ(got[3].terminator, "\r\n");
    EXPECT_EQ(got[4].line, "after");
    EXPECT_EQ(got[4].line_number, 5U);
    EXPECT_FALSE(got[5].too_long);
    EXPECT_TRUE(got[6].too_long);  // last line, no newline
    EXPECT_EQ(got[6].terminator, "");
    EXPECT_EQ(got[6].end_offset, content.size());
    std::uint64_t off = 0;
    for (const auto& r : got) {
      off += r.line_bytes + r.terminator.size();
      EXPECT_EQ(r.end_offset, off);
    }
  }
}

// A compressed input that breaks inside a too-long line: the records before
// it are delivered, and the cursor stays at the end of the last of them, the
// start of the long line. The reader had consumed part of that line's bytes
// when the codec failed; a cursor past them (with the records before) would
// be refused at the resume ("offset after 10 records is 90") and could never
// be revalidated once the input is repaired.
TEST(IoReader, ABreakInsideATooLongLineLeavesTheCursorAtTheLineStart) {
  TempDir dir;
  std::string head;
  for (int i = 0; i < 10; ++i) head += "line-" + std::to_string(i) + "\n";
  std::mt19937_64 rng(5);
  std::string huge;
  while (huge.size() < 300000) huge += std::to_string(rng());  // not very compressible
  ReaderOptions options;
  options.max_line_bytes = 1000;
  for (const Compression comp : {Compression::kGzip, Compression::kZstd}) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const std::string full = test::compress(comp, head + huge + "\nafter\n");
    const InputFile in = make_input(dir, "longcut", Format::kPlainLines, comp,
                                    std::string_view(full).substr(0, full.size() / 2));
    RecordReader reader(options);
    reader.open(in);
    Record r;
    std::size_t got = 0;
    try {
      while (reader.next(r)) ++got;
      ADD_FAILURE() << "no error at the cut";
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 11U) << e.what();
    }
    EXPECT_EQ(got, 10U);
    EXPECT_EQ(reader.cursor().records, 10U);
    EXPECT_EQ(reader.cursor().decompressed_offset, head.size());
  }
}

// Random line lengths (some larger than the initial buffer) across many
// buffer refills and compactions.
TEST(IoReader, RandomLinesAcrossBufferBoundaries) {
  TempDir dir;
  std::mt19937_64 rng(42);
  std::string content;
  for (int i = 0; i < 3000; ++i) {
    const std::size_t len = (i % 97 == 0) ? 150000 + rng() % 50000 : rng() % 300;
    std::string line(len, 'a');
    for (auto& ch : line) ch = static_cast<char>('a' + rng() % 26);
    content += line;
    content += (rng() % 3 == 0) ? "\r\n" : "\n";
  }
  content += "tail";
  ReaderOptions options;
  options.buffer_bytes = 64 << 10;
  options.max_line_bytes = 1 << 20;
  for (const Compression comp : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const InputFile in =
        make_input(dir, "random", Format::kPlainLines, comp, test::compress(comp, content));
    expect_matches(test::read_all(in, options), content);
  }
}

TEST(IoReader, SkipToResumesAtTheRightRecord) {
  TempDir dir;
  std::string content;
  for (int i = 0; i < 5000; ++i) {
    content += "line-" + std::to_string(i) + (i % 5 == 0 ? "\r\n" : "\n");
  }
  content += "no-newline";
  const std::size_t total = 5001;
  for (const Compression comp : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const InputFile in =
        make_input(dir, "resume", Format::kPlainLines, comp, test::compress(comp, content));
    const auto all = test::read_all(in);
    ASSERT_EQ(all.size(), total);
    for (const std::size_t k :
         {std::size_t{0}, std::size_t{1}, std::size_t{2500}, total - 1, total}) {
      SCOPED_TRACE("after " + std::to_string(k) + " records");
      InputCursor cursor;
      {
        RecordReader first;
        first.open(in);
        Record r;
        for (std::size_t i = 0; i < k; ++i) ASSERT_TRUE(first.next(r));
        cursor = first.cursor();
      }
      EXPECT_EQ(cursor.records, k);
      RecordReader second;
      second.open(in);
      second.skip_to(cursor);
      EXPECT_EQ(second.cursor(), cursor);
      Record r;
      std::size_t i = k;
      while (second.next(r)) {
        ASSERT_LT(i, total);
        EXPECT_EQ(r.line, all[i].line);
        EXPECT_EQ(r.line_number, i + 1);
        EXPECT_EQ(r.end_offset, all[i].end_offset);
        ++i;
      }
      EXPECT_EQ(i, total);
    }
    // A cursor that does not describe this file is refused.
    RecordReader bad;
    bad.open(in);
    const InputCursor wrong{10, all[9].end_offset + 1};
    EXPECT_THROW(bad.skip_to(wrong), InputError);
    RecordReader beyond;
    beyond.open(in);
    EXPECT_THROW(beyond.skip_to({total + 5, content.size() + 50}), InputError);
    RecordReader inconsistent;
    inconsistent.open(in);
    EXPECT_THROW(inconsistent.skip_to({0, 17}), InputError);
  }
}

// The prefix digest chains every consumed byte: the same at a cursor however
// it was reached (read through, or resumed), different as soon as one
// consumed byte differs; a compressed resume checks it while re-reading.
TEST(IoReader, PrefixDigestFollowsTheConsumedBytes) {
  TempDir dir;
  std::string payload;
  for (int i = 0; i < 3000; ++i) payload += "rec-" + std::to_string(i * 7919) + "\n";
  std::string other = payload;
  other[100] = other[100] == '1' ? '2' : '1';
  for (const Compression comp : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(comp)));
    const InputFile a =
        make_input(dir, "a", Format::kPlainLines, comp, test::compress(comp, payload));
    const InputFile b =
        make_input(dir, "b", Format::kPlainLines, comp, test::compress(comp, other));
    const auto digest_at = [](const InputFile& f, std::uint64_t records) {
      RecordReader r;
      r.open(f);
      Record rec;
      while (r.cursor().records < records && r.next(rec)) {
      }
      return std::pair(r.cursor(), r.prefix_digest());
    };
    const auto [cursor, digest] = digest_at(a, 1000);
    EXPECT_NE(digest, 0U);
    EXPECT_NE(digest_at(b, 1000).second, digest);
    EXPECT_EQ(digest_at(b, 1000).first, cursor);  // same lengths, other bytes
    EXPECT_NE(digest_at(a, 999).second, digest);
    // Resumed at the cursor with the saved digest, then read on: the same
    // digest at the end as a straight read.
    RecordReader r;
    r.open(a);
    r.skip_to(cursor, digest);
    Record rec;
    while (r.next(rec)) {
    }
    EXPECT_EQ(r.prefix_digest(), digest_at(a, 3000).second);
    if (comp != Compression::kNone) {
      RecordReader wrong;
      wrong.open(b);
      EXPECT_THROW(wrong.skip_to(cursor, digest), InputError);
    }
  }
}

TEST(IoReader, SkipToAfterReadingIsALogicError) {
  TempDir dir;
  const InputFile in = make_input(dir, "x", Format::kPlainLines, Compression::kNone, "a\nb\n");
  RecordReader reader;
  reader.open(in);
  Record r;
  ASSERT_TRUE(reader.next(r));
  EXPECT_THROW(reader.skip_to({1, 2}), std::logic_error);
}

TEST(IoReader, MissingFileThrowsInputError) {
  InputFile f;
  f.absolute_path = "/tmp/bloomshard_io_definitely_missing.txt";
  RecordReader reader;
  EXPECT_THROW(reader.open(f), InputError);
}

TEST(IoReader, ReaderIsReusableAcrossFiles) {
  TempDir dir;
  const InputFile a = make_input(dir, "a", Format::kPlainLines, Compression::kGzip,
                                 test::compress(Compression::kGzip, "1\n2\n"));
  const InputFile b = make_input(dir, "b", Format::kPlainLines, Compression::kNone, "3\n");
  RecordReader reader;
  Record r;
  reader.open(a);
  ASSERT_TRUE(reader.next(r));  // stop halfway through a
  reader.open(b);
  ASSERT_TRUE(reader.next(r));
  EXPECT_EQ(r.line, "3");
  EXPECT_EQ(r.line_number, 1U);
  EXPECT_FALSE(reader.next(r));
}

}  // namespace
}  // namespace bloomshard::io
