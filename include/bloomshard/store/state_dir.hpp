// The files of a state directory, read side (pure filesystem, no MPI, no
// HDF5): generation files ckpt-<g>.h5, tier-2 run files run-<g>-<tag>.h5
// and the LATEST pointer (the decimal generation and a newline). A reader
// tries resume_candidates() in order and takes the first file that loads.
// Writing LATEST and pruning are the io layer's (io/checkpoint/checkpoint_generations.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace bloomshard::store {

/// <state_dir>/ckpt-<g>.h5
[[nodiscard]] std::filesystem::path generation_path(const std::filesystem::path& state_dir,
                                                    std::uint64_t g);
/// The generation LATEST names, or nullopt if LATEST is missing or is not a
/// decimal number (optionally followed by a newline). Does not check that
/// the generation's file exists.
[[nodiscard]] std::optional<std::uint64_t> read_latest(const std::filesystem::path& state_dir);
/// Generations whose file ckpt-<g>.h5 exists (no .tmp), newest first; empty
/// if the directory does not exist.
[[nodiscard]] std::vector<std::uint64_t> list_generations(const std::filesystem::path& state_dir);
/// Generations to try on resume: LATEST's if its file exists, then every
/// other existing generation, newest first.
[[nodiscard]] std::vector<std::uint64_t> resume_candidates(const std::filesystem::path& state_dir);

/// <state_dir>/run-<id / 2^32>-<id % 2^32 as 8 hex digits>.h5: a tier-2 run
/// file (format 2); the high half of an id is the generation that wrote it,
/// the low half a random tag, so a rewrite of a generation number never
/// reuses the name of a run an older generation references.
[[nodiscard]] std::filesystem::path run_path(const std::filesystem::path& state_dir,
                                             std::uint64_t id);
/// Run files in the state dir (committed and .tmp leftovers): their paths.
[[nodiscard]] std::vector<std::filesystem::path> list_run_files(
    const std::filesystem::path& state_dir);
/// The run id of a file name made by run_path (also "<name>.tmp"), if any.
[[nodiscard]] std::optional<std::uint64_t> run_id_of(const std::filesystem::path& file);

/// The generation of a file name ckpt-<g>.h5 (with `temporary`,
/// ckpt-<g>.h5.tmp), if the name has that form.
[[nodiscard]] std::optional<std::uint64_t> generation_of(std::string_view file_name,
                                                         bool temporary);

}  // namespace bloomshard::store
