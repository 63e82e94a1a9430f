// The tier-2 delta in checkpoint order, internal to src/core: its records
// bucketed by slice (insertion order inside a slice), then one slice at a
// time sorted by (fingerprint, key bytes as unsigned), the order of a
// sorted run (sorted_run.hpp). A checkpoint builds the buckets once and
// sorts each slice as it writes it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/tier2/key_arena.hpp"

namespace bloomshard::core::detail {

/// One delta key in the merge: its fingerprint and its record's offset.
struct DeltaEntry {
  std::uint64_t fingerprint;
  std::uint64_t offset;
};

class DeltaBySlice {
 public:
  /// Buckets every record of `arena` by its local slice; slice_counts[s] is
  /// the number of records of local slice s. One sequential walk of the
  /// arena, 16 bytes per key.
  void build(const KeyArena& arena, std::span<const std::uint64_t> slice_counts);
  /// The entries of local slice `local`, in insertion order.
  [[nodiscard]] std::span<const DeltaEntry> slice(std::uint32_t local) const noexcept {
    return {entries_.data() + start_[local], count_[local]};
  }
  /// Bytes held.
  [[nodiscard]] std::uint64_t bytes() const noexcept {
    return entries_.capacity() * sizeof(DeltaEntry) +
           (start_.capacity() + count_.capacity()) * sizeof(std::uint64_t);
  }
  void release() noexcept;

 private:
  std::vector<DeltaEntry> entries_;
  std::vector<std::uint64_t> start_;
  std::vector<std::uint64_t> count_;
};

/// `entries` sorted by (fingerprint, key bytes as unsigned). Fingerprints are
/// uniform in a job, so one counting pass on their top log2(n) bits leaves
/// buckets of 1-2 entries; a comparison sort per bucket keeps structured or
/// colliding fingerprints (tests, adversarial input) correct.
[[nodiscard]] std::vector<DeltaEntry> sorted_slice(std::span<const DeltaEntry> entries,
                                                   const KeyArena& arena);

}  // namespace bloomshard::core::detail
