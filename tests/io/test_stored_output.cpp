// Outputs written stored for the input order's end pass to compress once
// (io/output/stored_output.hpp): gzip members of stored deflate blocks and
// zstd frames of raw blocks decode with their codec's own library (zlib,
// libzstd), one member or frame per drained stage, the text as is inside,
// damage caught by the codec's checksum; and the probe tells them from
// compressed outputs at every level, through gzip's optional header
// fields, on a resumed (mixed) output, and refuses what is no such file.
#include <gtest/gtest.h>
#include <zstd.h>

#include <random>
#include <string>

#include "io/output/output_writer.hpp"
#include "io/output/stored_output.hpp"
#include "io/records/input_file.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

// JSONL-like text of a small vocabulary: what deflate and zstd compress well.
std::string text(std::size_t bytes) {
  static const char* const kWords[] = {"the",  "of",    "river",  "data",   "model",
                                       "city", "paris", "report", "season", "school"};
  std::mt19937 rng(21);
  std::string out;
  for (std::uint64_t doc = 0; out.size() < bytes; ++doc) {
    out += R"({"id": "doc-)" + std::to_string(doc) + R"(", "text": ")";
    for (std::uint64_t w = 0, n = 20 + rng() % 200; w < n; ++w) {
      out += kWords[rng() % std::size(kWords)];
      out += ' ';
    }
    out += "\"}\n";
  }
  return out;
}

std::string write(const std::filesystem::path& path, Compression c, std::string_view data,
                  OutputOptions options) {
  auto w = OutputWriter::create(path, c, options);
  w.write_bytes(data);
  w.close();
  return test::read_file(path);
}

// zstd frames in `data`, each decoded on its own (its checksum checked).
std::size_t count_stored_zstd_frames(std::string_view data) {
  std::size_t frames = 0;
  while (!data.empty()) {
    const std::size_t n = ZSTD_findFrameCompressedSize(data.data(), data.size());
    if (ZSTD_isError(n) != 0) return 0;
    (void)test::decompress(Compression::kZstd, data.substr(0, n));
    data.remove_prefix(n);
    ++frames;
  }
  return frames;
}

class StoredOutput : public ::testing::TestWithParam<Compression> {};

TEST_P(StoredOutput, HoldsTheTextAsIsOneMemberOrFrameAStage) {
  TempDir dir;
  const Compression c = GetParam();
  const std::string data = text(300000);
  const std::string raw = write(dir / "s", c, data, {.buffer_bytes = 65536, .stored = true});
  EXPECT_EQ(test::decompress(c, raw), data);
  const std::size_t stages = (data.size() + 65535) / 65536;
  if (c == Compression::kZstd) {
    EXPECT_EQ(count_stored_zstd_frames(raw), stages);
  }
  EXPECT_GE(raw.size(), data.size());
  EXPECT_LE(raw.size(), data.size() + stages * 64 + 5 * (data.size() / 65535 + 1));
  EXPECT_NE(raw.find(data.substr(0, 4000)), std::string::npos) << "the text is not stored as is";
  // The level is the rewrite's, not this output's: any level gives the same.
  EXPECT_EQ(raw, write(dir / "t", c, data, {.level = 9, .buffer_bytes = 65536, .stored = true}));
  EXPECT_TRUE(output_starts_stored(dir / "s", c));
}

TEST_P(StoredOutput, DamageFailsTheCodecsChecksum) {
  TempDir dir;
  const Compression c = GetParam();
  std::string raw = write(dir / "s", c, text(100000), {.stored = true});
  raw[raw.size() / 2] ^= 0x20;  // a byte of the stored text
  EXPECT_THROW((void)test::decompress(c, raw), std::runtime_error);
}

TEST_P(StoredOutput, CompressedOutputsAreToldApartAtEveryLevel) {
  TempDir dir;
  const Compression c = GetParam();
  const std::string data = text(200000);
  const int top = c == Compression::kGzip ? 12 : 19;
  for (int level = 1; level <= top; ++level) {
    (void)write(dir / "c", c, data, {.level = level});
    EXPECT_FALSE(output_starts_stored(dir / "c", c)) << "level " << level;
  }
  // A resumed output: stored members or frames, then compressed ones.
  const std::string stored = write(dir / "s", c, data, {.stored = true});
  const std::string packed = write(dir / "c", c, data, {});
  test::write_file(dir / "mixed", stored + packed);
  EXPECT_TRUE(output_starts_stored(dir / "mixed", c));
  EXPECT_EQ(test::decompress(c, stored + packed), data + data);
  test::write_file(dir / "empty", "");
  EXPECT_FALSE(output_starts_stored(dir / "empty", c));
  EXPECT_FALSE(output_starts_stored(dir / "s", Compression::kNone));
  test::write_file(dir / "plain", data);
  try {
    (void)output_starts_stored(dir / "plain", c);
    ADD_FAILURE() << "a file of another kind was probed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("plain"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, StoredOutput,
                         ::testing::Values(Compression::kGzip, Compression::kZstd),
                         [](const ::testing::TestParamInfo<Compression>& codec) {
                           return codec.param == Compression::kGzip ? std::string("Gzip")
                                                                    : std::string("Zstd");
                         });

TEST(StoredOutputProbe, GzipHeaderFieldsAreSkipped) {
  // gzip(1) writes FNAME; FEXTRA, FCOMMENT and FHCRC are legal too.
  TempDir dir;
  std::string named = write(dir / "s", Compression::kGzip, text(50000), {.stored = true});
  named[3] = static_cast<char>(0x02 | 0x04 | 0x08 | 0x10);
  named.insert(10, std::string("\x03\x00xyz"
                               "part-00.jsonl\0"
                               "a comment\0"
                               "\x12\x34",
                               31));
  test::write_file(dir / "named", named);
  EXPECT_TRUE(output_starts_stored(dir / "named", Compression::kGzip));
}

TEST(StoredOutputProbe, AZstdFileThatStartsSkippableIsNotOurs) {
  TempDir dir;
  std::string skippable(
      "\x50\x2a\x4d\x18\x04\x00\x00\x00"
      "abcd",
      12);
  test::write_file(dir / "k",
                   skippable + write(dir / "s", Compression::kZstd, text(5000), {.stored = true}));
  EXPECT_FALSE(output_starts_stored(dir / "k", Compression::kZstd));
}

TEST(StoredOutputProbe, AnEmptyRawFrameIsValid) {
  char buf[64];
  const std::size_t n = write_zstd_raw_frame({}, {buf, sizeof(buf)});
  EXPECT_EQ(n, zstd_raw_frame_bound(0));
  EXPECT_EQ(test::decompress(Compression::kZstd, std::string_view(buf, n)), "");
}

}  // namespace
}  // namespace bloomshard::io
