// One slice of an immutable sorted run of tier 2: fingerprints ascending
// (ties by key bytes as unsigned), slice-local offsets into one byte array.
// A run is what a checkpoint writes (the delta since the last one, or a
// compaction of several runs); in a job it lives in a mapped checkpoint run
// file, so a view only holds spans and never owns the bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace bloomshard::core {

/// The order of every run and merge: fingerprint, then bytes compared as
/// unsigned (std::string_view's char_traits<char> compares like memcmp).
[[nodiscard]] inline bool less_key(std::uint64_t fa, std::string_view a, std::uint64_t fb,
                                   std::string_view b) noexcept {
  return fa != fb ? fa < fb : a < b;
}

/// Read-only view of one slice of a sorted run. Invariants (checked by
/// validate_base()): offsets.size() == fingerprints.size() + 1, offsets[0]
/// == 0, offsets non-decreasing, offsets.back() == bytes.size(),
/// (fingerprint, bytes) strictly increasing.
struct SliceBaseView {
  std::span<const std::uint64_t> fingerprints;
  std::span<const std::uint64_t> offsets;
  std::span<const char> bytes;
  [[nodiscard]] std::size_t size() const noexcept { return fingerprints.size(); }
  [[nodiscard]] std::string_view key(std::size_t i) const noexcept;
  /// Where `fingerprint` is expected if fingerprints are uniform over 2^64
  /// (they are hash values): fingerprint * size / 2^64.
  [[nodiscard]] std::size_t expected_position(std::uint64_t fingerprint) const noexcept;
  /// The first index whose fingerprint is >= `fingerprint` (size() if none),
  /// by galloping from expected_position(): for uniform fingerprints about
  /// log2(sqrt(keys)) reads within one or two pages (10 at 10^6 keys per
  /// slice, instead of 20 for a binary search over the whole slice);
  /// correct for any sorted array.
  [[nodiscard]] std::size_t lower_bound(std::uint64_t fingerprint) const noexcept;
  /// Exact membership: lower_bound(), then bytes among equal fingerprints.
  [[nodiscard]] bool contains(std::uint64_t fingerprint, std::string_view key) const noexcept;
  /// Prefetches the fingerprint line a lookup starts at (a hint).
  void prefetch(std::uint64_t fingerprint) const noexcept;
};

/// Owned storage of one slice's run (what merging into memory produces).
struct SliceBaseData {
  std::vector<std::uint64_t> fingerprints;
  std::vector<std::uint64_t> offsets{0};
  std::vector<char> bytes;
  [[nodiscard]] SliceBaseView view() const noexcept { return {fingerprints, offsets, bytes}; }
};

/// Throws std::runtime_error naming the broken invariant.
void validate_base(const SliceBaseView& base);

/// Size of one merged slice: keys, and key bytes (offsets hold keys + 1).
struct SliceSize {
  std::uint64_t keys = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const SliceSize&, const SliceSize&) = default;
};

}  // namespace bloomshard::core
