// RecordReader::take_buffer (issue 15, long fields): the caller keeps the
// buffer of a long line instead of copying it. Taking buffers must not
// change what is read (lines, terminators, offsets, prefix digests, for
// every codec), and a taken buffer's record stays intact while the reader
// goes on in a fresh one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bloomshard/io/record_reader.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

std::string corpus() {
  std::string s;
  const std::size_t sizes[] = {5, 300000, 0, 70000, 1, 200000, 65536, 3};
  char c = 'a';
  for (const std::size_t n : sizes) {
    s += std::string(n, c++);
    s += (n % 2 == 0) ? "\r\n" : "\n";
  }
  s += std::string(100000, 'z');  // last line without newline
  return s;
}

struct Taken {
  LineBuffer owner;
  std::string_view bytes;  // line + terminator, inside owner
  std::string want;
};

TEST(RecordReaderTakeBuffer, TakingBuffersChangesNothingRead) {
  TempDir dir;
  const std::string content = corpus();
  for (const Compression c : test::kAllCompressions) {
    const auto path = dir / ("in" + test::suffix_for(Format::kPlainLines, c));
    test::write_file(path, c == Compression::kNone ? content : test::compress(c, content));
    const InputFile file = test::input_for(path);
    const ReaderOptions options{.max_line_bytes = 1 << 20, .buffer_bytes = 64 << 10};
    const std::vector<test::OwnedRecord> want = test::read_all(file, options);

    RecordReader reader(options);
    reader.open(file);
    Record r;
    std::vector<Taken> taken;
    std::size_t i = 0;
    std::uint64_t digest_before = 0;
    while (reader.next(r)) {
      ASSERT_LT(i, want.size());
      EXPECT_EQ(r.line, want[i].line);
      EXPECT_EQ(r.terminator, want[i].terminator);
      EXPECT_EQ(r.end_offset, want[i].end_offset);
      if (r.line.size() >= 60000) {  // every long line: take its buffer
        const std::string_view bytes(r.line.data(), r.line.size() + r.terminator.size());
        taken.push_back({reader.take_buffer(), bytes, want[i].line + want[i].terminator});
      }
      ++i;
      digest_before = reader.prefix_digest();
    }
    EXPECT_EQ(i, want.size());
    // The same prefix digest as a reader that never gave a buffer away.
    RecordReader plain(options);
    plain.open(file);
    while (plain.next(r)) {
    }
    EXPECT_EQ(digest_before, plain.prefix_digest());
    ASSERT_EQ(taken.size(), 5U);
    for (const Taken& t : taken) EXPECT_EQ(t.bytes, t.want);
  }
}

}  // namespace
}  // namespace bloomshard::io
