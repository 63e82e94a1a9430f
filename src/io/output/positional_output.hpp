// An uncompressed output file that several processes write at once, each
// its own disjoint byte ranges (pwrite at offsets the writers agreed on):
// the lockstep layout's mirrored outputs (app/split/lockstep_layout.hpp).
// Opens an existing file without truncating it (the job created it once,
// empty); never fsyncs (only runs without --state write this way). Not
// thread-safe; one per process and file at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

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
  /// Throws OutputError naming the path.
  [[nodiscard]] static PositionalOutput open(const std::filesystem::path& path);

  /// Writes `pieces` back to back from byte `offset` (pwritev, short writes
  /// and EINTR retried). Throws OutputError naming the path and the offset.
  void write_at(std::uint64_t offset, std::span<const std::string_view> pieces);

  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Closes the file. Throws OutputError if close(2) reports an error.
  void close();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace bloomshard::io
