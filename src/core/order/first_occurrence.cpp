#include "core/order/first_occurrence.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace bloomshard::core {

std::size_t FirstOccurrenceFinder::find(std::span<const KeyRef> keys,
                                        std::vector<std::uint32_t>& first_of) {
  if (keys.size() >= (std::size_t{1} << 31)) {
    throw std::invalid_argument("FirstOccurrenceFinder: more than 2^31 keys in one batch");
  }
  first_of.resize(keys.size());
  // Load factor <= 1/2: short probe runs.
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, 2 * keys.size()));
  slots_.assign(capacity, 0);
  const std::size_t mask = capacity - 1;
  std::size_t firsts = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const KeyRef& key = keys[i];
    // hash.lo is the fingerprint, independent of the slice bits in hash.hi.
    std::size_t slot = static_cast<std::size_t>(key.hash.lo) & mask;
    for (;;) {
      const std::uint32_t entry = slots_[slot];
      if (entry == 0) {
        slots_[slot] = static_cast<std::uint32_t>(i + 1);
        first_of[i] = static_cast<std::uint32_t>(i);
        ++firsts;
        break;
      }
      const KeyRef& other = keys[entry - 1];
      if (other.hash == key.hash && other.bytes == key.bytes) {
        first_of[i] = entry - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  return firsts;
}

}  // namespace bloomshard::core
