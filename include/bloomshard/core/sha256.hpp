// SHA-256 (FIPS 180-4), streaming. Our own ~100 lines rather than a new
// dependency: the digest keys (--key-digest sha256) need only the hash, it
// is checked against the FIPS 180-4 / NIST CSRC example vectors in
// tests/core/test_key_digest.cpp, and the portable code runs at about
// 200-300 MB/s per core here (see docs/keys.md), which is well above the rate
// the JSON reader feeds it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bloomshard::core {

/// Incremental SHA-256: update() any number of times, then final() once.
class Sha256 {
 public:
  static constexpr std::size_t kDigestBytes = 32;
  using Digest = std::array<unsigned char, kDigestBytes>;

  Sha256() noexcept { reset(); }

  /// Starts a new message.
  void reset() noexcept;

  /// Appends bytes to the message.
  void update(std::string_view bytes) noexcept;

  /// The digest of everything appended since reset(); the object must be
  /// reset() before it is used again.
  [[nodiscard]] Digest final() noexcept;

 private:
  void compress(const unsigned char* block) noexcept;

  std::array<std::uint32_t, 8> state_{};
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace bloomshard::core
