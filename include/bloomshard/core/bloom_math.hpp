// False-positive math for the 512-bit blocked Bloom filter (bloom_kernel.hpp),
// kept apart from the kernel: sizing (bits per key and k for a target FPR),
// the FPR model, and estimates read back from the bits (FPR, cardinality).
// Pure functions, no state.
#pragma once

#include <cstdint>
#include <span>

namespace bloomshard::core {

/// Bits per key and probe count of one layer.
struct BloomGeometryChoice {
  double bits_per_key = 0;  ///< a multiple of kBitsPerKeyStep
  std::uint32_t k = 0;      ///< in [1, 16]
};

/// Grid of the bits-per-key search: geometry is chosen in steps of 0.01.
inline constexpr double kBitsPerKeyStep = 0.01;
/// choose_geometry aims its model FPR at this fraction of the target, so the
/// FPR measured on >= 1M samples still meets the target (the model ignores
/// the spread of the fill between blocks holding the same number of keys,
/// ~3% at p = 0.1%).
inline constexpr double kFprModelMargin = 0.95;
/// Largest bits per key choose_geometry considers.
inline constexpr double kMaxBitsPerKey = 1000.0;

/// Bits per key of a classic (unblocked, optimal k) Bloom filter for FPR p:
/// -ln p / ln^2 2. Throws std::invalid_argument unless 0 < p < 1.
[[nodiscard]] double classic_bits_per_key(double p);

/// Model FPR of a 512-bit blocked filter with k probes per key (drawn with
/// replacement) at bits_per_key: the number of keys j in a block is
/// Poisson(512 / bits_per_key); FPR = sum_j Pois(j) * (1 - (1 - 1/512)^(j k))^k.
/// Requires bits_per_key > 0 and k in [1, 16] (else std::invalid_argument).
[[nodiscard]] double blocked_fpr(double bits_per_key, std::uint32_t k);

/// Smallest bits per key on the 0.01 grid, over k in [1, 16], whose model FPR
/// is <= kFprModelMargin * p; ties go to the smaller k (fewer probes).
/// p = 0.1% gives 15.63 bits/key, k = 9 (1.087x classic). Throws
/// std::invalid_argument unless 0 < p <= 0.5 or if p needs more than
/// kMaxBitsPerKey bits per key.
[[nodiscard]] BloomGeometryChoice choose_geometry(double p);

/// FPR of k probes into bits set with probability `fill` (fill^k).
[[nodiscard]] double expected_fpr_from_fill(double fill, std::uint32_t k);

/// FPR estimated from real blocks: the mean over blocks of (popcount/512)^k.
/// More faithful than expected_fpr_from_fill(global fill) because it sees
/// uneven blocks. `words` holds whole blocks (size a multiple of 8); returns
/// 0 for no blocks.
[[nodiscard]] double fpr_from_block_words(std::span<const std::uint64_t> words, std::uint32_t k);

/// Set bits in `words` (popcount).
[[nodiscard]] std::uint64_t count_set_bits(std::span<const std::uint64_t> words) noexcept;

/// Estimated number of distinct keys inserted, from the fill: with m bits of
/// which X are set, n ~ -(m / k) ln(1 - X / m). Blocking makes the fill a
/// little lower than a classic filter's, so this reads ~1% low at the
/// design load. Returns +infinity when every bit is set, 0 for m == 0.
[[nodiscard]] double cardinality_from_fill(std::uint64_t set_bits, std::uint64_t total_bits,
                                           std::uint32_t k);

}  // namespace bloomshard::core
