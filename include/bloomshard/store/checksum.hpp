// Per-slice checksums of a checkpoint, XXH3-64 (seed 0) over the values as
// stored (little-endian): a Bloom slice over its words; a tier-2 slice over
// its fingerprints, then its offsets (slice-local, with the trailing one),
// then its key bytes, as one stream; the run manifest (format 2) over its
// text.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "bloomshard/core/exact_shard.hpp"

namespace bloomshard::store {

[[nodiscard]] std::uint64_t bloom_slice_checksum(std::span<const std::uint64_t> words) noexcept;
[[nodiscard]] std::uint64_t tier2_slice_checksum(const core::SliceBaseView& slice) noexcept;
[[nodiscard]] std::uint64_t manifest_checksum(std::string_view text) noexcept;

}  // namespace bloomshard::store
