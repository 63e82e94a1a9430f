// The owner's decision loop. Keys are decided in batch order (never "query
// all, then decide"): that is what makes a repeat inside one batch a
// duplicate. A batch runs as two passes over the keys, each in order: the
// Bloom pass (probe, and insert the absent) for all of them, then tier 2
// (insert the absent, look up the maybes). That is the order of the one-key
// decision, because tier 2 never changes what a later key's Bloom probe
// reads (ScalableBloom::insert_if_absent_batch stops where it could). Each
// pass keeps its own lines in flight by prefetching ahead.
#include "bloomshard/core/two_tier.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"  // kPrefetchDistance, shared with the batch paths
#include "bloomshard/core/slice_map.hpp"
#include "core/window/slot_window.hpp"

namespace bloomshard::core {

DecisionCounters& DecisionCounters::operator+=(const DecisionCounters& o) noexcept {
  add_counters<DecisionCounters>(*this, o, kDecisionCounterFields);
  return *this;
}

TwoTierSet::TwoTierSet(const ScalableBloomParams& params, SliceRange owned)
    : bloom_(params, owned), exact_(owned, params.num_slices) {
  reserve_delta_for_newest_layer();  // sized and faulted in with the first layer's bits
}

// decide() once the delta index is sized for the layers (decide_batch checks
// that once per batch): the one-key path, for keys a batch pass stops at.
Verdict TwoTierSet::decide_reserved(const KeyRef& key) {
  const std::uint32_t slice = slice_of(key.hash, bloom_.params().num_slices);
  if (!owned().contains(slice)) {
    throw std::invalid_argument("two-tier decide: key of slice " + std::to_string(slice) +
                                " is not owned here [" + std::to_string(owned().first) + ", " +
                                std::to_string(owned().last) + ")");
  }
  // Bloom first: if the tier-2 insert throws (allocation), the only trace is
  // a Bloom bit, i.e. a future false positive, which tier 2 corrects. The
  // reverse order could leave a tier-2 key Bloom calls absent.
  if (bloom_.insert_if_absent(key.hash)) return decide_absent(slice, key);
  return decide_maybe(slice, key);
}

// Bloom said absent (and inserted the key). "Absent" is final (every tier-2
// key is in tier 1): insert without a lookup, so a new key never touches
// the base (maybe a mapped file).
[[gnu::always_inline]] inline Verdict TwoTierSet::decide_absent(std::uint32_t slice,
                                                                const KeyRef& key) {
  ++counters_.tier1_absent;
  exact_.insert_new(slice, fingerprint(key.hash), key.bytes);
  ++counters_.decided;
  return Verdict::kNew;
}

// Bloom said maybe: tier 2 decides.
[[gnu::always_inline]] inline Verdict TwoTierSet::decide_maybe(std::uint32_t slice,
                                                               const KeyRef& key) {
  const std::uint64_t fp = fingerprint(key.hash);
  ++counters_.tier1_maybe;
  ++counters_.tier2_lookups;
  if (bloom_.window() != 0) {
    const std::size_t at = exact_.newest_holder(slice, fp, key.bytes);
    if (at != ExactShard::kNotHeld) {
      if (at != ExactShard::kInDelta && exact_.runs()[at].slot != bloom_.current_slot()) {
        bloom_.insert(key.hash);  // Bloom first, as above
        exact_.insert_refresh(slice, fp, key.bytes);
        ++counters_.refreshed;
      }
      ++counters_.duplicates;
      ++counters_.decided;
      return Verdict::kDuplicate;
    }
  } else if (exact_.contains(slice, fp, key.bytes)) {
    ++counters_.duplicates;
    ++counters_.decided;
    return Verdict::kDuplicate;
  }
  ++counters_.false_positives;
  bloom_.insert(key.hash);              // Bloom first, as above
  exact_.insert(slice, fp, key.bytes);  // just checked absent: cannot fail
  ++counters_.decided;
  return Verdict::kNewAfterFalsePositive;
}

Verdict TwoTierSet::decide(const KeyRef& key) {
  if (reserved_for_ != std::pair{bloom_.num_layers(), bloom_.current_slot()}) {
    reserve_delta_for_newest_layer();
  }
  return decide_reserved(key);
}

void TwoTierSet::open_slot(std::uint64_t slot) {
  if (exact_.delta_keys() != 0) {
    throw std::logic_error("two-tier open_slot: " + std::to_string(exact_.delta_keys()) +
                           " delta keys not yet flushed into a run of slot " +
                           std::to_string(bloom_.current_slot()));
  }
  bloom_.open_slot(slot);  // throws before anything changes on a bad slot
  std::vector<std::uint64_t> tags;
  for (const RunInfo& r : exact_.runs()) tags.push_back(r.slot);
  exact_.drop_oldest_runs(expired_prefix(tags, slot, bloom_.window()));
}

void TwoTierSet::reserve_delta_for_newest_layer() {
  // The newest layer's room on this rank: its share of the layer's capacity
  // (keys land in slices uniformly) less what this rank inserted into it,
  // plus 4 standard deviations of the share's spread (binomial) and 1024,
  // capped (see kMaxReservedDeltaKeys).
  const std::size_t newest = bloom_.num_layers() - 1;
  const double share = static_cast<double>(bloom_.layer_geometry(newest).capacity) *
                       static_cast<double>(owned().size()) /
                       static_cast<double>(bloom_.params().num_slices);
  const double room = std::max(0.0, share + 4.0 * std::sqrt(share) + 1024.0 -
                                        static_cast<double>(bloom_.layer_inserted(newest)));
  const double keys = static_cast<double>(exact_.delta_keys()) + room;
  exact_.reserve_delta(keys < static_cast<double>(kMaxReservedDeltaKeys)
                           ? static_cast<std::uint64_t>(keys)
                           : kMaxReservedDeltaKeys);
  reserved_for_ = {bloom_.num_layers(), bloom_.current_slot()};
}

void TwoTierSet::decide_batch(std::span<const KeyRef> keys, std::span<Verdict> out) {
  if (out.size() != keys.size()) {
    throw std::invalid_argument("two-tier decide_batch: " + std::to_string(out.size()) +
                                " verdict slots for " + std::to_string(keys.size()) + " keys");
  }
  if (reserved_for_ != std::pair{bloom_.num_layers(), bloom_.current_slot()}) {
    reserve_delta_for_newest_layer();
  }
  const std::size_t n = keys.size();
  hashes_.resize(n);
  absent_.resize(n);
  for (std::size_t i = 0; i < n; ++i) hashes_[i] = keys[i].hash;
  // Segments: the Bloom pass runs in order until a key it cannot settle
  // alone (see insert_if_absent_batch), tier 2 catches up in the same order,
  // and that key is decided by itself (a foreign key throws there, with the
  // keys before it decided). Usually one segment is the whole batch.
  std::size_t i = 0;
  while (i < n) {
    const std::size_t done =
        bloom_.insert_if_absent_batch(std::span(hashes_).subspan(i), std::span(absent_).subspan(i));
    decide_tier2(keys.subspan(i, done), std::span(absent_).subspan(i, done), out.subspan(i, done));
    i += done;
    if (i < n) {
      out[i] = decide_reserved(keys[i]);
      ++i;
    }
  }
}

void TwoTierSet::decide_tier2(std::span<const KeyRef> keys, std::span<const std::uint8_t> absent,
                              std::span<Verdict> out) {
  const std::size_t n = keys.size();
  const std::uint32_t num_slices = bloom_.params().num_slices;
  // First stage, kPrefetchDistance (32) keys ahead: the key's delta index
  // line (every key reads it: a new key for an empty slot, a maybe for its
  // tag). Second stage, half way, for maybes only: the index line has
  // landed, so the delta record it points to for this fingerprint is
  // fetched (for a repeat, the copy it repeats), and with runs the lines a
  // run lookup starts at. A duplicate's lookup then finds its index and
  // record lines in cache instead of two misses in a row. Keys decided in
  // between may change the answers; they are only hints.
  constexpr std::size_t kRecordAhead = kPrefetchDistance / 2;
  const bool has_runs = !exact_.runs().empty();
  auto prefetch = [&](std::size_t j) { exact_.prefetch(fingerprint(keys[j].hash)); };
  auto prefetch_record = [&](std::size_t j) {
    if (absent[j] != 0) return;
    const std::uint64_t fp = fingerprint(keys[j].hash);
    exact_.prefetch_record(fp, keys[j].bytes.size());
    if (has_runs) exact_.prefetch_runs(slice_of(keys[j].hash, num_slices), fp);
  };
  for (std::size_t j = 0; j < n && j < kPrefetchDistance; ++j) prefetch(j);
  for (std::size_t j = 0; j < n && j < kRecordAhead; ++j) prefetch_record(j);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    if (i + kRecordAhead < n) prefetch_record(i + kRecordAhead);
    const std::uint32_t slice = slice_of(keys[i].hash, num_slices);
    out[i] = absent[i] != 0 ? decide_absent(slice, keys[i]) : decide_maybe(slice, keys[i]);
  }
}

}  // namespace bloomshard::core
