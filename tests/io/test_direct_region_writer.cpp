// DirectRegionWriter against a real file with real O_DIRECT writes: adjacent
// regions with unaligned boundaries (as ranks' shares of a dataset are),
// pieces larger than a buffer, u64 reservations, empty and one-block
// regions; the file must hold exactly the appended bytes once the returned
// edges are written. Also the refusals: too few bytes, past the end,
// misaligned values, a file that cannot be opened.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/durable/direct_region_writer.hpp"
#include "io/errors.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

std::filesystem::path empty_file(const TempDir& dir, std::uint64_t size) {
  const auto path = dir / "region.bin";
  test::write_file(path, "");
  std::filesystem::resize_file(path, size);
  return path;
}

void write_edges(const std::filesystem::path& path, const std::vector<RegionEdge>& edges) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  for (const RegionEdge& e : edges) {
    ASSERT_LT(e.bytes.size(), kDirectIoAlignment);
    ASSERT_EQ(::pwrite(fd, e.bytes.data(), e.bytes.size(), static_cast<off_t>(e.file_offset)),
              static_cast<ssize_t>(e.bytes.size()));
  }
  ::close(fd);
}

std::string random_bytes(std::size_t n, std::mt19937_64& rng) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

DirectFile open_direct(const std::filesystem::path& path) {
  std::optional<DirectFile> f = DirectFile::open(path);
  if (!f) throw std::runtime_error("O_DIRECT refused under /tmp: these tests need it");
  return std::move(*f);
}

// Splits [0, size) at `cuts` into regions, one writer each, filled in random
// pieces (some larger than the buffer); all writers run interleaved.
void check_regions(std::uint64_t size, std::vector<std::uint64_t> cuts, std::size_t buffer_bytes,
                   std::size_t max_piece, std::uint64_t seed) {
  TempDir dir;
  const auto path = empty_file(dir, size);
  std::mt19937_64 rng(seed);
  const std::string expected = random_bytes(size, rng);
  cuts.insert(cuts.begin(), 0);
  cuts.push_back(size);
  const DirectFile file = open_direct(path);
  std::vector<std::unique_ptr<DirectRegionWriter>> writers;
  std::vector<std::uint64_t> at;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    writers.push_back(
        std::make_unique<DirectRegionWriter>(file, cuts[i], cuts[i + 1], buffer_bytes));
    at.push_back(cuts[i]);
  }
  bool more = true;
  while (more) {
    more = false;
    for (std::size_t i = 0; i < writers.size(); ++i) {
      const std::uint64_t left = cuts[i + 1] - at[i];
      if (left == 0) continue;
      const std::uint64_t n = std::min<std::uint64_t>(left, rng() % max_piece + 1);
      if (rng() % 2 == 0) {
        writers[i]->append({expected.data() + at[i], n});
      } else {
        const std::span<char> s = writers[i]->reserve<char>(n);
        std::copy_n(expected.data() + at[i], n, s.data());
      }
      at[i] += n;
      more = true;
    }
  }
  std::uint64_t direct = 0;
  for (auto& w : writers) {
    write_edges(path, w->finish());
    direct += w->direct_bytes();
  }
  EXPECT_EQ(direct % kDirectIoAlignment, 0U);
  EXPECT_LE(direct, size);
  const std::string got = test::read_file(path);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "file differs from the appended bytes";
}

TEST(DirectRegionWriter, AdjacentUnalignedRegionsHoldExactlyTheAppendedBytes) {
  check_regions(1 << 20, {1, 4095, 4097, 100000, 100001, 524288, 700003}, 16384, 7000, 1);
}

TEST(DirectRegionWriter, PiecesLargerThanTheBufferGrowIt) {
  check_regions(3 << 20, {12345, 2000000}, 16384, 300000, 2);
}

TEST(DirectRegionWriter, ManySmallRegionsSharingBlocks) {
  std::vector<std::uint64_t> cuts;
  for (std::uint64_t c = 777; c < 200000; c += 1500) cuts.push_back(c);
  check_regions(200000, cuts, 8192, 900, 3);
}

TEST(DirectRegionWriter, AlignedRegionHasNoEdges) {
  TempDir dir;
  const auto path = empty_file(dir, 8 * kDirectIoAlignment);
  const DirectFile file = open_direct(path);
  DirectRegionWriter w(file, kDirectIoAlignment, 5 * kDirectIoAlignment, 4 * kDirectIoAlignment);
  const std::string data(4 * kDirectIoAlignment, 'x');
  w.append(data);
  EXPECT_TRUE(w.finish().empty());
  EXPECT_EQ(w.direct_bytes(), 4 * kDirectIoAlignment);
  EXPECT_EQ(test::read_file(path).substr(kDirectIoAlignment, data.size()), data);
}

TEST(DirectRegionWriter, RegionInsideOneBlockIsOneEdge) {
  TempDir dir;
  const auto path = empty_file(dir, kDirectIoAlignment);
  const DirectFile file = open_direct(path);
  DirectRegionWriter w(file, 100, 200, 0);
  w.append(std::string(100, 'y'));
  const std::vector<RegionEdge> edges = w.finish();
  ASSERT_EQ(edges.size(), 1U);
  EXPECT_EQ(edges[0].file_offset, 100U);
  EXPECT_EQ(std::string(edges[0].bytes.begin(), edges[0].bytes.end()), std::string(100, 'y'));
  EXPECT_EQ(w.direct_bytes(), 0U);
}

TEST(DirectRegionWriter, EmptyRegionWritesNothing) {
  TempDir dir;
  const auto path = empty_file(dir, kDirectIoAlignment);
  const DirectFile file = open_direct(path);
  DirectRegionWriter w(file, 10, 10, 0);
  EXPECT_TRUE(w.finish().empty());
}

TEST(DirectRegionWriter, U64ValuesLandAtTheirOffsets) {
  TempDir dir;
  const std::uint64_t begin = 8 * 1001, count = 5000;
  const auto path = empty_file(dir, begin + 8 * count);
  const DirectFile file = open_direct(path);
  DirectRegionWriter w(file, begin, begin + 8 * count, 4 * kDirectIoAlignment);
  for (std::uint64_t i = 0; i < count;) {
    const std::uint64_t n = std::min<std::uint64_t>(count - i, 777);
    const std::span<std::uint64_t> s = w.reserve<std::uint64_t>(n);
    for (std::uint64_t j = 0; j < n; ++j) s[j] = (i + j) * 0x9E3779B97F4A7C15ULL;
    i += n;
  }
  write_edges(path, w.finish());
  const std::string got = test::read_file(path);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, got.data() + begin + 8 * i, 8);
    ASSERT_EQ(v, i * 0x9E3779B97F4A7C15ULL) << i;
  }
}

TEST(DirectRegionWriter, RefusesShortPastEndAndMisalignedUse) {
  TempDir dir;
  const auto path = empty_file(dir, 4 * kDirectIoAlignment);
  const DirectFile file = open_direct(path);
  {
    DirectRegionWriter w(file, 0, 3 * kDirectIoAlignment, 0);
    w.append(std::string(kDirectIoAlignment, 'a'));
    EXPECT_THROW((void)w.finish(), std::logic_error);
  }
  {
    DirectRegionWriter w(file, 0, 100, 0);
    EXPECT_THROW((void)w.reserve<char>(101), std::length_error);
  }
  {
    DirectRegionWriter w(file, 4, 100, 0);
    EXPECT_THROW((void)w.reserve<std::uint64_t>(1), std::logic_error);
  }
}

TEST(DirectFile, MissingFileIsAnOutputError) {
  EXPECT_THROW((void)DirectFile::open("/nonexistent/dir/file"), OutputError);
}

}  // namespace
}  // namespace bloomshard::io
