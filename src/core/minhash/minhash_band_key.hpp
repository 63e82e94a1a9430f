// Band keys of a MinHash signature: the signature's B x R values cut into B
// bands of R consecutive values; band j's key is the 16-byte XXH3_128
// (seed 0) digest, in xxhash's canonical big-endian byte order, of
//   u32 kMinHashSchemeVersion | u32 j | R x u32 value   (all little-endian).
// Two records share band j's key exactly when their band j values are all
// equal (up to a 2^-128 collision). An empty text (no shingles) has one key
// of its own instead: the digest of u32 version | u32 kEmptyTextBand, so
// empty texts are exact duplicates of each other and of nothing else.
// Known answers: docs/near-duplicates.md.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace bloomshard::core {

/// Version of the whole minhash scheme (minhash-text/v1 normalization,
/// shingle hash seed, permutation family, band key layout), hashed into
/// every band key so keys of two scheme versions never meet.
inline constexpr std::uint32_t kMinHashSchemeVersion = 1;

/// The band index reserved for the empty-text key.
inline constexpr std::uint32_t kEmptyTextBand = 0xFFFFFFFFU;

using BandKey = std::array<std::uint8_t, 16>;

/// The key of band `band` whose values are `values` (R of them).
[[nodiscard]] BandKey band_key(std::uint32_t band, std::span<const std::uint32_t> values);

/// Writes the keys of the `bands` bands of `signature` (bands x rows values)
/// into `out` (bands entries). Throws std::invalid_argument on a size mismatch.
void band_keys(std::span<const std::uint32_t> signature, std::uint32_t bands, std::uint32_t rows,
               std::span<BandKey> out);

/// The single key standing for every empty text.
[[nodiscard]] BandKey empty_text_band_key() noexcept;

}  // namespace bloomshard::core
