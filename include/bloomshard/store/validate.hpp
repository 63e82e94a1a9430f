// Checks of untrusted checkpoint metadata, pure and MPI/HDF5-free so that a
// fuzzer can call them: every size, offset and count read from a file is
// range-checked with overflow-safe arithmetic before it is used to size an
// allocation or a mapping. Each throws CheckpointError naming the value.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bloomshard::store {

/// Most runs a generation may reference (the compaction cap is ~10; more is
/// a corrupt or foreign file).
inline constexpr std::uint64_t kMaxRunsPerGeneration = 4096;

/// Prefix sums of per-slice key and byte counts (P + 1 entries each) and
/// their totals, all overflow-checked, including the derived dataset
/// lengths keys * 8, (keys + P) * 8.
struct Tier2Extents {
  std::vector<std::uint64_t> key_start, byte_start;
  std::uint64_t keys = 0, bytes = 0;
};

/// Throws CheckpointError("<what>: ...") if the counts overflow or the
/// arrays differ in length.
[[nodiscard]] Tier2Extents tier2_extents(std::span<const std::uint64_t> slice_keys,
                                         std::span<const std::uint64_t> slice_bytes,
                                         const std::string& what);

/// a * b, or CheckpointError naming `what` on overflow.
[[nodiscard]] std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what);
/// a + b, or CheckpointError naming `what` on overflow.
[[nodiscard]] std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const std::string& what);

/// Offsets of one slice (keys + 1 values): offsets[0] == 0, non-decreasing,
/// the last == bytes. Returns the problem, or "" when they hold.
[[nodiscard]] std::string check_offsets(std::span<const std::uint64_t> offsets,
                                        std::uint64_t bytes);

/// The run list of a generation (columns of equal length R <=
/// kMaxRunsPerGeneration, levels < 2^32, distinct ids, sums of keys and
/// bytes without overflow). Throws CheckpointError naming the problem.
void check_run_list(std::span<const std::uint64_t> ids, std::span<const std::uint64_t> levels,
                    std::span<const std::uint64_t> keys, std::span<const std::uint64_t> bytes);

}  // namespace bloomshard::store
