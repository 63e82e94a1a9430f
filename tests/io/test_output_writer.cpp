// OutputWriter: every compression, frames, commit + truncate-on-resume,
// pieces written from the caller's memory, and output_path_for refusing
// paths that would escape the output directory.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zstd.h>

#include <csignal>
#include <vector>

#include "io/errors.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

std::size_t count_zstd_frames(std::string_view data) {
  std::size_t frames = 0;
  while (!data.empty()) {
    const std::size_t n = ZSTD_findFrameCompressedSize(data.data(), data.size());
    if (ZSTD_isError(n) != 0) return 0;
    data.remove_prefix(n);
    ++frames;
  }
  return frames;
}

std::string file_contents(const std::filesystem::path& p, Compression c) {
  return test::decompress(c, test::read_file(p));
}

TEST(IoWriter, WritesRecordsByteIdentical) {
  TempDir dir;
  for (const Compression c : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const auto path = dir / ("sub/dir/out." + std::string(compression_name(c)));
    auto w = OutputWriter::create(path, c);  // creates sub/dir
    w.write("a", "\n");
    w.write("b", "\r\n");
    w.write("", "\n");
    w.write("no newline", "");
    EXPECT_EQ(w.bytes_in(), 16U);
    w.close();
    EXPECT_FALSE(w.is_open());
    EXPECT_EQ(file_contents(path, c), "a\nb\r\n\nno newline");
  }
}

TEST(IoWriter, LargeWritesThroughASmallBuffer) {
  TempDir dir;
  std::string big(3 << 20, 'z');
  for (std::size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>('a' + i % 26);
  OutputOptions opt;
  opt.buffer_bytes = 4096;
  for (const Compression c : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const auto path = dir / "big";
    auto w = OutputWriter::create(path, c, opt);
    w.write(big, "\n");
    w.write("x", "\n");
    w.close();
    EXPECT_EQ(file_contents(path, c), big + "\nx\n");
  }
}

TEST(IoWriter, PiecesFollowTheStagedBytesInOrder) {
  TempDir dir;
  // More pieces than one writev takes (1024), empty ones among them, and
  // a piece larger than the staging buffer.
  std::string arena;
  for (int i = 0; i < 3000; ++i) arena += "record-" + std::to_string(i) + (i % 7 ? "\n" : "\r\n");
  std::vector<std::string_view> pieces;
  std::string want = "head\n";
  for (std::size_t at = 0, n = 1; at < arena.size(); at += n, n = n % 97 + 1) {
    pieces.push_back(std::string_view(arena).substr(at, n));
    pieces.emplace_back();
    want += pieces[pieces.size() - 2];
  }
  const std::string big(3 << 20, 'b');
  pieces.push_back(big);
  want += big + "tail";
  OutputOptions small;
  small.buffer_bytes = 4096;
  for (const Compression c : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const auto path = dir / ("pieces." + std::string(compression_name(c)));
    auto w = OutputWriter::create(path, c, small);
    w.write("head", "\n");  // staged
    w.write_pieces(pieces);
    // Uncompressed: in the file already, nothing left staged.
    if (c == Compression::kNone) {
      EXPECT_EQ(w.file_length(), want.size() - 4);
    }
    w.write("tail", "");
    EXPECT_EQ(w.bytes_in(), want.size());
    const std::uint64_t committed = w.flush_and_sync();
    w.close();
    EXPECT_EQ(file_contents(path, c), want);
    // A resume after them appends at the committed length.
    auto r = OutputWriter::open_for_resume(path, c, committed);
    const std::string_view more[] = {"x", "", "yz"};
    r.write_pieces(more);
    r.close();
    EXPECT_EQ(file_contents(path, c), want + "xyz");
  }
}

TEST(IoWriter, AFailingWritevNamesTheFile) {
  // A file size limit makes writev stop short at the limit and then fail
  // (EFBIG): the bytes up to the limit are the pieces' first bytes, in
  // order, and the error names the file.
  TempDir dir;
  const auto path = dir / "limited.txt";
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto restore_signal = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = old;
  limited.rlim_cur = 10000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string arena;
  for (int i = 0; i < 2000; ++i) arena += "line " + std::to_string(i) + "\n";
  std::vector<std::string_view> pieces;
  for (std::size_t at = 0; at < arena.size(); at += 13) {
    pieces.push_back(std::string_view(arena).substr(at, 13));
  }
  std::string what;
  {
    auto w = OutputWriter::create(path, Compression::kNone);
    try {
      w.write_pieces(pieces);
    } catch (const OutputError& e) {
      what = e.what();
    }
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, restore_signal);
  EXPECT_NE(what.find(path.string()), std::string::npos) << what;
  EXPECT_NE(what.find("File too large"), std::string::npos) << what;
  EXPECT_EQ(test::read_file(path), arena.substr(0, 10000));
}

// A frame that fits the stage is compressed in one pass and names its
// content size; with zstd_content_size off it is streamed and names none
// (synth's corpora keep their bytes that way), and reads back the same.
TEST(IoWriter, ZstdContentSizeOnlyWhenAsked) {
  TempDir dir;
  for (const bool content_size : {true, false}) {
    SCOPED_TRACE(content_size ? "content size" : "streamed");
    OutputOptions opt;
    opt.zstd_content_size = content_size;
    const auto path = dir / (content_size ? "sized.zst" : "streamed.zst");
    auto w = OutputWriter::create(path, Compression::kZstd, opt);
    w.write_bytes("a small frame, well under the staging buffer\n");
    w.close();
    const std::string raw = test::read_file(path);
    const unsigned long long size = ZSTD_getFrameContentSize(raw.data(), raw.size());
    if (content_size) {
      EXPECT_EQ(size, 45U);
    } else {
      EXPECT_EQ(size, ZSTD_CONTENTSIZE_UNKNOWN);
    }
    EXPECT_EQ(file_contents(path, Compression::kZstd),
              "a small frame, well under the staging buffer\n");
  }
}

TEST(IoWriter, EmptyOutputIsAValidStream) {
  TempDir dir;
  for (const Compression c : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const auto path = dir / "empty";
    OutputWriter::create(path, c).close();
    const std::string raw = test::read_file(path);
    EXPECT_EQ(raw.empty(), c == Compression::kNone);
    EXPECT_EQ(test::decompress(c, raw), "");
  }
}

TEST(IoWriter, EndFrameStartsANewMemberOrFrame) {
  TempDir dir;
  const auto path = dir / "frames.zst";
  auto w = OutputWriter::create(path, Compression::kZstd);
  w.write("one", "\n");
  w.end_frame();
  w.end_frame();  // empty frame: nothing emitted
  w.write("two", "\n");
  w.close();
  const std::string raw = test::read_file(path);
  EXPECT_EQ(count_zstd_frames(raw), 2U);
  EXPECT_EQ(test::decompress(Compression::kZstd, raw), "one\ntwo\n");

  // gzip: each member decodes on its own, so truncating at the first
  // member's end gives a valid file.
  const auto gz = dir / "frames.gz";
  auto g = OutputWriter::create(gz, Compression::kGzip);
  g.write("one", "\n");
  const std::uint64_t first = g.flush_and_sync();
  g.write("two", "\n");
  g.close();
  const std::string graw = test::read_file(gz);
  EXPECT_EQ(test::decompress(Compression::kGzip, graw), "one\ntwo\n");
  EXPECT_EQ(test::decompress(Compression::kGzip, std::string_view(graw).substr(0, first)), "one\n");
}

TEST(IoWriter, ResumeTruncatesToTheCommittedPrefix) {
  TempDir dir;
  for (const Compression c : test::kAllCompressions) {
    SCOPED_TRACE(std::string(compression_name(c)));
    const auto path = dir / ("resume" + std::string(compression_name(c)));
    std::uint64_t committed = 0;
    {
      auto w = OutputWriter::create(path, c);
      for (int i = 0; i < 1000; ++i) w.write("kept-" + std::to_string(i), "\n");
      committed = w.flush_and_sync();
      EXPECT_EQ(committed, std::filesystem::file_size(path));
      EXPECT_EQ(w.file_length(), committed);
      // Written after the commit: a crash here must lose exactly this.
      for (int i = 0; i < 500; ++i) w.write("lost-" + std::to_string(i), "\n");
      w.end_frame();
      w.write("lost-partial", "\n");
      w.close();
    }
    EXPECT_GT(std::filesystem::file_size(path), committed);
    {
      auto w = OutputWriter::open_for_resume(path, c, committed);
      EXPECT_EQ(std::filesystem::file_size(path), committed);
      w.write("after-resume", "\n");
      const std::uint64_t second = w.flush_and_sync();
      EXPECT_GT(second, committed);
      w.close();
    }
    std::string want;
    for (int i = 0; i < 1000; ++i) want += "kept-" + std::to_string(i) + "\n";
    EXPECT_EQ(file_contents(path, c), want + "after-resume\n");
    // Resuming at length 0 starts over.
    OutputWriter::open_for_resume(path, c, 0).close();
    EXPECT_EQ(file_contents(path, c), "");
  }
}

TEST(IoWriter, ResumeRefusesAShorterOrMissingFile) {
  TempDir dir;
  const auto path = dir / "short";
  test::write_file(path, "abc");
  EXPECT_THROW((void)OutputWriter::open_for_resume(path, Compression::kNone, 4), OutputError);
  EXPECT_THROW((void)OutputWriter::open_for_resume(dir / "missing", Compression::kNone, 0),
               OutputError);
}

TEST(IoWriter, OutputPathForStaysInsideTheOutputDir) {
  const std::filesystem::path out = "/data/out";
  EXPECT_EQ(output_path_for(out, "a.jsonl"), std::filesystem::path("/data/out/a.jsonl"));
  EXPECT_EQ(output_path_for(out, "x/y/z.txt.gz"), std::filesystem::path("/data/out/x/y/z.txt.gz"));
  EXPECT_EQ(output_path_for(out, "..hidden/a..b"),
            std::filesystem::path("/data/out/..hidden/a..b"));
  for (const std::string_view bad : std::initializer_list<std::string_view>{
           "", "/etc/passwd", "..", ".", "../x", "a/../../x", "a/./b", "a//b", "a/", "x/..",
           std::string_view("a\0b", 3)}) {
    EXPECT_THROW((void)output_path_for(out, bad), OutputError) << bad;
  }
}

TEST(IoWriter, MoveKeepsTheFileOpen) {
  TempDir dir;
  const auto path = dir / "moved.gz";
  OutputWriter a = OutputWriter::create(path, Compression::kGzip);
  a.write("x", "\n");
  OutputWriter b = std::move(a);
  b.write("y", "\n");
  OutputWriter c;
  c = std::move(b);
  c.close();
  EXPECT_EQ(file_contents(path, Compression::kGzip), "x\ny\n");
}

}  // namespace
}  // namespace bloomshard::io
