// Streaming decompression: a ByteSource yields the decompressed bytes of one
// file in caller-sized blocks with bounded memory (one input block plus the
// codec state; never the whole file). gzip inputs may hold several members
// and zstd inputs several frames (including skippable ones); both are read as
// one concatenated stream, like `gzip -dc` / `zstd -dc` do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "bloomshard/io/input_file.hpp"

namespace bloomshard::io {

/// Size of the compressed-input block each decompressing source reads.
inline constexpr std::size_t kCompressedBlockBytes = std::size_t{1} << 20;

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// Fills up to dst.size() bytes of decompressed data and returns how many
  /// were written; 0 only at the clean end of the stream. Throws InputError
  /// (line 0) for truncated or corrupt data and read failures. A zero-byte
  /// compressed file is a clean empty stream.
  virtual std::size_t read(std::span<char> dst) = 0;

  /// True when seek() works (uncompressed files only).
  [[nodiscard]] virtual bool seekable() const noexcept { return false; }

  /// Positions the stream at decompressed byte `offset` (seekable sources
  /// only; throws std::logic_error otherwise).
  virtual void seek(std::uint64_t offset);

  /// Compressed bytes consumed so far (equals the decompressed offset for
  /// uncompressed files); for error messages.
  [[nodiscard]] virtual std::uint64_t compressed_offset() const noexcept = 0;
};

/// Opens `path` for streaming reads through the decoder for `compression`.
/// Throws InputError if the file cannot be opened or a codec cannot start.
[[nodiscard]] std::unique_ptr<ByteSource> open_byte_source(const std::filesystem::path& path,
                                                           Compression compression);

}  // namespace bloomshard::io
