// See checkpoint_data.hpp: the merge step both data paths share.
#include "io/checkpoint/checkpoint_data.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include "io/checkpoint/checkpoint_checksum.hpp"

namespace bloomshard::io {

std::uint64_t merge_slice_checked(const core::TwoTierSet& set, std::uint32_t slice,
                                  std::size_t depth, std::span<std::uint64_t> fingerprints,
                                  std::span<std::uint64_t> offsets, std::span<char> bytes,
                                  std::string& err) {
  try {
    set.exact().write_merged_slice(slice, fingerprints, offsets, bytes, depth);
  } catch (const std::exception& e) {
    if (err.empty()) err = std::string("merging tier 2: ") + e.what();
    std::fill(fingerprints.begin(), fingerprints.end(), 0);
    std::fill(offsets.begin(), offsets.end(), 0);
    std::fill(bytes.begin(), bytes.end(), '\0');
  }
  return tier2_slice_checksum({fingerprints, offsets, bytes});
}

}  // namespace bloomshard::io
