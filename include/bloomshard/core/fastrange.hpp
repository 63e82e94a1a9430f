// fastrange: maps a uniform 64-bit hash onto [0, n) with one multiply
// instead of `%` (Lemire 2019). Used on every hot path that picks a slice or
// a Bloom block; uses the high bits of the hash.
#pragma once

#include <cstdint>

namespace bloomshard::core {

// GCC and Clang have a 128-bit integer on 64-bit targets; __extension__
// keeps -Wpedantic quiet about it.
__extension__ using Uint128 = unsigned __int128;

/// Returns floor(hash * n / 2^64), a value in [0, n) for n > 0.
[[nodiscard]] constexpr std::uint64_t fastrange64(std::uint64_t hash, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>((static_cast<Uint128>(hash) * n) >> 64);
}

/// 32-bit variant: floor(hash * n / 2^32).
[[nodiscard]] constexpr std::uint32_t fastrange32(std::uint32_t hash, std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(hash) * n) >> 32);
}

}  // namespace bloomshard::core
