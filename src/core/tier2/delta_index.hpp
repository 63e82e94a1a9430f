// The tier-2 delta's hash index, internal to src/core: open addressing over
// buckets of 8 slots, one 64-byte line each. A slot is 8 bytes,
//     [tag: 24 bits of the fingerprint's hash][record offset + 1: 40 bits]
// (0 = empty), pointing straight into the key arena (key_arena.hpp): no
// entry array in between, so a lookup is the bucket line, then, only for a
// slot whose tag matches, the record's line(s). A search starts at the
// home bucket's first slot and runs on through the following buckets
// (wrapping) until it meets an empty slot.
//
// Cost and limits:
//   - at most 3/4 of the slots are used: 10.7 bytes per key at the limit,
//     16 at half load. Searches run on into the next bucket as the table
//     fills (measured by simulation): at half load 0.9% of the searches for
//     a present key and 5% of the inserts leave the home bucket, at 3/4
//     6% and 34% (then ~12 slots, two lines). A tag (24 bits) matches a wrong
//     key in about 1 search of 10^6: a record read, never a wrong answer
//     (the record is compared in full);
//   - sized up front with reserve() (the layer's share of keys) it never
//     rebuilds; past its limit it doubles, rebuilt by one sequential walk of
//     the arena (the fingerprints are in the records), the old table
//     unmapped before the new one is touched, so that the peak is the new
//     table alone;
//   - clear() keeps the table's pages (a memset instead of faulting the
//     table in again after each checkpoint).
// Buckets are any count (fastrange, not a power of two), so the size
// follows the reserve closely.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bloomshard/core/fastrange.hpp"
#include "core/memory/huge_page_mapping.hpp"
#include "core/tier2/key_arena.hpp"

namespace bloomshard::core::detail {

class DeltaIndex {
 public:
  static constexpr std::size_t kBucketSlots = 8;
  static constexpr std::size_t kBucketBytes = kBucketSlots * sizeof(std::uint64_t);
  /// Slots per key at the load limit (3/4), for memory accounting.
  static constexpr double kSlotsPerKey = 4.0 / 3.0;

  /// Where a search for a fingerprint starts, and the slot bits it looks for.
  struct Home {
    std::size_t slot;   ///< first slot of the home bucket
    std::uint64_t tag;  ///< tag << kOffsetBits
  };
  /// What a search found: the slot holding the key, or the empty slot where
  /// the key would go.
  struct Found {
    bool found;
    std::size_t slot;
  };

  DeltaIndex() { resize(kMinBuckets); }

  [[nodiscard]] Home home(std::uint64_t fingerprint) const noexcept {
    const std::uint64_t h = fingerprint * 0x9E3779B97F4A7C15ULL;
    return {static_cast<std::size_t>(fastrange64(h, buckets_)) * kBucketSlots,
            (((h >> 8) ^ (h >> 40)) & kTagMask) << kOffsetBits};
  }
  void prefetch(std::uint64_t fingerprint) const noexcept {
    __builtin_prefetch(slots() + home(fingerprint).slot, 1);
  }

  /// The offset of the first record in the search path whose tag matches
  /// (the likely key), or kNone if the path reaches an empty slot first.
  /// Reads only the home bucket (a prefetch hint needs no more).
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  [[nodiscard]] std::uint64_t likely_offset(std::uint64_t fingerprint) const noexcept {
    const Home at = home(fingerprint);
    const std::uint64_t* s = slots() + at.slot;
    for (std::size_t i = 0; i < kBucketSlots; ++i) {
      const std::uint64_t v = s[i];
      if (v == 0) break;
      if ((v & ~kOffsetMask) == at.tag) return (v & kOffsetMask) - 1;
    }
    return kNone;
  }

  /// Searches for a key: is_key(offset) is asked for each slot whose tag
  /// matches, in search order, until it says true or an empty slot ends
  /// the search.
  template <class IsKey>
  [[nodiscard]] Found find(std::uint64_t fingerprint, IsKey&& is_key) const {
    const Home at = home(fingerprint);
    const std::uint64_t* s = slots();
    std::size_t i = at.slot;
    for (;;) {
      const std::uint64_t v = s[i];
      if (v == 0) return {false, i};
      if ((v & ~kOffsetMask) == at.tag && is_key((v & kOffsetMask) - 1)) return {true, i};
      if (++i == slot_count()) i = 0;
    }
  }
  /// The empty slot where a key known to be absent goes.
  [[nodiscard]] std::size_t empty_slot(std::uint64_t fingerprint) const noexcept {
    return empty_slot(home(fingerprint));
  }
  [[nodiscard]] std::size_t empty_slot(const Home& at) const noexcept {
    const std::uint64_t* s = slots();
    std::size_t i = at.slot;
    while (s[i] != 0) {
      if (++i == slot_count()) i = 0;
    }
    return i;
  }

  /// True if one more key fits under the load limit.
  [[nodiscard]] bool has_room() const noexcept { return keys_ < max_keys_; }
  /// Stores the record at `offset` for `fingerprint` in `slot`, an empty
  /// slot that find()/empty_slot() gave for it since the last change of size.
  /// Requires has_room().
  void put(std::size_t slot, std::uint64_t fingerprint, std::uint64_t offset) noexcept {
    slots()[slot] = home(fingerprint).tag | (offset + 1);
    ++keys_;
  }
  /// The key's slot and tag come from `at`, home(fingerprint).
  void put(std::size_t slot, const Home& at, std::uint64_t offset) noexcept {
    slots()[slot] = at.tag | (offset + 1);
    ++keys_;
  }

  /// Makes room for at least `keys` keys without a rebuild (never shrinks):
  /// a new table, refilled from `arena`'s records. Throws std::bad_alloc,
  /// or std::length_error past 2^37 keys (nothing changed either way).
  void reserve(std::size_t keys, const KeyArena& arena);
  /// Forgets every key, keeping the table and its pages.
  void clear() noexcept;
  /// Forgets every key and returns the table to its first size (unmapping
  /// the rest). Throws std::bad_alloc.
  void release();

  [[nodiscard]] std::size_t keys() const noexcept { return keys_; }
  /// Keys the table holds before it must grow.
  [[nodiscard]] std::size_t max_keys() const noexcept { return max_keys_; }
  /// Bytes of the table (resident once touched).
  [[nodiscard]] std::size_t table_bytes() const noexcept { return buckets_ * kBucketBytes; }

 private:
  static constexpr unsigned kOffsetBits = 40;
  static constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kOffsetBits) - 1;
  static constexpr std::uint64_t kTagMask = (std::uint64_t{1} << (64 - kOffsetBits)) - 1;
  static constexpr std::size_t kMinBuckets = 16;  // 1 KiB
  static_assert(kMaxArenaBytes <= kOffsetMask + 1, "an offset + 1 fits the slot");

  [[nodiscard]] std::uint64_t* slots() const noexcept {
    return reinterpret_cast<std::uint64_t*>(table_.data());
  }
  [[nodiscard]] std::size_t slot_count() const noexcept { return buckets_ * kBucketSlots; }
  void resize(std::size_t buckets);  // an empty table of `buckets`

  HugePageMapping table_;
  std::size_t buckets_ = 0;
  std::size_t keys_ = 0;
  std::size_t max_keys_ = 0;
};

}  // namespace bloomshard::core::detail
