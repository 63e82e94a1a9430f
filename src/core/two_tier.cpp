// The owner's decision loop. Keys are decided one at a time in batch order
// (never "query all, then decide"): that is what makes a repeat inside one
// batch a duplicate. Memory latency is hidden by prefetching the Bloom blocks
// of the key kPrefetchDistance (16) places ahead, which needs no result of
// the keys in between.
#include "bloomshard/core/two_tier.hpp"

#include <array>
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
    : bloom_(params, owned), exact_(owned, params.num_slices) {}

Verdict TwoTierSet::decide(const KeyRef& key) {
  const std::uint32_t slice = slice_of(key.hash, bloom_.params().num_slices);
  if (!owned().contains(slice)) {
    throw std::invalid_argument("two-tier decide: key of slice " + std::to_string(slice) +
                                " is not owned here [" + std::to_string(owned().first) + ", " +
                                std::to_string(owned().last) + ")");
  }
  const std::uint64_t fp = fingerprint(key.hash);
  Verdict verdict = Verdict::kNew;
  if (bloom_.may_contain(key.hash)) {
    ++counters_.tier1_maybe;
    ++counters_.tier2_lookups;
    if (bloom_.window() != 0) {
      const std::size_t at = exact_.newest_holder(slice, fp, key.bytes);
      if (at != ExactShard::kNotHeld) {
        if (at != ExactShard::kInDelta && exact_.runs()[at].slot != bloom_.current_slot()) {
          bloom_.insert(key.hash);  // Bloom first, as below
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
    verdict = Verdict::kNewAfterFalsePositive;
  } else {
    ++counters_.tier1_absent;
  }
  // Bloom first: if the tier-2 insert throws (allocation), the only trace is
  // a Bloom bit, i.e. a future false positive, which tier 2 corrects. The
  // reverse order could leave a tier-2 key Bloom calls absent.
  bloom_.insert(key.hash);
  if (verdict == Verdict::kNew) {
    // Bloom "absent" is final (every tier-2 key is in tier 1): insert without
    // a lookup, so a new key never touches the base (maybe a mapped file).
    exact_.insert_new(slice, fp, key.bytes);
  } else {
    exact_.insert(slice, fp, key.bytes);  // just checked absent: cannot fail
  }
  ++counters_.decided;
  return verdict;
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

void TwoTierSet::decide_batch(std::span<const KeyRef> keys, std::span<Verdict> out) {
  if (out.size() != keys.size()) {
    throw std::invalid_argument("two-tier decide_batch: " + std::to_string(out.size()) +
                                " verdict slots for " + std::to_string(keys.size()) + " keys");
  }
  const std::size_t n = keys.size();
  const std::uint32_t num_slices = bloom_.params().num_slices;
  const SliceRange range = owned();
  // Prefetching a foreign key's lines would read outside this rank's arrays:
  // check ownership before the first prefetch reaches the key.
  auto prefetch = [&](std::size_t j) {
    if (range.contains(slice_of(keys[j].hash, num_slices))) {
      bloom_.prefetch(keys[j].hash);
      exact_.prefetch(fingerprint(keys[j].hash));
    }
  };
  // Second stage, half way: the key's Bloom blocks and index line are in
  // cache by now, so asking Bloom is cheap; for a maybe (a likely tier-2
  // lookup) the delta entry the index points to is fetched, and the lines
  // the lookup starts at in each mapped run. Third stage, a quarter of the
  // way: the entry has landed, so the key bytes it points to are fetched. A
  // duplicate's lookup then finds index, entry and bytes in cache instead
  // of taking three misses in a row (measured: tests/bench
  // bloomshard_bench_decide). Keys decided in between may change the
  // answers; they are only hints, remembered in a ring of kPrefetchDistance.
  constexpr std::size_t kMaybeAhead = kPrefetchDistance / 2;
  constexpr std::size_t kBytesAhead = kPrefetchDistance / 4;
  std::array<bool, kPrefetchDistance> maybe{};  // stage-2 answer of key j at j % size
  const bool has_runs = !exact_.runs().empty();
  auto prefetch_maybe = [&](std::size_t j) {
    const std::uint32_t slice = slice_of(keys[j].hash, num_slices);
    const bool m = range.contains(slice) && bloom_.may_contain(keys[j].hash);
    maybe[j % kPrefetchDistance] = m;
    if (!m) return;
    const std::uint64_t fp = fingerprint(keys[j].hash);
    exact_.prefetch_entry(fp);
    if (has_runs) exact_.prefetch_runs(slice, fp);
  };
  auto prefetch_bytes = [&](std::size_t j) {
    if (maybe[j % kPrefetchDistance]) exact_.prefetch_key_bytes(fingerprint(keys[j].hash));
  };
  for (std::size_t j = 0; j < n && j < kPrefetchDistance; ++j) prefetch(j);
  for (std::size_t j = 0; j < n && j < kMaybeAhead; ++j) prefetch_maybe(j);
  for (std::size_t j = 0; j < n && j < kBytesAhead; ++j) prefetch_bytes(j);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    if (i + kMaybeAhead < n) prefetch_maybe(i + kMaybeAhead);
    if (i + kBytesAhead < n) prefetch_bytes(i + kBytesAhead);
    out[i] = decide(keys[i]);
  }
}

}  // namespace bloomshard::core
