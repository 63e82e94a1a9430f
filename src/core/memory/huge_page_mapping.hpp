// An anonymous memory mapping advised for transparent huge pages that grows
// without copying, internal to src/core. The tier-2 delta's record arena and
// index live in these. Why a mapping and not a vector:
//   - growth keeps the bytes where they are in physical memory: Linux
//     mremap moves page-table entries (a 256 MiB arena moves in microseconds)
//     where a vector would copy every byte and, for a moment, hold both;
//   - a fresh mapping is zero without anyone writing zeros, and pages that
//     are never touched cost nothing, so a table reserved for the layer's
//     capacity costs what it uses;
//   - the pages stay faulted in when the delta is cleared after a
//     checkpoint (clear = forget the contents, keep the memory), so the next
//     interval's keys do not pay the first touch again. On the VMs measured
//     here a first touch costs 0.14 ms per MiB for memory another process
//     just freed and up to 5 ms per MiB for memory the host had reclaimed
//     (it backs guest memory lazily), against 0.12 ms per MiB for a memset.
// The kernel here runs THP in "madvise" mode, so the advice is given on
// every (re)map, before the first touch. Not thread-safe.
#pragma once

#include <cstddef>

namespace bloomshard::core::detail {

class HugePageMapping {
 public:
  static constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

  HugePageMapping() = default;
  HugePageMapping(HugePageMapping&& o) noexcept;
  HugePageMapping& operator=(HugePageMapping&& o) noexcept;
  HugePageMapping(const HugePageMapping&) = delete;
  HugePageMapping& operator=(const HugePageMapping&) = delete;
  ~HugePageMapping() { release(); }

  /// The mapping's first byte (nullptr while empty); changes when it grows.
  [[nodiscard]] char* data() const noexcept { return data_; }
  /// Bytes mapped (a multiple of 4 KiB; of 2 MiB from 2 MiB on).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// Grows the mapping to at least `bytes`, keeping its contents; the new
  /// bytes read as zero. No-op if it is that large. Throws std::bad_alloc.
  void grow_to(std::size_t bytes);
  /// Faults in [0, bytes) now (the kernel zeroes the pages now rather than
  /// at first touch); bytes <= size().
  void prefault(std::size_t bytes) noexcept;
  /// Zeroes [0, bytes) keeping the pages (a memset: ~0.12 ms per MiB here,
  /// never more than faulting them in again, and often far less).
  void zero(std::size_t bytes) noexcept;
  /// Unmaps everything.
  void release() noexcept;

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace bloomshard::core::detail
