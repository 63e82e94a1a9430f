// Virtual slices and their owners. The filter is cut into P slices fixed at
// creation; a key belongs to slice fastrange64(hash.hi, P). Rank r of R owns
// the contiguous range [floor(r*P/R), floor((r+1)*P/R)). Slices, not ranks,
// are the unit of ownership and of checkpoint layout, so a job can resume on
// another rank count. Pure functions, no MPI.
#pragma once

#include <cstdint>

#include "bloomshard/core/fastrange.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::core {

/// Limits: P in [1, 2^24] (a slice index fits 32 bits with room to spare);
/// R in [1, P].
inline constexpr std::uint32_t kMaxSlices = 1U << 24;

/// The slice count a new filter gets unless the job names one: the power of
/// two >= max(4096, 128 x ranks, capacity / 65536), at most kMaxSlices.
/// 128 slices per rank keep the slice skew between ranks under 1% (rank r
/// owns floor or ceil of P/R slices) at the creating rank count, e.g. 2^21
/// slices for 16384 ranks; a slice per 65536 keys of capacity lets a large
/// filter later resume on many more ranks than it was made on (10^10 keys:
/// 2^18 slices). Small jobs keep 4096, whose per-slice rounding (at most
/// one 64-byte block per slice and layer: 256 KiB) keeps in-cache filters
/// in cache. Pure.
[[nodiscard]] std::uint32_t default_num_slices(std::uint32_t num_ranks, std::uint64_t capacity);

/// Half-open range of slice indices [first, last).
struct SliceRange {
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  [[nodiscard]] constexpr std::uint32_t size() const noexcept { return last - first; }
  [[nodiscard]] constexpr bool contains(std::uint32_t s) const noexcept {
    return s >= first && s < last;
  }
  friend constexpr bool operator==(const SliceRange&, const SliceRange&) = default;
};

/// Slice of a key hash for a filter of num_slices slices.
[[nodiscard]] inline std::uint32_t slice_of(const KeyHash& h, std::uint32_t num_slices) noexcept {
  return static_cast<std::uint32_t>(fastrange64(h.hi, num_slices));
}

/// Slices owned by `rank` of `num_ranks`. Throws std::invalid_argument unless
/// 1 <= num_ranks <= num_slices <= kMaxSlices and rank < num_ranks.
[[nodiscard]] SliceRange slices_of_rank(std::uint32_t rank, std::uint32_t num_ranks,
                                        std::uint32_t num_slices);

/// Rank owning `slice` (inverse of slices_of_rank). Same preconditions; throws
/// std::invalid_argument on slice >= num_slices.
[[nodiscard]] std::uint32_t owner_of_slice(std::uint32_t slice, std::uint32_t num_ranks,
                                           std::uint32_t num_slices);

}  // namespace bloomshard::core
