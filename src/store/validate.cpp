// Overflow-safe checks of untrusted checkpoint metadata (store/validate.hpp).
#include "bloomshard/store/validate.hpp"

#include <algorithm>
#include <limits>

#include "bloomshard/store/format_error.hpp"

namespace bloomshard::store {

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    throw CheckpointError(what + ": " + std::to_string(a) + " * " + std::to_string(b) +
                          " overflows 64 bits");
  }
  return out;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    throw CheckpointError(what + ": " + std::to_string(a) + " + " + std::to_string(b) +
                          " overflows 64 bits");
  }
  return out;
}

Tier2Extents tier2_extents(std::span<const std::uint64_t> slice_keys,
                           std::span<const std::uint64_t> slice_bytes, const std::string& what) {
  if (slice_keys.size() != slice_bytes.size()) {
    throw CheckpointError(what + ": " + std::to_string(slice_keys.size()) + " key counts but " +
                          std::to_string(slice_bytes.size()) + " byte counts");
  }
  const std::size_t p = slice_keys.size();
  Tier2Extents e;
  e.key_start.assign(p + 1, 0);
  e.byte_start.assign(p + 1, 0);
  for (std::size_t i = 0; i < p; ++i) {
    e.key_start[i + 1] = checked_add(e.key_start[i], slice_keys[i], what + " per-slice key counts");
    e.byte_start[i + 1] =
        checked_add(e.byte_start[i], slice_bytes[i], what + " per-slice byte counts");
  }
  e.keys = e.key_start[p];
  e.bytes = e.byte_start[p];
  // The lengths the datasets and mappings derive from them.
  (void)checked_mul(e.keys, 8, what + " fingerprint bytes");
  (void)checked_mul(checked_add(e.keys, p, what + " offsets"), 8, what + " offset bytes");
  return e;
}

std::string check_offsets(std::span<const std::uint64_t> offsets, std::uint64_t bytes) {
  if (offsets.empty()) return "no offsets";
  if (offsets.front() != 0) return "first offset " + std::to_string(offsets.front()) + ", not 0";
  for (std::size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) {
      return "offsets decrease at key " + std::to_string(i - 1) + " (" +
             std::to_string(offsets[i - 1]) + " then " + std::to_string(offsets[i]) + ")";
    }
  }
  if (offsets.back() != bytes) {
    return "last offset " + std::to_string(offsets.back()) + " != the slice's " +
           std::to_string(bytes) + " key bytes";
  }
  return {};
}

void check_run_list(std::span<const std::uint64_t> ids, std::span<const std::uint64_t> levels,
                    std::span<const std::uint64_t> keys, std::span<const std::uint64_t> bytes) {
  const std::size_t r = ids.size();
  if (levels.size() != r || keys.size() != r || bytes.size() != r) {
    throw CheckpointError("/runs columns differ in length");
  }
  if (r > kMaxRunsPerGeneration) {
    throw CheckpointError("/runs lists " + std::to_string(r) + " runs (more than " +
                          std::to_string(kMaxRunsPerGeneration) + ")");
  }
  std::uint64_t k = 0, b = 0;
  for (std::size_t i = 0; i < r; ++i) {
    if (levels[i] > std::numeric_limits<std::uint32_t>::max()) {
      throw CheckpointError("/runs/level " + std::to_string(levels[i]) + " out of range");
    }
    k = checked_add(k, keys[i], "/runs/keys");
    b = checked_add(b, bytes[i], "/runs/bytes");
  }
  std::vector<std::uint64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw CheckpointError("/runs/id lists a run twice");
  }
}

}  // namespace bloomshard::store
