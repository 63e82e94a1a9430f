// Pre-flight of a dedup (or annotate) job, before its lock is taken and
// before anything is created: every path the job writes can be written
// (path_preflight.hpp), neither the output nor the state dir overlaps an
// input (the lock file would land in the inputs), and a run that would be
// refused for an output dir in use is refused now, without leaving a lock
// file in a directory that is not ours. Rank 0 only (filesystem work).
#pragma once

#include "app/guard/output_guard.hpp"
#include "app/options/dedup_options.hpp"

namespace bloomshard::app {

/// The refusal (message and exit code: 2 for a path that cannot be
/// written or overlaps an input, 4 for an output dir in use) or an empty
/// OutputCheck. Never throws for user errors.
[[nodiscard]] OutputCheck preflight_dedup(const DedupConfig& config);

}  // namespace bloomshard::app
