// Which unfinished inputs of a run one rank reads: the files, and the open
// ranges of split inputs (app/split/split_inputs.hpp), are balanced over the ranks
// by size (io::assign_files_to_ranks), the same split on every rank without a
// message. Shared by `dedup` and `query`.
#pragma once

#include <cstdint>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"

namespace bloomshard::app {

/// Rank `rank` of `ranks`'s share of the inputs (and ranges) of `m` that are
/// not done, in list order, each starting at its saved cursor; a range
/// weighs its unread bytes. `total_bytes` gets the
/// on-disk size of all inputs (done ones too), for progress.
[[nodiscard]] std::vector<FileTask> tasks_of_rank(const RunManifest& m, int rank, int ranks,
                                                  std::uint64_t& total_bytes);

}  // namespace bloomshard::app
