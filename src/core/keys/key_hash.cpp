#include "bloomshard/core/key_hash.hpp"

#define XXH_INLINE_ALL  // lets the compiler inline XXH3 into the hot path
#include <xxhash.h>

namespace bloomshard::core {

KeyHash hash_key(std::string_view key, std::uint64_t seed) noexcept {
  const XXH128_hash_t h = XXH3_128bits_withSeed(key.data(), key.size(), seed);
  return KeyHash{h.high64, h.low64};
}

}  // namespace bloomshard::core
