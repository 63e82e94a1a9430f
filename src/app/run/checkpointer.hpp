// The consistent cut: at a round boundary every rank makes its outputs and
// reject file durable and reports its cursors; the filter, the cursors and
// the output lengths then go into one checkpoint generation together, and
// each rank re-bases its tier 2 on the new file (dropping the delta, so
// resident memory falls back to the Bloom bits).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/options/checkpoint_options.hpp"
#include "app/options/key_options.hpp"
#include "app/options/option_groups.hpp"
#include "app/options/window_options.hpp"
#include "app/report/job_metrics.hpp"
#include "app/round/key_order.hpp"
#include "app/run/run_manifest.hpp"
#include "app/split/lockstep_layout.hpp"
#include "app/state/window_slots.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"
#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {

/// Name of a rank's reject file inside OUTPUT/_rejects for a segment that
/// started from generation `resumed_from` (0: a fresh start). Each segment
/// writes its own files, so a resume on another rank count never appends to
/// a file another rank wrote.
[[nodiscard]] std::string reject_file_name(int rank, std::uint64_t resumed_from);

/// The option groups a Checkpointer reads: where and how generations are
/// written, and the key scheme and window each generation's header records.
/// A DedupConfig converts to it.
using CheckpointerConfig = OptionGroups<CheckpointOptions, KeyOptions, WindowOptions>;

class Checkpointer {
 public:
  /// `base` describes the run as of its start: every input (with the
  /// progress a resumed run starts from), the reject files of earlier
  /// segments, and their counters. `resumed_from` is the generation this
  /// segment started from (0: fresh), which names its reject files;
  /// `next_generation` the number of the first generation it writes.
  Checkpointer(const comm::Communicator& comm, const CheckpointerConfig& config, RunManifest base,
               std::uint64_t resumed_from, std::uint64_t next_generation);

  /// Collective: writes the next generation from `feed` (after a completed
  /// round), `set` and the segment's counters, then re-bases `set` on it.
  /// Throws on every rank if any rank failed (nothing is committed then).
  /// `segment_ends`: no round follows in this process (finished, stopped,
  /// failed), so the tiered compaction cascade is deferred to the next
  /// segment (core::CompactionPolicy::cap_only) and `set` is not re-based
  /// (it keeps its delta; only its counts may be read afterwards).
  void write(InputFeed& feed, core::TwoTierSet& set, const comm::RouterStats& router,
             std::uint64_t rounds, bool finished, bool segment_ends);

  /// Rank 0 (others return at once): waits for the background deletion of
  /// old generations that write() started, warning on stderr if it failed.
  /// Called before a run reports its end (finished, or checkpointed on a
  /// signal), so a run that said so holds at most --keep-generations.
  void wait_for_pruning() const;

  /// Split input `input` was joined (app/split/range_join.hpp) into a mirrored
  /// output of `output_length` bytes: later generations record it done.
  void note_joined(std::size_t input, std::uint64_t output_length);

  /// Sets the run's fence (io::CheckpointWriteOptions::before_commit): rank 0
  /// calls it right before each generation is committed; it throws when a
  /// newer attempt of the run has taken over, and nothing is committed.
  void set_commit_fence(std::function<void()> fence) { fence_ = std::move(fence); }

  /// A windowed job's slot clock (app/state/window_slots.hpp): its progress goes
  /// into every generation's header. Not owned; must outlive write() calls.
  void set_slot_clock(const SlotClock* clock) { slot_clock_ = clock; }
  /// --confirm-jaccard: the owner's forms, written beside tier 2's keys
  /// (null: the run does not confirm).
  void set_band_forms(const core::BandConfirmer* forms) { band_forms_ = forms; }
  /// The run's key order: in input order every generation saves its
  /// input_order_cut() in the manifest and each rank's remembered_copies()
  /// and cross_input_retractions() as the generation's /input_order rows
  /// and retracted rows, written collectively (null, or another order:
  /// nothing). Not owned; must outlive write() calls.
  void set_key_order(const KeyOrder* order) { order_ = order; }
  /// The lockstep layout's placed blocks (app/split/lockstep_layout.hpp):
  /// the cut's input states come from it (rank 0 gives them, every rank
  /// holds the same), not from the feed's block states, and an input it
  /// skipped part of gets the skip's cursor. write() then needs
  /// lockstep->can_cut(). Not owned; must outlive write() calls.
  void set_lockstep(const LockstepOutputs* lockstep) { lockstep_ = lockstep; }
  /// The end pass of the input order cut the outputs `cuts` (into their
  /// temporary files): later generations record their cut lengths, no
  /// retraction and no remembered copy (every input is read), and, while
  /// `renames_pending`, the cuts themselves, so that a resume renames what
  /// a kill left (app/round/retracted_copies.hpp commit_cut_outputs).
  void set_end_pass(std::vector<CutOutput> cuts, bool renames_pending);

  [[nodiscard]] std::uint64_t written() const noexcept { return written_; }
  [[nodiscard]] double seconds() const noexcept { return seconds_; }
  /// The checkpoints of this segment (the same on every rank).
  [[nodiscard]] const CheckpointMetrics& metrics() const noexcept { return metrics_; }

 private:
  comm::Communicator comm_;
  CheckpointerConfig config_;
  RunManifest base_;
  std::uint64_t resumed_from_;
  std::uint64_t generation_;
  std::function<void()> fence_;
  const SlotClock* slot_clock_ = nullptr;
  const core::BandConfirmer* band_forms_ = nullptr;
  const KeyOrder* order_ = nullptr;
  const LockstepOutputs* lockstep_ = nullptr;
  std::optional<std::vector<CutOutput>> end_pass_;  // set_end_pass()'s cuts
  bool renames_pending_ = false;
  std::uint64_t written_ = 0;
  double seconds_ = 0;
  CheckpointMetrics metrics_;
};

}  // namespace bloomshard::app
