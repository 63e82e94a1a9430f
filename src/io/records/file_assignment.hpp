// Static assignment of input files to ranks, balanced by size. Every rank
// computes the same answer from the same sorted file list, so no exchange is
// needed. Pure function, no MPI.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/records/input_file.hpp"

namespace bloomshard::io {

/// Owner rank of each file (same order as `sizes`), by longest-processing-
/// time greedy: files by decreasing weight (ties: lower index first) each go
/// to the rank with the least total weight (ties: lower rank). A file's weight
/// is its size + 1, so empty files still spread. Max load is within 4/3 of
/// optimal. Throws std::invalid_argument unless num_ranks >= 1.
[[nodiscard]] std::vector<int> assign_files_to_ranks(std::span<const std::uint64_t> sizes,
                                                     int num_ranks);

/// Same, weighing each InputFile by its on-disk size.
[[nodiscard]] std::vector<int> assign_files_to_ranks(std::span<const InputFile> files,
                                                     int num_ranks);

}  // namespace bloomshard::io
