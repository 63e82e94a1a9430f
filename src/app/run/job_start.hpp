// What a dedup segment starts from, after the start decision (run_state.hpp):
// the filter, new or loaded collectively from the newest checkpoint
// generation that verifies (falling back to older ones of the same run), and
// the manifest of the inputs with their progress. Also the two pieces of
// file work a start does before its first round: cutting big inputs into
// ranges at a run's first start, and cutting the outputs of a resumed run
// back to what its checkpoint committed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "app/options/dedup_options.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// What the filter and the progress of a run start from.
struct Start {
  std::unique_ptr<core::TwoTierSet> set;
  RunManifest manifest;  ///< inputs with their starting progress; earlier rejects, counters
  std::uint64_t resumed_from = 0;     ///< generation loaded (0: none)
  std::uint64_t window_progress = 0;  ///< records/seconds of the loaded state's current slot
  /// --confirm-jaccard: the loaded state's forms of the owned slices (null
  /// for a fresh run or one that does not confirm).
  std::unique_ptr<core::BandConfirmer> forms;
};

/// Collective: the start of this segment under `plan`, the filter holding
/// the slices `owned` of `slices`; nullopt when no generation verifies
/// (rank 0 said so). Rank 0 prints one line per generation it skips.
[[nodiscard]] std::optional<Start> load_start(const comm::Communicator& world,
                                              const DedupConfig& config, const StartPlan& plan,
                                              const std::vector<io::InputFile>& files,
                                              core::SliceRange owned, std::uint32_t slices);

/// Collective, at a run's first start: rank 0 cuts the big uncompressed
/// inputs of `m` into ranges (probing each file near the cuts) and every
/// rank gets them. Annotate runs read whole files: their attribute records
/// are written per input in one pass.
void split_at_first_start(const comm::Communicator& world, const DedupConfig& config,
                          RunManifest& m);

/// Collective (rank 0 works, all wait), before anyone writes: rejects of a
/// killed attempt that no checkpoint counts go, counted ones are cut to
/// their committed length, and finished outputs to theirs.
void prepare_resumed_outputs(const comm::Communicator& world, const DedupConfig& config,
                             const RunManifest& m);

}  // namespace bloomshard::app
