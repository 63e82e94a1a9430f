#include "bloomshard/core/membership_query.hpp"

#include <stdexcept>
#include <string>

#include "bloomshard/core/bloom_kernel.hpp"  // kPrefetchDistance
#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::core {

QueryCounters& QueryCounters::operator+=(const QueryCounters& o) noexcept {
  add_counters<QueryCounters>(*this, o, kQueryCounterFields);
  return *this;
}

void query_batch(const TwoTierSet& set, std::span<const KeyRef> keys, std::span<std::uint8_t> hit,
                 QueryCounters& counters) {
  if (hit.size() != keys.size()) {
    throw std::invalid_argument("query_batch: " + std::to_string(hit.size()) +
                                " answer slots for " + std::to_string(keys.size()) + " keys");
  }
  const std::uint32_t num_slices = set.bloom().params().num_slices;
  const SliceRange range = set.owned();
  // As in decide_batch: a foreign key's lines lie outside this rank's arrays.
  const auto prefetch = [&](std::size_t j) {
    if (range.contains(slice_of(keys[j].hash, num_slices))) set.bloom().prefetch(keys[j].hash);
  };
  const std::size_t n = keys.size();
  for (std::size_t j = 0; j < n && j < kPrefetchDistance; ++j) prefetch(j);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) prefetch(i + kPrefetchDistance);
    const std::uint32_t slice = slice_of(keys[i].hash, num_slices);
    if (!range.contains(slice)) {
      throw std::invalid_argument("query_batch: key of slice " + std::to_string(slice) +
                                  " is not owned here [" + std::to_string(range.first) + ", " +
                                  std::to_string(range.last) + ")");
    }
    ++counters.queried;
    hit[i] = 0;
    if (!set.bloom().may_contain(keys[i].hash)) {
      ++counters.tier1_absent;
      continue;
    }
    ++counters.tier1_maybe;
    ++counters.tier2_lookups;
    if (set.exact().contains(slice, fingerprint(keys[i].hash), keys[i].bytes)) {
      hit[i] = 1;
      ++counters.hits;
    } else {
      ++counters.false_positives;
    }
  }
}

}  // namespace bloomshard::core
