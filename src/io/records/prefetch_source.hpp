// Read-ahead for one input: a ByteSource that reads and decodes (read(2),
// igzip inflate, zstd) the next blocks of another source on a thread of its
// own, so that a rank that waits in the round's exchange or decides keys
// has the bytes of its next round decoded already.
//
// Contract: the caller sees exactly the bytes, the end and the errors the
// wrapped source gives, in the same order; only the block boundaries of
// read() may differ (a read returns what is decoded, at most dst.size(),
// and at least one byte unless at the end or at an error). An error the
// thread meets after block k (corrupt or truncated data, a read failure) is
// thrown by the caller's read() once blocks 0..k are handed out, and again
// by every later read(), as the wrapped sources do; so a reader reports it
// at the same line and offset as without read-ahead.
//
// Memory and limits: at most `blocks` blocks of `block_bytes` decoded bytes
// ahead of the caller (default 4 x 1 MiB = 4 MiB per open input), each
// allocated on first use and never zero-filled; the thread never reads past
// `read_limit` bytes of the wrapped source (the end of a split input's
// range). The thread starts at the first read(), so a source that is only
// opened, probed or positioned costs no thread and no read-ahead.
//
// Threads: the thread calls only the wrapped source (no MPI, no HDF5: the
// program asks MPI for MPI_THREAD_FUNNELED) and blocks the asynchronous
// signals (io/signal_blocked_thread.hpp). seek(), seek_frame() and the
// destructor stop it and join it (waiting for at most the one block it is
// decoding), on every path: the end of the input, an input error, a job
// stopped by a signal, an exception that unwinds the reader.
// frame_start_before() and forget_frames_before() go to the wrapped source
// while the thread reads: its frame notes are kept under a lock of their
// own (byte_source.hpp), and they are offsets, so a note the thread made
// ahead of the caller never changes the answer for an offset the caller
// has reached. compressed_offset() is the wrapped source's offset after the
// block being handed out, not after the blocks read ahead.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/records/byte_source.hpp"

namespace bloomshard::io {

/// Blocks read ahead of the caller by default: a 2-rank job's round holds
/// ~3-4 MiB of input per rank, so 4 x 1 MiB covers the next round.
inline constexpr std::size_t kDefaultPrefetchBlocks = 4;

struct PrefetchOptions {
  std::size_t blocks = kDefaultPrefetchBlocks;     ///< decoded blocks held ahead, >= 1
  std::size_t block_bytes = std::size_t{1} << 20;  ///< bytes asked of the wrapped source per read
  /// Bytes the thread may read from the wrapped source in all (from where it
  /// stands when wrapped, or after a seek, the new position).
  std::uint64_t read_limit = std::numeric_limits<std::uint64_t>::max();
};

class PrefetchSource final : public ByteSource {
 public:
  /// Wraps `inner`, which must not be used by anyone else from now on.
  /// Throws std::invalid_argument for blocks or block_bytes of 0.
  PrefetchSource(std::unique_ptr<ByteSource> inner, PrefetchOptions options);
  /// Stops the thread and joins it. Never throws.
  ~PrefetchSource() override;

  /// The wrapped source's next bytes (see the banner). Throws its errors,
  /// or InputError if the thread cannot start.
  std::size_t read(std::span<char> dst) override;
  [[nodiscard]] bool seekable() const noexcept override { return inner_->seekable(); }
  /// Stops the thread, drops what it read ahead, seeks the wrapped source;
  /// read-ahead goes on from `offset` at the next read(), with a fresh
  /// read_limit counted from there.
  void seek(std::uint64_t offset) override;
  [[nodiscard]] std::uint64_t compressed_offset() const noexcept override;
  [[nodiscard]] bool frame_seekable() const noexcept override { return inner_->frame_seekable(); }
  [[nodiscard]] std::optional<FrameStart> frame_start_before(
      std::uint64_t decompressed_offset) const override;
  void forget_frames_before(std::uint64_t decompressed_offset) override;
  /// As seek(), at a frame start.
  void seek_frame(FrameStart start) override;

 private:
  struct Block {
    char* bytes;
    std::size_t size;
    std::size_t pos;                 // bytes of it already handed out
    std::uint64_t compressed_after;  // the wrapped source's offset once it was read
  };

  void run() noexcept;
  void stop_and_drop() noexcept;

  const std::unique_ptr<ByteSource> inner_;
  const PrefetchOptions options_;
  std::vector<std::unique_ptr<char[]>> buffers_;  // all allocated, owned here

  mutable std::mutex mutex_;
  std::condition_variable room_;   // the thread waits for a free buffer or stop_
  std::condition_variable ready_;  // the caller waits for a block or the end
  std::deque<Block> blocks_;       // read ahead, in order; front: being handed out
  std::vector<char*> free_;
  std::uint64_t budget_ = 0;  // bytes the thread may still read
  bool stop_ = false;
  bool ended_ = false;            // the thread met the end or an error
  std::exception_ptr error_;      // the error it met (after the blocks in blocks_)
  std::uint64_t compressed_ = 0;  // compressed_offset() (the caller's view)
  std::thread thread_;
};

}  // namespace bloomshard::io
