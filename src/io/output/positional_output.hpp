// An uncompressed output file that several processes write at once, each
// its own disjoint byte ranges (pwrite at offsets the writers agreed on):
// the lockstep layout's mirrored outputs (app/split/lockstep_layout.hpp).
// Opens an existing file without truncating it (the job created it once,
// empty); never fsyncs itself (a run with --state syncs the file by its path
// at a cut, app/feed/input_feed.hpp InputFeed::commit, after wait()). A write
// may run on a thread of its own (write_in_background), one at a time, so
// that the caller goes on while the kernel copies the bytes (two ranks that
// write one file at once also wait for each other's inode lock there, not
// in the round). The object itself is not thread-safe; one per process.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

namespace bloomshard::io {

class PositionalOutput {
 public:
  PositionalOutput() noexcept = default;
  ~PositionalOutput();
  PositionalOutput(PositionalOutput&& other) noexcept;
  PositionalOutput& operator=(PositionalOutput&& other) noexcept;
  PositionalOutput(const PositionalOutput&) = delete;
  PositionalOutput& operator=(const PositionalOutput&) = delete;

  /// Opens `path` for writing (it must exist: nothing is created or cut).
  /// With `writeback`, each write then asks the kernel to start writing its
  /// bytes back (sync_file_range WRITE, not waiting: a hint, as
  /// OutputOptions::writeback_bytes), so that the fsync of a checkpoint
  /// finds most pages clean. Throws OutputError naming the path.
  [[nodiscard]] static PositionalOutput open(const std::filesystem::path& path,
                                             bool writeback = false);

  /// Writes `pieces` back to back from byte `offset` (pwritev, short writes
  /// and EINTR retried), holding the file's flock on a local file system
  /// (io/output/local_write_lock.hpp). Throws OutputError naming the path
  /// and the offset.
  void write_at(std::uint64_t offset, std::span<const std::string_view> pieces);

  /// write_at() on a thread of its own (asynchronous signals blocked,
  /// io/signal_blocked_thread.hpp), after waiting for the one before;
  /// `keep` holds the memory the pieces lie in until the write ends.
  /// Throws the previous write's error (wait()).
  void write_in_background(std::uint64_t offset, std::vector<std::string_view> pieces,
                           std::vector<std::shared_ptr<const void>> keep);
  /// Waits for the write in the background, if any; rethrows its
  /// OutputError.
  void wait();

  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Waits for a background write, then closes the file. Throws
  /// OutputError if either reports an error.
  void close();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool writeback_ = false;                // open()'s
  bool lock_writes_ = false;              // a local file system: write_at() takes flock
  std::thread writer_;                    // the background write, joinable while one was started
  std::vector<std::string_view> pieces_;  // its pieces
  std::vector<std::shared_ptr<const void>> keep_;  // and their memory
  std::exception_ptr error_;                       // what it threw
};

}  // namespace bloomshard::io
