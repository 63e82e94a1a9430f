// Tier 2: the exact ID store for the slices one rank owns, the authority for
// "seen". Every accepted key is kept as bytes. Per slice there is
//   - an immutable sorted base: fingerprints ascending (ties by key bytes),
//     offsets into one byte arena; it is what a checkpoint writes, and it may
//     live in memory or in a mapped checkpoint file (SliceBaseView only holds
//     spans, the storage is kept alive by a shared keepalive handle);
//   - and the mutable delta of keys accepted since: an open-addressing index
//     of fingerprints into a byte arena, no std::string per key.
// Lookups touch the base only when the delta misses (and in a job only for
// Bloom positives).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::core {

/// Read-only view of one slice's sorted base. Invariants (checked by
/// validate_base()): offsets.size() == fingerprints.size() + 1, offsets[0]
/// == 0, offsets non-decreasing, offsets.back() == bytes.size(),
/// (fingerprint, bytes) strictly increasing.
struct SliceBaseView {
  std::span<const std::uint64_t> fingerprints;
  std::span<const std::uint64_t> offsets;
  std::span<const char> bytes;
  [[nodiscard]] std::size_t size() const noexcept { return fingerprints.size(); }
  [[nodiscard]] std::string_view key(std::size_t i) const noexcept;
  /// Exact membership by binary search on the fingerprint, then bytes.
  [[nodiscard]] bool contains(std::uint64_t fingerprint, std::string_view key) const noexcept;
};

/// Owned storage of one slice's base (what merging produces).
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

class ExactShard {
 public:
  /// An empty shard for `owned` slices of a filter of num_slices slices.
  /// Throws std::invalid_argument unless owned lies in [0, num_slices).
  ExactShard(SliceRange owned, std::uint32_t num_slices);
  ~ExactShard();
  ExactShard(ExactShard&&) noexcept;
  ExactShard& operator=(ExactShard&&) noexcept;
  // Not copyable: a shard may hold gigabytes; copy merged_slice() data instead.
  ExactShard(const ExactShard&) = delete;
  ExactShard& operator=(const ExactShard&) = delete;

  /// Exact membership (delta, then base). Throws std::out_of_range unless
  /// `slice` is in owned(). Membership is per slice: callers pass the slice
  /// of the key's hash.
  [[nodiscard]] bool contains(std::uint32_t slice, std::uint64_t fingerprint,
                              std::string_view key) const;
  /// Adds the key to the delta. Returns false (and changes nothing) if the
  /// key is already present in delta or base. Limits: < 2^32 - 1 delta keys
  /// and < 2^24 arena chunks (>= 1 TiB of small keys) per shard, else
  /// std::length_error. Throws std::out_of_range for a slice not in owned().
  bool insert(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// Adds a key known to be absent (tier 1 said absent) without looking it
  /// up: the new-key path then touches neither the delta's entries nor the
  /// (possibly mapped) base. Inserting a present key breaks the merge
  /// invariant; debug builds check. Same limits as insert().
  void insert_new(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// Prefetches the delta index line a lookup or insert of `fingerprint`
  /// starts at (a hint; no effect on results).
  void prefetch(std::uint64_t fingerprint) const noexcept;

  /// Replaces a slice's base with a view whose storage `keepalive` owns
  /// (a mapped checkpoint, or SliceBaseData). The delta of the slice is kept
  /// (keys in both are counted twice by size() until clear_delta(), but
  /// merged_slice() emits them once). The view is not validated here.
  void attach_base(std::uint32_t slice, SliceBaseView view, std::shared_ptr<const void> keepalive);

  /// The slice's base merged with its delta, sorted by (fingerprint, bytes
  /// as unsigned), each key once; the shard is unchanged. This is what a
  /// checkpoint writes. Same as write_merged_slice() into owned vectors.
  [[nodiscard]] SliceBaseData merged_slice(std::uint32_t slice) const;

  /// Exact size of merged_slice(slice) without merging: O(1) from per-slice
  /// counters, unless the slice's base was attached over a non-empty delta
  /// (keys may then be in both; the slice is merged once to count them).
  [[nodiscard]] SliceSize merged_slice_size(std::uint32_t slice) const;

  /// Writes merged_slice(slice) straight into caller memory (e.g. a
  /// checkpoint's write buffer): its fingerprints, its slice-local offsets
  /// (0, ..., bytes) and its key bytes. The spans must have exactly
  /// merged_slice_size() keys, keys + 1 and bytes elements, else
  /// std::length_error. The first call after an insert buckets the delta by
  /// slice once (16 bytes per delta key, counted in delta_bytes()); each call
  /// then sorts only that slice's delta keys (16 bytes per key of the slice,
  /// freed on return), by a radix pass on the fingerprint's top bits, reading
  /// key bytes only on equal fingerprints: about 0.05-0.1 us per key with
  /// the copy. Safe to call from several threads while no insert runs.
  void write_merged_slice(std::uint32_t slice, std::span<std::uint64_t> fingerprints,
                          std::span<std::uint64_t> offsets, std::span<char> bytes) const;

  /// Folds every delta into in-memory bases (for runs without a state dir or
  /// after a checkpoint that will not be re-mapped).
  void fold_delta_into_base();
  /// Drops all deltas and frees their memory; call only after the merged
  /// bases were attached.
  void clear_delta();

  [[nodiscard]] SliceRange owned() const noexcept { return owned_; }
  [[nodiscard]] std::uint64_t size() const noexcept;  ///< keys, base + delta
  [[nodiscard]] std::uint64_t delta_keys() const noexcept;
  /// Bytes the delta holds allocated (index, entries, arena, merge order):
  /// about 30 bytes per key plus the key bytes, and 64 KiB once non-empty.
  [[nodiscard]] std::uint64_t delta_bytes() const noexcept;
  [[nodiscard]] std::uint64_t base_keys() const noexcept;

 private:
  struct Impl;
  SliceRange owned_;
  std::uint32_t num_slices_;
  std::unique_ptr<Impl> impl_;  // pimpl keeps the header light; see exact_shard.cpp
};

}  // namespace bloomshard::core
