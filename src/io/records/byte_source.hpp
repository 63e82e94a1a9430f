// Streaming decompression: a ByteSource yields the decompressed bytes of one
// file in caller-sized blocks with bounded memory (one input block plus the
// codec state; never the whole file). gzip inputs may hold several members
// and zstd inputs several frames (including skippable ones); both are read as
// one concatenated stream, like `gzip -dc` / `zstd -dc` do.
//
// Frame starts: a compressed source notes where zstd frames and
// gzip members begin while it decodes, so that a resume can start a fresh
// decoder at the last one before its cursor instead of at byte 0. Only
// starts at least kFrameStartSpacing decompressed bytes apart are noted, so
// the notes stay few whatever the framing (a file of 9-byte frames, a WET
// file with one gzip member per record) and the same for every read of a
// file; a resume then decodes and discards less than that spacing plus one
// frame. The notes are kept under a lock: frame_start_before() and
// forget_frames_before() may run on another thread than read(), which a
// read-ahead thread calls (io/records/prefetch_source.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "io/records/input_file.hpp"

namespace bloomshard::io {

/// Size of the compressed-input block each decompressing source reads.
inline constexpr std::size_t kCompressedBlockBytes = std::size_t{1} << 20;

/// Least distance in decompressed bytes between two noted frame starts:
/// bounds a resume's discarded bytes (< this + one frame) and the notes kept
/// per source (< read-ahead / this + 2; the reader reads ahead at most its
/// buffer, 1 MiB to 16 MiB).
inline constexpr std::uint64_t kFrameStartSpacing = std::uint64_t{1} << 20;

/// The start of a zstd frame or gzip member other than the file's first:
/// where a fresh decoder can begin, and the decompressed offset its first
/// byte has in the whole stream.
struct FrameStart {
  std::uint64_t compressed_offset = 0;
  std::uint64_t decompressed_offset = 0;
  friend bool operator==(const FrameStart&, const FrameStart&) = default;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// Fills up to dst.size() bytes of decompressed data and returns how many
  /// were written; 0 only at the clean end of the stream. Throws InputError
  /// (line 0) for truncated or corrupt data and read failures. A zero-byte
  /// compressed file is truncated (it holds no gzip member or zstd frame,
  /// `gzip -t`/`zstd -t` refuse it); an uncompressed one is empty.
  virtual std::size_t read(std::span<char> dst) = 0;

  /// True when seek() works (uncompressed files only).
  [[nodiscard]] virtual bool seekable() const noexcept { return false; }

  /// Positions the stream at decompressed byte `offset` (seekable sources
  /// only; throws std::logic_error otherwise).
  virtual void seek(std::uint64_t offset);

  /// Compressed bytes consumed so far (equals the decompressed offset for
  /// uncompressed files); for error messages.
  [[nodiscard]] virtual std::uint64_t compressed_offset() const noexcept = 0;

  /// True when seek_frame() works (gzip and zstd sources).
  [[nodiscard]] virtual bool frame_seekable() const noexcept { return false; }

  /// The last noted frame start whose decompressed offset is below
  /// `decompressed_offset` (so the byte before that offset lies in it or
  /// after it), if one is still kept: none for a single-frame file, for an
  /// offset inside the first kFrameStartSpacing bytes, or once
  /// forget_frames_before() dropped it.
  [[nodiscard]] virtual std::optional<FrameStart> frame_start_before(
      std::uint64_t decompressed_offset) const;

  /// Drops the notes no query at `decompressed_offset` or later needs (all
  /// below it but the last). Cheap; the reader calls it per refill.
  virtual void forget_frames_before(std::uint64_t decompressed_offset);

  /// Restarts decoding at `start` (frame-seekable sources only; throws
  /// std::logic_error otherwise): the next read() yields the stream from
  /// start.decompressed_offset on, read from start.compressed_offset with a
  /// fresh decoder. The caller vouches that it is a frame start of this
  /// file (one noted by an earlier read of the same bytes); if it is not,
  /// the next read() throws InputError (corrupt data) or yields other bytes.
  virtual void seek_frame(FrameStart start);
};

/// Opens `path` for streaming reads through the decoder for `compression`.
/// Throws InputError if the file cannot be opened or a codec cannot start.
[[nodiscard]] std::unique_ptr<ByteSource> open_byte_source(const std::filesystem::path& path,
                                                           Compression compression);

}  // namespace bloomshard::io
