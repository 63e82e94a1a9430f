// gzip outputs through libdeflate: one member per drained stage (each a
// valid gzip member that zlib decodes on its own), the level range and its
// refusals, the default level's size held to zlib's level 6, and the zlib
// path that `bloomshard synth` keeps for its corpora's bytes.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

#include "io/errors.hpp"
#include "io/output/gzip_member_compressor.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

// Members in a multi-member gzip buffer, each decoded by zlib on its own
// (header, data and CRC-32 trailer checked); 0 if any is broken.
std::size_t count_gzip_members(std::string_view data) {
  std::size_t members = 0;
  std::string sink(1 << 16, '\0');
  while (!data.empty()) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return 0;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = reinterpret_cast<Bytef*>(sink.data());
      z.avail_out = static_cast<uInt>(sink.size());
      rc = inflate(&z, Z_NO_FLUSH);
    }
    data.remove_prefix(data.size() - z.avail_in);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) return 0;
    ++members;
  }
  return members;
}

// JSONL-like text from a small vocabulary, the shape of the paragraph
// benchmark's corpus (tests/bench/paragraph_benchmark.sh).
std::string jsonl_text(std::size_t bytes) {
  static const char* const kWords[] = {"the",   "of",     "and",    "to",     "in",      "is",
                                       "was",   "for",    "city",   "river",  "data",    "model",
                                       "paris", "report", "market", "season", "council", "school"};
  std::mt19937 rng(15);
  std::string out;
  for (std::uint64_t doc = 0; out.size() < bytes; ++doc) {
    out += R"({"id": "doc-)" + std::to_string(doc) + R"(", "text": ")";
    const auto words = 20 + rng() % 200;
    for (std::uint32_t w = 0; w < words; ++w) {
      out += kWords[rng() % std::size(kWords)];
      out += (rng() % 25 == 0) ? "\\n" : " ";
    }
    out += "\"}\n";
  }
  return out;
}

std::string write_gzip(const std::filesystem::path& path, std::string_view data,
                       OutputOptions options) {
  auto w = OutputWriter::create(path, Compression::kGzip, options);
  w.write_bytes(data);
  w.close();
  return test::read_file(path);
}

TEST(IoGzipOutput, EveryDrainedStageIsOneMember) {
  TempDir dir;
  const std::string data = jsonl_text(100000);
  const std::string raw = write_gzip(dir / "a.gz", data, {.buffer_bytes = 4096});
  EXPECT_EQ(test::decompress(Compression::kGzip, raw), data);
  // ceil(100000 / 4096) stages, each its own member.
  EXPECT_EQ(count_gzip_members(raw), (data.size() + 4095) / 4096);
}

TEST(IoGzipOutput, EveryLevelRoundTrips) {
  TempDir dir;
  const std::string data = jsonl_text(200000);
  std::size_t fastest = 0;
  std::size_t smallest = 0;
  for (int level = kGzipMinLevel; level <= kGzipMaxLevel; ++level) {
    const std::string raw = write_gzip(dir / "l.gz", data, {.level = level});
    EXPECT_EQ(test::decompress(Compression::kGzip, raw), data) << "level " << level;
    if (level == kGzipMinLevel) fastest = raw.size();
    if (level == kGzipMaxLevel) smallest = raw.size();
  }
  EXPECT_LT(smallest, fastest);
}

TEST(IoGzipOutput, TheDefaultLevelStaysWithinATenthOfZlibSix) {
  // No speed bought with a weaker default: the default output may be at
  // most 1.1x the bytes of zlib's level 6, the default before libdeflate.
  TempDir dir;
  const std::string data = jsonl_text(2 << 20);
  const std::string raw = write_gzip(dir / "d.gz", data, {});
  const std::size_t zlib6 = test::gzip_member(data, 6).size();
  EXPECT_LE(static_cast<double>(raw.size()), 1.1 * static_cast<double>(zlib6))
      << raw.size() << " bytes against zlib -6's " << zlib6;
  EXPECT_EQ(raw, write_gzip(dir / "e.gz", data, {.level = kDefaultGzipLevel}));
}

TEST(IoGzipOutput, ZlibKeepsTheBytesOfOld) {
  // synth's corpora: one zlib member of the whole (1 MiB) stage, byte for
  // byte what zlib's deflate writes.
  TempDir dir;
  const std::string data = jsonl_text(500000);
  const std::string raw = write_gzip(dir / "z.gz", data, {.level = 1, .gzip_with_zlib = true});
  EXPECT_EQ(raw, test::gzip_member(data, 1));
}

TEST(IoGzipOutput, ALevelOutOfRangeIsRefusedByName) {
  TempDir dir;
  const auto refused = [&](Compression c, OutputOptions options, const std::string& what) {
    try {
      (void)OutputWriter::create(dir / "x", c, options);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const OutputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(Compression::kGzip, {.level = 0}, "level 0 is out of gzip (libdeflate)'s range 1-12");
  refused(Compression::kGzip, {.level = 13}, "level 13 is out of gzip (libdeflate)'s range 1-12");
  refused(Compression::kGzip, {.level = 10, .gzip_with_zlib = true},
          "level 10 is out of zlib's range 1-9");
  refused(Compression::kZstd, {.level = 23}, "level 23 is out of zstd's range 1-22");
}

}  // namespace
}  // namespace bloomshard::io
