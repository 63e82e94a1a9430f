// Per-slice and manifest checksums, XXH3-64 (store/checksum.hpp).
#include "bloomshard/store/checksum.hpp"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace bloomshard::store {

std::uint64_t bloom_slice_checksum(std::span<const std::uint64_t> words) noexcept {
  return XXH3_64bits(words.data(), words.size_bytes());
}

std::uint64_t tier2_slice_checksum(const core::SliceBaseView& slice) noexcept {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, slice.fingerprints.data(), slice.fingerprints.size_bytes());
  XXH3_64bits_update(&state, slice.offsets.data(), slice.offsets.size_bytes());
  XXH3_64bits_update(&state, slice.bytes.data(), slice.bytes.size_bytes());
  return XXH3_64bits_digest(&state);
}

std::uint64_t manifest_checksum(std::string_view text) noexcept {
  return XXH3_64bits(text.data(), text.size());
}

}  // namespace bloomshard::store
