// A read-only memory mapping of a whole checkpoint file. Tier-2 base views
// point into it; SliceBaseView's keepalive holds a shared_ptr to it, so the
// mapping lives as long as any slice still uses it (unlinking the file, as
// generation pruning does, does not invalidate it on POSIX systems).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace bloomshard::store {

class FileMapping {
 public:
  /// Maps `path` read-only (MAP_SHARED). Throws CheckpointError naming the
  /// file on failure. An empty file gives an empty mapping.
  [[nodiscard]] static std::shared_ptr<const FileMapping> map(const std::filesystem::path& path);
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();

  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  /// Bytes [offset, offset + length) of the file; throws CheckpointError
  /// naming `what` if the range lies outside the file (a truncated file).
  [[nodiscard]] std::span<const std::byte> range(std::uint64_t offset, std::uint64_t length,
                                                 const char* what) const;
  /// Tells the kernel the access pattern from now on (MADV_RANDOM after
  /// verification: only Bloom positives touch the base).
  void advise_random() const noexcept;
  /// madvise(MADV_WILLNEED): asks the kernel to read the whole file into the
  /// page cache in the background (a hint). Used for a run just written with
  /// O_DIRECT, whose pages are not cached: without it every Bloom positive
  /// faulted its binary-search pages in one 4 KiB read at a time (10M-record
  /// job, 2 ranks: the decide phase took 19 s instead of 4.4 s).
  void advise_willneed() const noexcept;
  /// The same for the bytes [offset, offset + length) only (widened to whole
  /// pages, clipped to the file): a rank reads in just its own slices, not
  /// the whole run file every rank shares.
  void advise_willneed(std::uint64_t offset, std::uint64_t length) const noexcept;

 private:
  FileMapping(void* data, std::uint64_t size) noexcept : data_(data), size_(size) {}
  void* data_;
  std::uint64_t size_;
};

}  // namespace bloomshard::store
