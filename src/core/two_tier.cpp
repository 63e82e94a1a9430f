// The owner's decision loop. Keys are decided one at a time in batch order
// (never "query all, then decide"): that is what makes a repeat inside one
// batch a duplicate. Memory latency is hidden by prefetching, in two stages
// ahead of the decision, the lines it will read (decide_batch), which needs
// no result of the keys in between.
#include "bloomshard/core/two_tier.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"  // kPrefetchDistance, shared with the batch paths
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/slot_window.hpp"

namespace bloomshard::core {

DecisionCounters& DecisionCounters::operator+=(const DecisionCounters& o) noexcept {
  decided += o.decided;
  tier1_absent += o.tier1_absent;
  tier1_maybe += o.tier1_maybe;
  tier2_lookups += o.tier2_lookups;
  duplicates += o.duplicates;
  false_positives += o.false_positives;
  refreshed += o.refreshed;
  return *this;
}

TwoTierSet::TwoTierSet(const ScalableBloomParams& params, SliceRange owned)
    : bloom_(params, owned), exact_(owned, params.num_slices) {
  reserve_delta_for_newest_layer();  // sized and faulted in with the first layer's bits
}

// decide() once the delta index is sized for the layers (decide_batch checks
// that once per batch); inlined into the batch loop.
[[gnu::always_inline]] inline Verdict TwoTierSet::decide_reserved(const KeyRef& key) {
  const std::uint32_t slice = slice_of(key.hash, bloom_.params().num_slices);
  if (!owned().contains(slice)) {
    throw std::invalid_argument("two-tier decide: key of slice " + std::to_string(slice) +
                                " is not owned here [" + std::to_string(owned().first) + ", " +
                                std::to_string(owned().last) + ")");
  }
  const std::uint64_t fp = fingerprint(key.hash);
  // Bloom first: if the tier-2 insert throws (allocation), the only trace is
  // a Bloom bit, i.e. a future false positive, which tier 2 corrects. The
  // reverse order could leave a tier-2 key Bloom calls absent.
  if (bloom_.insert_if_absent(key.hash)) {
    // Bloom "absent" is final (every tier-2 key is in tier 1): insert without
    // a lookup, so a new key never touches the base (maybe a mapped file).
    ++counters_.tier1_absent;
    exact_.insert_new(slice, fp, key.bytes);
    ++counters_.decided;
    return Verdict::kNew;
  }
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
  const std::uint32_t num_slices = bloom_.params().num_slices;
  const SliceRange range = owned();
  // First stage, kPrefetchDistance (32) keys ahead: the key's Bloom blocks
  // and its delta index line. Prefetching a foreign key's Bloom lines would
  // read outside this rank's arrays: ownership is checked first.
  auto prefetch = [&](std::size_t j) {
    if (range.contains(slice_of(keys[j].hash, num_slices))) {
      bloom_.prefetch(keys[j].hash);
      exact_.prefetch(fingerprint(keys[j].hash));
    }
  };
  // Second stage, half way: the index line has landed, so the delta record
  // it points to for this fingerprint is fetched (for a repeat, the copy it
  // repeats; for a new key, almost never anything). With runs (a state), a
  // key Bloom calls maybe also gets the lines a run lookup starts at. A
  // duplicate's lookup then finds its index and record lines in cache
  // instead of two misses in a row. Keys decided in between may change the
  // answers; they are only hints.
  constexpr std::size_t kRecordAhead = kPrefetchDistance / 2;
  const bool has_runs = !exact_.runs().empty();
  auto prefetch_record = [&](std::size_t j) {
    const std::uint64_t fp = fingerprint(keys[j].hash);
    exact_.prefetch_record(fp, keys[j].bytes.size());
    if (has_runs) {
      const std::uint32_t slice = slice_of(keys[j].hash, num_slices);
      if (range.contains(slice) && bloom_.may_contain(keys[j].hash))
        exact_.prefetch_runs(slice, fp);
    }
  };
  for (std::size_t j = 0; j < n && j < kPrefetchDistance; ++j) prefetch(j);
  for (std::size_t j = 0; j < n && j < kRecordAhead; ++j) prefetch_record(j);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    if (i + kRecordAhead < n) prefetch_record(i + kRecordAhead);
    out[i] = decide_reserved(keys[i]);
  }
}

}  // namespace bloomshard::core
