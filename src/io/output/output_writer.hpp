// Output files for kept records. Records are appended byte-identical (line
// bytes + original terminator). A compressed output is a sequence of
// independent gzip members / zstd frames: end_frame() closes the current one,
// so a checkpoint can commit "the file up to length L" at a frame boundary and
// a resumed job can truncate back to L and append new frames; the result is a
// valid .gz / .zst whose content is the committed prefix plus the new data.
// gzip members are written by libdeflate, whole: each staging buffer drained
// becomes one member (about 3x zlib's speed at the same level 6, for ~7% more
// bytes, docs/performance.md), or by zlib where OutputOptions::gzip_with_zlib
// asks for the bytes of old.
// zstd frames carry a content checksum.
// A compressed output compresses and writes on a thread of its own
// (OutputOptions::background_buffers, io/output/background_drain.hpp): the
// caller fills the next staging buffer meanwhile; the bytes are the same as
// a synchronous drain writes, and every call that returns a length
// (flush, flush_and_sync, file_length) or closes waits for the thread first.
// An error on the thread is thrown, naming the file, by the writer's next
// call. Memory: one compressed buffer (1 MiB by default) plus the codec
// state, and one staging buffer (1 MiB) for an uncompressed output, up to
// 1 + background_buffers (3 MiB by default) for a compressed one.
// write_pieces() hands an uncompressed output's bytes to the kernel straight
// from the caller's memory (writev), without the staging copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "io/records/input_file.hpp"

namespace bloomshard::io {

/// Writeback pace for an output that a checkpoint will fsync: see
/// OutputOptions::writeback_bytes.
inline constexpr std::uint64_t kDurableWritebackBytes = std::uint64_t{8} << 20;

/// Default levels: gzip 6 (libdeflate's, or zlib's with gzip_with_zlib),
/// zstd 3.
inline constexpr int kDefaultGzipLevel = 6;
inline constexpr int kDefaultZstdLevel = 3;

struct OutputOptions {
  /// Compression level; none: the codec's default (kDefaultGzipLevel,
  /// kDefaultZstdLevel). gzip takes 1-12 (libdeflate; 1-9 with
  /// gzip_with_zlib), zstd 1-22; create() refuses others (OutputError).
  std::optional<int> level = std::nullopt;
  std::size_t buffer_bytes = std::size_t{1} << 20;  // staging buffer, clamped to [4 KiB, 1 GiB]
  /// Every this many bytes written, ask the kernel to start writing them
  /// back (sync_file_range WRITE, not waiting; RocksDB's bytes_per_sync), so
  /// that a later fsync finds most pages clean; 0: never. Worth it only for
  /// an output that will be fsynced (kDurableWritebackBytes under --state):
  /// otherwise it only adds the kernel's writeback work to the writes
  /// (docs/performance.md).
  std::uint64_t writeback_bytes = 0;
  /// create() makes the new file's directory entry, and those of the parent
  /// directories it creates, durable (fsync of each parent directory: once
  /// per created entry, io/durable/durable_entries.hpp), so a checkpoint that later
  /// records the file's committed length never outlives the file itself.
  /// Set for outputs a checkpoint will record (under --state).
  bool sync_entries = false;
  /// A zstd frame whose data all fit the staging buffer is compressed in
  /// one pass, which records its content size in the frame header. false:
  /// every frame is streamed and records none (a few bytes more), as
  /// `bloomshard synth` wrote its corpora before it used this writer: the
  /// corpora stay byte for byte the same (fixtures know inputs by size).
  bool zstd_content_size = true;
  /// gzip members through zlib's streaming deflate instead of libdeflate:
  /// the bytes `bloomshard synth` wrote its corpora with (fixtures know
  /// inputs by size). About 3x slower at the same level.
  bool gzip_with_zlib = false;
  /// Stored instead of compressed at `level` (io/output/stored_output.hpp):
  /// gzip members of stored deflate blocks (libdeflate's level 0), zstd
  /// frames of raw blocks, one per drained stage. A valid file of its codec,
  /// written at about memcpy speed plus a checksum, that takes its plain
  /// size on disk: for an output that will be compressed again before the
  /// run ends (the input order's end pass, app/round/retracted_copies.hpp).
  /// Not with gzip_with_zlib; ignored for uncompressed outputs.
  bool stored = false;
  /// A compressed output hands each drained staging buffer to a thread of
  /// its own, which compresses and writes it while the caller fills the
  /// next: up to this many buffers queued there (each buffer_bytes, a
  /// buffer allocated only when none is free). 0: the caller's thread
  /// compresses, as before. The bytes written are the same either way.
  /// Ignored for uncompressed outputs (they write from the caller's memory).
  std::size_t background_buffers = 2;
};

class OutputWriter {
 public:
  /// A closed writer; only assignment and destruction are valid.
  OutputWriter() noexcept;
  ~OutputWriter();  // closes best-effort (errors are swallowed: call close() to see them)
  OutputWriter(OutputWriter&&) noexcept;
  OutputWriter& operator=(OutputWriter&&) noexcept;
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  /// Creates (or truncates) `path`, creating missing parent directories
  /// (their entries and the file's made durable with
  /// OutputOptions::sync_entries). Throws OutputError.
  [[nodiscard]] static OutputWriter create(const std::filesystem::path& path,
                                           Compression compression, OutputOptions options = {});

  /// Opens an existing `path`, truncates it to `committed_length` (a length
  /// returned by flush_and_sync() of an earlier writer) and appends after it.
  /// Throws OutputError if the file is missing or shorter than that.
  [[nodiscard]] static OutputWriter open_for_resume(const std::filesystem::path& path,
                                                    Compression compression,
                                                    std::uint64_t committed_length,
                                                    OutputOptions options = {});

  /// Appends `line` followed by `terminator`. Throws OutputError.
  void write(std::string_view line, std::string_view terminator);

  /// Appends raw bytes. Throws OutputError.
  void write_bytes(std::string_view bytes);

  /// Appends `pieces` in order, as write_bytes() of each would. An
  /// uncompressed output writes what is staged and then the pieces from the
  /// caller's memory (writev, up to 1024 pieces a call: a caller coalesces
  /// pieces adjacent in memory), so they need to live only during the call
  /// and are not copied in user space; a compressed one stages them for
  /// its codec. Throws OutputError.
  void write_pieces(std::span<const std::string_view> pieces);

  /// Closes the current gzip member / zstd frame if it holds data (no-op for
  /// uncompressed outputs or an empty frame). Data may stay buffered, or
  /// queued for the compression thread. Throws OutputError.
  void end_frame();

  /// end_frame(), writes everything out (waiting for the compression
  /// thread), fsyncs, and returns the committed file length: truncating to
  /// it later leaves a valid file. Throws OutputError.
  std::uint64_t flush_and_sync();

  /// flush_and_sync() without the fsync: the length is good as long as the
  /// machine does not crash (a run without a checkpoint to keep it for).
  /// Throws OutputError.
  std::uint64_t flush();

  /// end_frame() and flush (no fsync), then closes. A compressed output that
  /// would otherwise be a zero-byte file gets one empty frame so that gzip /
  /// zstd tools accept it. Idempotent. Throws OutputError.
  void close();

  [[nodiscard]] bool is_open() const noexcept;
  [[nodiscard]] const std::filesystem::path& path() const noexcept;
  [[nodiscard]] Compression compression() const noexcept;
  /// Uncompressed bytes appended through this writer (not counting the
  /// resumed prefix).
  [[nodiscard]] std::uint64_t bytes_in() const noexcept;
  /// Bytes written to the file so far (the resumed prefix included, data
  /// still in the staging buffer not). Waits for the compression thread to
  /// write what it was handed; an error it met is thrown by the next call.
  [[nodiscard]] std::uint64_t file_length() const noexcept;

 private:
  struct Impl;
  explicit OutputWriter(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

/// output_dir / relative_path, after checking that relative_path is a
/// non-empty '/'-separated relative path without "", "." or ".." components
/// or NUL bytes, so the result never escapes output_dir. Throws OutputError.
[[nodiscard]] std::filesystem::path output_path_for(const std::filesystem::path& output_dir,
                                                    std::string_view relative_path);

}  // namespace bloomshard::io
