// Jaccard similarity estimated from two MinHash signatures of the same
// family (minhash_signature.hpp), for --confirm-jaccard: from the full
// 32-bit values, or from a compact b-bit form that keeps the low b bits of
// each value (b-bit minwise hashing, Li & Koenig 2010). Equal low bits also
// happen by chance (probability 2^-b for two different minima), so the
// b-bit estimator corrects for it:
//   P = (matching values) / K,   J = (P - 2^-b) / (1 - 2^-b)
// This is Li & Koenig's estimator in the limit of sets small against the
// 2^32 values a minimum can take (their r1, r2 -> 0): at a million shingles
// and b = 4 their chance-match constant differs from 2^-b by 0.2%, about
// 10^-4 in J. The estimate may fall a little below 0 for unrelated texts
// and is not clamped, so it stays unbiased. Its standard deviation over K
// values is
//   sqrt(P (1 - P) / K) / (1 - 2^-b).
// The measured error per b and the chosen default: docs/near-duplicates.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bloomshard::core {

/// Bits kept per value in the confirmation form by default (measured
/// choice: docs/near-duplicates.md).
inline constexpr std::uint32_t kDefaultConfirmBits = 4;

/// Fraction of equal values of two signatures. Throws std::invalid_argument
/// when their sizes differ or are 0.
[[nodiscard]] double estimate_jaccard(std::span<const std::uint32_t> a,
                                      std::span<const std::uint32_t> b);

/// The low `bits` bits of each value, packed: value i occupies bits
/// [i*b, (i+1)*b) of the byte string, bit k being bit (k mod 8) of byte
/// k / 8 (so 8-, 16- and 32-bit forms are the values little-endian).
struct BbitSignature {
  std::uint32_t bits = 0;
  std::uint32_t count = 0;
  std::vector<std::uint8_t> packed;  // ceil(count * bits / 8) bytes
};

/// Whether `bits` is one of 1, 2, 4, 8, 16, 32.
[[nodiscard]] bool valid_confirm_bits(std::uint32_t bits) noexcept;

/// Packs `signature`; throws std::invalid_argument unless valid_confirm_bits(bits).
[[nodiscard]] BbitSignature pack_bbit(std::span<const std::uint32_t> signature, std::uint32_t bits);

/// Fraction of equal b-bit values; throws std::invalid_argument when the
/// two forms differ in bits or count.
[[nodiscard]] double bbit_match_fraction(const BbitSignature& a, const BbitSignature& b);

/// The corrected estimate J = (P - 2^-b) / (1 - 2^-b).
[[nodiscard]] double estimate_jaccard_bbit(const BbitSignature& a, const BbitSignature& b);

/// Bytes of the packed b-bit form of `values` values: ceil(values * bits / 8).
[[nodiscard]] std::size_t bbit_bytes(std::uint32_t values, std::uint32_t bits) noexcept;

/// Tier-2 payload one record adds when all its band keys are new (for
/// `plan`): its `bands` keys of 16 bytes and, with confirmation
/// (confirm_bits != 0), the b-bit form of its bands x rows values beside
/// each key. Tier 2's own cost per key (index slot, record header) comes on
/// top, as for any key. 14 x 8: 224 bytes, 1008 with b = 4.
[[nodiscard]] std::uint64_t minhash_tier2_payload_per_record(std::uint32_t bands,
                                                             std::uint32_t rows,
                                                             std::uint32_t confirm_bits) noexcept;

/// Standard deviation of the b-bit estimate of true similarity `jaccard`
/// over `values` values (bits = 32 is the full form, up to 2^-32).
[[nodiscard]] double jaccard_estimate_sigma(double jaccard, std::uint32_t values,
                                            std::uint32_t bits) noexcept;

}  // namespace bloomshard::core
