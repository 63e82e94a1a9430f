// Which runs a checkpoint's new tier-2 run absorbs (tiered compaction, the
// LSM choice of Cassandra's size-tiered and RocksDB's universal styles).
// Pure and MPI-free: the store asks it once per checkpoint.
//
// The new run starts as the delta at level 0. While the newest runs hold
// fanout - 1 runs of the level it is at, it absorbs them and moves one level
// up. With equal deltas, level l holds at most fanout - 1 runs of fanout^l
// deltas each, so a key is rewritten once per level it climbs. Where that
// would exceed max_runs, the new run absorbs the newest whole level early.
// Tier-2 write amplification (run keys written / keys held) with equal
// deltas, fanout 4, max_runs 10 (RunCompaction.WriteAmplificationAndRunBound):
// 1.6 after 10 checkpoints, 3.25 after 64, 4.3 after 1000, 5.9 after 10^4;
// at most 4, 9, 10, 10 runs. The largest single merge is the whole history
// (when every level fills at once), at most once per fanout^levels
// checkpoints. A segment's last checkpoint may defer the cascade
// (CompactionPolicy::cap_only); the deferred runs stay at their level and the
// next plan absorbs them (a level holding >= fanout - 1 runs cascades).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace bloomshard::core {

/// Level of a run read from a format-1 checkpoint (the whole history in one
/// run): the first format-2 checkpoint absorbs it.
inline constexpr std::uint32_t kLegacyRunLevel = 0xFFFFFFFFU;
/// Level of a run that absorbed a legacy run: above every tier, so only the
/// max_runs cap merges it again.
inline constexpr std::uint32_t kBaseRunLevel = 32;

struct CompactionPolicy {
  std::uint32_t fanout = 4;   ///< runs of one level merged into one of the next (>= 2)
  std::size_t max_runs = 10;  ///< runs a generation may reference (>= 1)
  /// Merge only what max_runs requires, skipping the tiered cascade. For the
  /// last checkpoint of a job segment (finished, stopped by a signal, failed):
  /// compaction pays off in the lookups that follow, and those happen in the
  /// next segment, whose first checkpoint makes the same merge. A stop
  /// checkpoint inside a preemption grace window, and the end of a job
  /// before its time limit, so cost only the delta.
  bool cap_only = false;
};

/// How the new run is made: it merges the delta with the newest
/// `merge_runs` runs, and gets level `level`.
struct CompactionPlan {
  std::size_t merge_runs = 0;
  std::uint32_t level = 0;
  friend bool operator==(const CompactionPlan&, const CompactionPlan&) = default;
};

/// The plan for runs of these levels (oldest first). Throws
/// std::invalid_argument for fanout < 2 or max_runs < 1.
[[nodiscard]] CompactionPlan plan_compaction(std::span<const std::uint32_t> levels_oldest_first,
                                             const CompactionPolicy& policy);

}  // namespace bloomshard::core
