#include "core/tier2/key_arena.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bloomshard::core::detail {

void KeyArena::grow(std::size_t need) {
  // The last offset must fit the index's 40 bits next to its +1 (0 = empty).
  if (used_ + need >= kMaxArenaBytes) {
    throw std::length_error("tier-2 delta: more than 1 TiB of key records (" +
                            std::to_string(used_) + " bytes held); checkpoint sooner");
  }
  // Doubling keeps the moves rare (each is a page-table move, not a copy);
  // 64 KiB first, so that a shard holding a few keys stays small.
  constexpr std::size_t kFirstBytes = std::size_t{64} << 10;
  mapping_.grow_to(std::max({kFirstBytes, 2 * mapping_.size(), used_ + need}));
}

}  // namespace bloomshard::core::detail
