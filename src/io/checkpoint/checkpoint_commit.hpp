// The commit side of write_checkpoint (format 2), apart from the HDF5
// writing: every rank's own durability, the space check before HDF5 starts,
// and which run files garbage collection may delete after a commit. Plain
// POSIX, not collective; internal to the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::io {

/// fdatasync of `file` through a descriptor of our own (MPI-IO and HDF5
/// closed theirs): this rank's bytes durable. Returns the error text.
[[nodiscard]] std::string sync_own_bytes(const std::filesystem::path& file);

/// Reserves `bytes` in `dir`'s file system (posix_fallocate of a scratch
/// file, deleted at once), so a full disk is refused before HDF5 starts.
/// Returns the error text (naming strerror, e.g. "No space left on device").
[[nodiscard]] std::string reserve_space(const std::filesystem::path& dir, std::uint64_t bytes);

/// Run files of `state_dir` that no generation left after pruning to `keep`
/// up to `committed` references (`mine`: the committed generation's runs),
/// and stale run .tmp files. Reads the other generations' run lists
/// (headers only); if one cannot be read, returns nothing.
[[nodiscard]] std::vector<std::filesystem::path> unreferenced_runs(
    const std::filesystem::path& state_dir, std::uint64_t committed, int keep,
    std::span<const CheckpointRunRef> mine);

}  // namespace bloomshard::io
