// Streams bytes into a fixed byte range of an existing file with O_DIRECT
// writes issued from a background thread: producing the next buffer (the
// tier-2 merge) overlaps the device writing the previous one, and the data
// bypass the page cache. Buffered writes of a multi-GB checkpoint ran at
// about half the device's direct-write speed on our machines (the copy into
// the page cache plus throttled write-back); docs/performance.md.
//
// O_DIRECT needs file offsets, lengths and memory aligned to
// kDirectIoAlignment. A writer therefore writes only the whole aligned
// blocks inside its range and hands the unaligned head and tail back (each
// < kDirectIoAlignment bytes, possibly sharing a block with a neighbouring
// rank's range); the caller writes those through a path that may share a
// block, the collective HDF5 write.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomshard::io {

/// Offsets, lengths and buffers of direct writes are multiples of this
/// (covers 512-byte and 4 KiB logical blocks and the page size).
inline constexpr std::uint64_t kDirectIoAlignment = 4096;

/// A file descriptor opened O_WRONLY | O_DIRECT; closed on destruction.
class DirectFile {
 public:
  /// Opens the existing `path` for direct writes. Returns nullopt when the
  /// file system refuses O_DIRECT (EINVAL at open, e.g. tmpfs before Linux
  /// 6.6, some FUSE file systems); throws OutputError for any other failure.
  [[nodiscard]] static std::optional<DirectFile> open(const std::filesystem::path& path);

  DirectFile(DirectFile&& other) noexcept;
  DirectFile& operator=(DirectFile&& other) noexcept;
  DirectFile(const DirectFile&) = delete;
  DirectFile& operator=(const DirectFile&) = delete;
  ~DirectFile();

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Writes `size` bytes at `offset` (both aligned, `data` aligned), retrying
  /// short writes and EINTR. Thread-safe (pwrite). Throws OutputError.
  void write_at(const char* data, std::uint64_t size, std::uint64_t offset) const;

  /// fdatasync: the written blocks and the extents allocated for them reach
  /// stable storage. Throws OutputError.
  void sync() const;

 private:
  DirectFile(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
};

/// Bytes of a region that direct writes cannot cover: the partial blocks at
/// its start and end.
struct RegionEdge {
  std::uint64_t file_offset = 0;
  std::vector<char> bytes;
};

/// Writes bytes [begin, end) of a DirectFile in the order they are appended,
/// double-buffered: one buffer fills while the other is written by a
/// background thread (std::async). Not thread-safe; one writer per region;
/// regions of different writers must not overlap.
class DirectRegionWriter {
 public:
  /// `buffer_bytes` is the size of each of the two buffers (rounded up to a
  /// multiple of kDirectIoAlignment, at least 4 blocks). A reservation that
  /// does not fit grows the filling buffer to hold it. `file` must outlive
  /// the writer.
  DirectRegionWriter(const DirectFile& file, std::uint64_t begin, std::uint64_t end,
                     std::size_t buffer_bytes);
  /// Waits for a write in flight (its error is lost: call finish()).
  ~DirectRegionWriter();
  DirectRegionWriter(const DirectRegionWriter&) = delete;
  DirectRegionWriter& operator=(const DirectRegionWriter&) = delete;

  /// Space for the next `count` values of T (the caller fills all of it),
  /// valid until the next reserve, append or finish. The file offset of the
  /// first value must be a multiple of alignof(T) (true when the region
  /// starts at one and only T is appended). Throws std::length_error past
  /// the region's end, std::logic_error when misaligned or after finish().
  template <class T>
  std::span<T> reserve(std::size_t count) {
    const std::uint64_t offset = begin_ + appended_;
    if (offset % alignof(T) != 0) {
      throw std::logic_error("DirectRegionWriter: value misaligned at file offset " +
                             std::to_string(offset));
    }
    char* raw = reserve_bytes(count * sizeof(T));
    return {reinterpret_cast<T*>(raw), count};
  }

  /// Copies `bytes` into the region (in buffer-sized pieces).
  void append(std::span<const char> bytes);

  /// Writes the remaining whole blocks, waits for every write and returns
  /// the edges (head then tail; empty ones omitted) the caller still has to
  /// write. Throws OutputError when a write failed, std::logic_error unless
  /// exactly end - begin bytes were appended. Call once.
  [[nodiscard]] std::vector<RegionEdge> finish();

  /// Bytes written by direct writes so far (whole blocks only).
  [[nodiscard]] std::uint64_t direct_bytes() const noexcept { return direct_bytes_; }

 private:
  struct FreeAligned {
    void operator()(char* p) const noexcept;
  };
  using Buffer = std::unique_ptr<char[], FreeAligned>;
  static Buffer allocate(std::size_t bytes);

  char* reserve_bytes(std::size_t n);
  void flush(bool final);
  void wait_in_flight();

  const DirectFile* file_;
  std::uint64_t begin_, end_;
  std::uint64_t direct_begin_, direct_end_;  // whole blocks inside [begin, end)
  std::uint64_t head_end_, tail_begin_;      // edges: [begin, head_end), [tail_begin, end)
  std::array<Buffer, 2> buffers_;
  std::array<std::size_t, 2> capacity_{};
  std::size_t current_ = 0;
  std::uint64_t buffer_start_;  // file offset of buffers_[current_][0], aligned
  std::size_t fill_;            // bytes in buffers_[current_], from buffer_start_
  std::uint64_t appended_ = 0;
  std::uint64_t direct_bytes_ = 0;
  bool head_taken_ = false;
  bool finished_ = false;
  std::vector<RegionEdge> edges_;
  std::future<void> in_flight_;  // writing buffers_[1 - current_]; declared last: waited first
};

}  // namespace bloomshard::io
