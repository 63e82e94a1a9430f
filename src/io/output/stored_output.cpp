#include "io/output/stored_output.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomshard::io {
namespace {

// RFC 1952 header flags.
constexpr std::uint8_t kFlagHeaderCrc = 0x02;
constexpr std::uint8_t kFlagExtra = 0x04;
constexpr std::uint8_t kFlagName = 0x08;
constexpr std::uint8_t kFlagComment = 0x10;
constexpr std::size_t kGzipFixedHeaderBytes = 10;

// RFC 8878: the frame magic, and the frame header descriptor of ours:
// Frame_Content_Size_flag 2 (a 4-byte size), Single_Segment_flag (no
// window descriptor), Content_Checksum_flag.
constexpr std::uint8_t kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
constexpr std::uint8_t kRawFrameDescriptor = (2U << 6) | (1U << 5) | (1U << 2);
constexpr std::size_t kRawFrameHeaderBytes = 4 + 1 + 4;
constexpr std::size_t kBlockHeaderBytes = 3;
constexpr std::size_t kChecksumBytes = 4;
constexpr std::size_t kMaxBlockBytes = std::size_t{128} << 10;

// A name or comment longer than this is not ours: the probe gives up.
constexpr std::size_t kProbeBytes = std::size_t{1} << 16;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
  throw std::runtime_error("'" + path.string() + "': " + why);
}

void put_le(char* at, std::uint64_t value, std::size_t bytes) noexcept {
  for (std::size_t i = 0; i < bytes; ++i) at[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

bool gzip_first_block_stored(const std::filesystem::path& path,
                             const std::vector<std::uint8_t>& head, std::size_t n) {
  if (n < kGzipFixedHeaderBytes + 1 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8) {
    fail(path, "does not start with a gzip member");
  }
  const std::uint8_t flags = head[3];
  std::size_t at = kGzipFixedHeaderBytes;
  const auto past_zero = [&](const char* field) {
    while (at < n && head[at] != 0) ++at;
    if (at == n) fail(path, std::string("gzip header's ") + field + " runs past the probe");
    ++at;
  };
  if ((flags & kFlagExtra) != 0) {
    if (at + 2 > n) fail(path, "gzip header's extra field runs past the probe");
    at += 2 + (std::size_t{head[at]} | (std::size_t{head[at + 1]} << 8));
  }
  if ((flags & kFlagName) != 0) past_zero("name");
  if ((flags & kFlagComment) != 0) past_zero("comment");
  if ((flags & kFlagHeaderCrc) != 0) at += 2;
  if (at >= n) fail(path, "gzip member has no deflate data within the probe");
  // The first block's header: BFINAL in bit 0, BTYPE in bits 1-2.
  return ((head[at] >> 1) & 3) == 0;
}

bool zstd_first_block_raw(const std::filesystem::path& path, const std::vector<std::uint8_t>& head,
                          std::size_t n) {
  if (n >= 4 && (head[0] & 0xf0) == 0x50 && head[1] == 0x2a && head[2] == 0x4d && head[3] == 0x18) {
    return false;  // a skippable frame first: not ours
  }
  if (n < 6 || !std::equal(head.begin(), head.begin() + 4, kZstdMagic)) {
    fail(path, "does not start with a zstd frame");
  }
  const std::uint8_t descriptor = head[4];
  const unsigned fcs_flag = descriptor >> 6;
  const bool single_segment = ((descriptor >> 5) & 1) != 0;
  static constexpr std::size_t kDictIdBytes[4] = {0, 1, 2, 4};
  static constexpr std::size_t kContentSizeBytes[4] = {0, 2, 4, 8};
  std::size_t at = 5 + (single_segment ? 0 : 1) + kDictIdBytes[descriptor & 3] +
                   (fcs_flag == 0 && single_segment ? 1 : kContentSizeBytes[fcs_flag]);
  if (at + kBlockHeaderBytes > n) fail(path, "zstd frame has no block within the probe");
  // Block_Header: Last_Block in bit 0, Block_Type in bits 1-2 (0: Raw).
  return ((head[at] >> 1) & 3) == 0;
}

}  // namespace

std::size_t zstd_raw_frame_bound(std::size_t in_bytes) noexcept {
  const std::size_t blocks =
      std::max<std::size_t>(1, (in_bytes + kMaxBlockBytes - 1) / kMaxBlockBytes);
  return kRawFrameHeaderBytes + blocks * kBlockHeaderBytes + in_bytes + kChecksumBytes;
}

std::size_t write_zstd_raw_frame(std::span<const char> in, std::span<char> out) noexcept {
  char* at = out.data();
  std::memcpy(at, kZstdMagic, 4);
  at[4] = static_cast<char>(kRawFrameDescriptor);
  put_le(at + 5, in.size(), 4);
  at += kRawFrameHeaderBytes;
  std::size_t done = 0;
  do {
    const std::size_t size = std::min(kMaxBlockBytes, in.size() - done);
    const bool last = done + size == in.size();
    // Block_Type Raw (0) in bits 1-2, Block_Size in bits 3-23.
    put_le(at, (std::uint64_t{size} << 3) | (last ? 1U : 0U), kBlockHeaderBytes);
    if (size != 0)
      std::memcpy(at + kBlockHeaderBytes, in.data() + done, size);  // data() may be null
    at += kBlockHeaderBytes + size;
    done += size;
  } while (done < in.size());
  put_le(at, XXH64(in.data(), in.size(), 0) & 0xffffffffU, kChecksumBytes);
  at += kChecksumBytes;
  return static_cast<std::size_t>(at - out.data());
}

bool output_starts_stored(const std::filesystem::path& path, Compression compression) {
  if (compression == Compression::kNone) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> head(kProbeBytes);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const std::size_t n = static_cast<std::size_t>(in.gcount());
  if (n == 0) return false;
  return compression == Compression::kGzip ? gzip_first_block_stored(path, head, n)
                                           : zstd_first_block_raw(path, head, n);
}

}  // namespace bloomshard::io
