// The dedup job's side of rolling windows (`dedup --window N`;
// the slot arithmetic is core/window/slot_window.hpp): parsing the options,
// refusing a state whose window differs, stamping the window into a
// checkpoint header, opening slots at a run's start, and the per-round
// clock that says when a --slot-records / --slot-every slot is full. With
// --confirm-jaccard the owner's confirmation forms follow the slots: a key
// whose last slot expires loses its form with it.
// Docs: docs/commands.md ("Windows"), docs/checkpoint-format.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "core/window/slot_window.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {

/// The job's window from --window N (0: none), --slot-records M (0: not
/// given) and --slot-every DURATION ("": not given). Throws
/// std::invalid_argument naming the option (a slot rule without --window,
/// both slot rules, N out of range, a bad duration).
[[nodiscard]] core::WindowSpec parse_window_options(std::uint32_t window,
                                                    std::uint64_t slot_records,
                                                    const std::string& slot_every);

/// Why a job with window `job` may not continue the state of header `h`
/// (resume or incremental run), or "": the window and its slot rule are part
/// of the state and never change (a state without a window cannot get one,
/// its keys carry no slot; a windowed state cannot drop it).
[[nodiscard]] std::string window_refusal(const io::CheckpointHeader& h,
                                         const core::WindowSpec& job);

/// Fills h.window, h.window_slot, h.window_slot_progress from the set's
/// window (nothing for a set without one).
void put_window(const core::WindowSpec& w, const core::TwoTierSet& set, std::uint64_t progress,
                io::CheckpointHeader& h);

/// When a windowed job's slots end. Collective use: every rank calls due()
/// once per round with the same arguments, and open_next() together.
class SlotClock {
 public:
  /// `progress` is what the state's current slot already holds (records or
  /// seconds; 0 for a fresh slot).
  SlotClock(const core::WindowSpec& w, std::uint64_t progress);

  /// At a job's start, before its first round (collective): a fresh windowed
  /// set gets slot 0; an incremental run on a finished state of per-run
  /// slots opens the next slot; a state whose current slot was already full
  /// at its last checkpoint (a segment that stopped right at a boundary)
  /// opens the next one, as the uninterrupted job would have. `fresh` and
  /// `incremental` describe the start; `forms` as for open_next.
  void start(core::TwoTierSet& set, bool fresh, bool incremental,
             core::BandConfirmer* forms = nullptr);

  /// Collective, once per round: true when the current slot is full.
  /// `segment_records` is the records all ranks read in this segment so far
  /// (summed). --slot-every uses rank 0's clock, agreed by an allreduce (only
  /// then does this call communicate).
  [[nodiscard]] bool due(const comm::Communicator& comm, std::uint64_t segment_records);
  /// Opens the next slot after the checkpoint that flushed the delta. With
  /// `forms` (a confirming run: the owner's forms of the set's keys), the
  /// form of each key of the expired slots that no live slot holds is
  /// forgotten, so that its next record is its first; a key refreshed into
  /// a newer slot keeps its form. Costs one pass over the expired runs'
  /// keys of the owned slices (16 + 8 + 4 bytes a key held meanwhile) and
  /// one over the remaining forms.
  void open_next(core::TwoTierSet& set, core::BandConfirmer* forms = nullptr);
  /// Records or seconds the current slot holds as of the last due() (the
  /// same on every rank): what a checkpoint stores.
  [[nodiscard]] std::uint64_t progress() const noexcept { return progress_; }
  [[nodiscard]] const core::WindowSpec& spec() const noexcept { return spec_; }

 private:
  core::WindowSpec spec_;
  std::uint64_t progress_ = 0;       // in the current slot, at the last due()
  std::uint64_t base_progress_ = 0;  // at the slot's start in this segment
  std::uint64_t base_records_ = 0;   // segment records when the slot started here
  std::chrono::steady_clock::time_point base_time_ = std::chrono::steady_clock::now();
};

}  // namespace bloomshard::app
