// Whole-buffer gzip members through libdeflate: at its level 6 about 3x
// zlib's level 6 speed on JSONL text for ~7% more bytes (docs/performance.md,
// "gzip codecs"). Each compress() makes one complete gzip member (header
// with mtime 0, deflate data, CRC-32 and length trailer), so members
// concatenate into one valid multi-member .gz and the same input gives the
// same bytes. Memory: the compressor (~0.3 MiB at level 6, ~1 MiB at 10-12).
#pragma once

#include <cstddef>
#include <span>

struct libdeflate_compressor;

namespace bloomshard::io {

/// libdeflate's levels: 1 (fastest) to 12 (smallest, slowest).
inline constexpr int kGzipMinLevel = 1;
inline constexpr int kGzipMaxLevel = 12;
/// libdeflate's level 0: stored (uncompressed) deflate blocks only, a valid
/// gzip member at about memcpy and CRC-32 speed, 5 bytes a block larger
/// than its input. For bytes that will be compressed again.
inline constexpr int kGzipStoredLevel = 0;

class GzipMemberCompressor {
 public:
  /// Throws std::invalid_argument for a level outside [kGzipStoredLevel,
  /// kGzipMaxLevel], std::bad_alloc if libdeflate cannot allocate.
  explicit GzipMemberCompressor(int level);
  ~GzipMemberCompressor();
  GzipMemberCompressor(const GzipMemberCompressor&) = delete;
  GzipMemberCompressor& operator=(const GzipMemberCompressor&) = delete;

  /// The most bytes compress() can need for `in_bytes` of input.
  [[nodiscard]] std::size_t bound(std::size_t in_bytes) const noexcept;

  /// Writes `in` as one gzip member into `out` (at least bound(in.size())
  /// bytes) and returns its length. An empty `in` gives an empty member.
  /// Throws std::length_error if `out` is too small.
  std::size_t compress(std::span<const char> in, std::span<char> out);

 private:
  libdeflate_compressor* compressor_;
};

}  // namespace bloomshard::io
