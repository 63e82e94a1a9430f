#include "core/tier2/delta_index.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace bloomshard::core::detail {

void DeltaIndex::resize(std::size_t buckets) {
  buckets = std::max(buckets, kMinBuckets);
  const std::size_t bytes = buckets * kBucketBytes;
  if (bytes > table_.size()) {
    // Mapped (address space only) before the old table goes, so a failure
    // changes nothing; the old one is unmapped before the new one is
    // touched, so the peak is one table.
    HugePageMapping fresh;
    fresh.grow_to(bytes);
    table_ = std::move(fresh);
    // Keys land at random, so every page of the table is touched within
    // the first few thousand inserts: fault it in now, in one pass (like
    // the Bloom bits, zeroed when their layer opens), not one fault per
    // page in the middle of the decide loop.
    table_.prefault(bytes);
  } else {
    table_.zero(bytes);
  }
  buckets_ = buckets;
  keys_ = 0;
  max_keys_ = buckets * kBucketSlots / 4 * 3;
}

void DeltaIndex::reserve(std::size_t keys, const KeyArena& arena) {
  if (keys <= max_keys_) return;
  // Records take >= 10 bytes, so the arena's 1 TiB holds < 2^37 keys.
  constexpr std::size_t kMostKeys = std::size_t{1} << 37;
  if (keys > kMostKeys) {
    throw std::length_error("tier-2 delta index: " + std::to_string(keys) +
                            " keys asked for, more than the arena can hold");
  }
  resize((keys * 4 / 3 + kBucketSlots - 1) / kBucketSlots);
  // Refill from the records, in arena order. Their slots land at random:
  // the slot of the record kAhead places on is prefetched (as the decide
  // loop does), so the misses overlap.
  constexpr std::size_t kAhead = 16;
  struct Pending {
    std::uint64_t fingerprint;
    std::uint64_t offset;
  };
  std::array<Pending, kAhead> ring{};
  std::size_t queued = 0;
  std::uint64_t* s = slots();
  const auto place = [&](const Pending& p) {
    s[empty_slot(p.fingerprint)] = home(p.fingerprint).tag | (p.offset + 1);
    ++keys_;
  };
  for (std::uint64_t at = 0; at < arena.used();) {
    const KeyRecord r = arena.record(at);
    prefetch(r.fingerprint);
    Pending& slot = ring[queued % kAhead];
    if (queued >= kAhead) place(slot);
    slot = {r.fingerprint, at};
    ++queued;
    at = r.next;
  }
  for (std::size_t q = queued > kAhead ? queued - kAhead : 0; q < queued; ++q)
    place(ring[q % kAhead]);
}

void DeltaIndex::clear() noexcept {
  table_.zero(table_bytes());
  keys_ = 0;
}

void DeltaIndex::release() {
  HugePageMapping small;
  small.grow_to(kMinBuckets * kBucketBytes);
  table_ = std::move(small);
  buckets_ = kMinBuckets;
  keys_ = 0;
  max_keys_ = kMinBuckets * kBucketSlots / 4 * 3;
}

}  // namespace bloomshard::core::detail
