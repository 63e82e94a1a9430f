#include "bloomshard/core/slice_map.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace bloomshard::core {
namespace {

void check_geometry(std::uint32_t num_ranks, std::uint32_t num_slices) {
  if (num_slices < 1 || num_slices > kMaxSlices) {
    throw std::invalid_argument("slice count " + std::to_string(num_slices) + " outside [1, " +
                                std::to_string(kMaxSlices) + "]");
  }
  if (num_ranks < 1 || num_ranks > num_slices) {
    throw std::invalid_argument("rank count " + std::to_string(num_ranks) +
                                " must be in [1, slice count " + std::to_string(num_slices) +
                                "]: every rank owns at least one slice");
  }
}

// First slice of rank r: floor(r * P / R), exact in 64 bits for P <= 2^24.
std::uint32_t first_slice(std::uint32_t rank, std::uint32_t num_ranks, std::uint32_t num_slices) {
  return static_cast<std::uint32_t>(std::uint64_t{rank} * num_slices / num_ranks);
}

}  // namespace

std::uint32_t default_num_slices(std::uint32_t num_ranks, std::uint64_t capacity) {
  constexpr std::uint64_t kSmallJobSlices = 4096;
  constexpr std::uint64_t kSlicesPerRank = 128;   // skew <= 1/128 < 1%
  constexpr std::uint64_t kKeysPerSlice = 65536;  // room to resume on more ranks
  const std::uint64_t wanted =
      std::max({kSmallJobSlices, kSlicesPerRank * num_ranks, capacity / kKeysPerSlice});
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(
      std::bit_ceil(std::min<std::uint64_t>(wanted, kMaxSlices)), kMaxSlices));
}

SliceRange slices_of_rank(std::uint32_t rank, std::uint32_t num_ranks, std::uint32_t num_slices) {
  check_geometry(num_ranks, num_slices);
  if (rank >= num_ranks) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " >= rank count " +
                                std::to_string(num_ranks));
  }
  return {first_slice(rank, num_ranks, num_slices), first_slice(rank + 1, num_ranks, num_slices)};
}

std::uint32_t owner_of_slice(std::uint32_t slice, std::uint32_t num_ranks,
                             std::uint32_t num_slices) {
  check_geometry(num_ranks, num_slices);
  if (slice >= num_slices) {
    throw std::invalid_argument("slice " + std::to_string(slice) + " >= slice count " +
                                std::to_string(num_slices));
  }
  // Largest r with floor(r*P/R) <= s is floor(((s+1)*R - 1) / P).
  return static_cast<std::uint32_t>((std::uint64_t{slice + 1} * num_ranks - 1) / num_slices);
}

}  // namespace bloomshard::core
