// Key hashing: the one hash every saved filter depends on. XXH3-128 with a
// seed; the scheme is named and versioned so a checkpoint written with one
// scheme is never read with another. Never std::hash (not stable).
//
// Bit budget of the 128-bit hash (do not change without bumping the scheme):
//   hi          -> slice    = fastrange64(hi, P)           (top bits of hi)
//   low 32 of hi-> Bloom probe bits inside the 512-bit block
//   lo          -> Bloom block inside the slice's layer, and the tier-2
//                  fingerprint
#pragma once

#include <cstdint>
#include <string_view>

namespace bloomshard::core {

/// 128-bit key hash as two 64-bit halves (XXH128_hash_t's high64/low64).
/// The values are the same on every machine: XXH3 defines its output
/// independently of the host's byte order.
struct KeyHash {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;
  friend constexpr bool operator==(const KeyHash&, const KeyHash&) = default;
};

/// Name and version of the hashing scheme, stored in every checkpoint.
inline constexpr std::string_view kHashSchemeName = "xxh3-128/v1";
inline constexpr std::uint32_t kHashSchemeVersion = 1;

/// The seed used unless a job sets another ("bloomshd" in ASCII).
inline constexpr std::uint64_t kDefaultHashSeed = 0x626c6f6f6d736864ULL;

/// Hashes the key's bytes (any bytes, NUL included; the empty key is valid).
[[nodiscard]] KeyHash hash_key(std::string_view key,
                               std::uint64_t seed = kDefaultHashSeed) noexcept;

/// The 32 probe bits the Bloom kernel uses inside one block.
[[nodiscard]] constexpr std::uint32_t probe_bits(const KeyHash& h) noexcept {
  return static_cast<std::uint32_t>(h.hi);
}

/// The 64-bit tier-2 fingerprint (sort key of the exact shard).
[[nodiscard]] constexpr std::uint64_t fingerprint(const KeyHash& h) noexcept { return h.lo; }

}  // namespace bloomshard::core
