// Read-only membership against a two-tier set: the lookup half of the
// owner's decision (two_tier.hpp) without the insert. Bloom "absent" is
// final; every "maybe" is confirmed in tier 2, so the answer is exact.
// Used by `bloomshard query` (a saved state is never changed) and by
// `bloomshard merge` (which keys of one state another already holds).
#pragma once

#include <cstdint>
#include <span>

#include "bloomshard/core/counter_table.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core {

/// Counters of a query; they add up: queried = tier1_absent + tier1_maybe,
/// tier1_maybe = tier2_lookups = hits + false_positives.
struct QueryCounters {
  std::uint64_t queried = 0;
  std::uint64_t tier1_absent = 0;
  std::uint64_t tier1_maybe = 0;
  std::uint64_t tier2_lookups = 0;
  std::uint64_t hits = 0;             ///< keys the set holds
  std::uint64_t false_positives = 0;  ///< Bloom said maybe, tier 2 said absent
  QueryCounters& operator+=(const QueryCounters& o) noexcept;
};

/// Every field of QueryCounters, once: operator+= walks it, and so may a
/// reduction or a report (a new counter is one line here).
inline constexpr CounterOf<QueryCounters> kQueryCounterFields[] = {
    {"queried", &QueryCounters::queried},
    {"tier1_absent", &QueryCounters::tier1_absent},
    {"tier1_maybe", &QueryCounters::tier1_maybe},
    {"tier2_lookups", &QueryCounters::tier2_lookups},
    {"hits", &QueryCounters::hits},
    {"false_positives", &QueryCounters::false_positives},
};
static_assert(std::size(kQueryCounterFields) * sizeof(std::uint64_t) == sizeof(QueryCounters),
              "a QueryCounters field is missing from kQueryCounterFields");

/// Sets hit[i] = 1 if `set` holds keys[i], else 0, prefetching 16 keys
/// ahead like decide_batch; the set is not changed (const). Throws
/// std::invalid_argument if hit.size() != keys.size() or a key's slice is
/// not owned by the set (keys before it are answered and counted).
void query_batch(const TwoTierSet& set, std::span<const KeyRef> keys, std::span<std::uint8_t> hit,
                 QueryCounters& counters);

}  // namespace bloomshard::core
