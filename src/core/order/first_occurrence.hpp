// First copy of each key inside one batch: the sender-side combining of the
// router. A key that occurs several times in one rank's batch travels to its
// owner once (its first copy); the later copies are duplicates whatever the
// owner says, because the owner would decide them after the first copy
// anyway (same source, later position). This bounds what one hot key (an
// empty id, a boilerplate URL) can make one owner receive per round: at
// most one copy per sending rank. Pure, no MPI.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core {

/// Reusable scratch (an open-addressing table of 2-4 slots per key, 4 bytes
/// a slot), so that one finder serves every round without allocating.
class FirstOccurrenceFinder {
 public:
  /// Sets first_of[i] = i when keys[i] is the first copy of its key in
  /// `keys` (same hash and same bytes), else the index of that first copy.
  /// Returns the number of first copies. Cost: one hash-table probe per key
  /// (~10 ns for a batch whose table fits in L2) plus a byte comparison per
  /// repeated key. Limit: keys.size() < 2^31.
  std::size_t find(std::span<const KeyRef> keys, std::vector<std::uint32_t>& first_of);

 private:
  std::vector<std::uint32_t> slots_;  // 0: empty, else key index + 1
};

}  // namespace bloomshard::core
