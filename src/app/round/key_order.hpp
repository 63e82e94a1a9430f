// How a round keeps the first copy of a key: the split-input ordering as one
// strategy, chosen once per run (make_key_order) instead of a branch at each
// step of every round.
//  - In batch order (every run without open split inputs): keys travel as
//    they are; the router combines a batch's later copies, the owner decides.
//  - In file order (split inputs, core/order/file_order.hpp): keys travel with
//    their order tags (order_tag_wire.hpp); a batch's later copies from one
//    input stay home; the owner remembers kept copies from later ranges and
//    retracts one when an earlier copy arrives, as one reader would decide.
//    Whole records only: a paragraph's or a window's verdicts never flip.
//  - In input order (runs of records or paragraphs, without a window or with
//    one slot a run, docs/inputs.md "Which copy of a duplicate is kept"): as in file order,
//    but every key is tagged, the owner decides in tag order, retracts
//    across inputs, and forgets behind the watermark; the copies retracted
//    from other inputs leave the outputs at the run's end, or in annotate
//    mode get their attribute lines flagged (retracted_copies.hpp); a
//    retracted paragraph is cut from its record's line
//    (retracted_paragraphs.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "app/feed/input_feed.hpp"
#include "app/options/dedup_options.hpp"
#include "app/round/round_batch.hpp"
#include "app/run/run_manifest.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/router.hpp"

namespace bloomshard::app {

class KeyOrder {
 public:
  virtual ~KeyOrder() = default;

  /// The keys this rank routes for `batch` (valid until the next call).
  [[nodiscard]] virtual std::span<const core::KeyRef> keys_to_route(const RoundBatch& batch,
                                                                    InputFeed& feed) = 0;

  /// Where route() writes the verdicts of keys_to_route(); `batch_verdicts`
  /// has one slot per key of the batch.
  [[nodiscard]] virtual std::span<core::Verdict> route_verdicts(
      std::span<core::Verdict> batch_verdicts) = 0;

  /// The owner's decision on its share `keys` of a sub-round.
  virtual void decide(core::TwoTierSet& set, std::span<const core::KeyRef> keys,
                      std::span<core::Verdict> verdicts) = 0;

  /// After route(): completes `batch_verdicts` and hands this round's
  /// retractions to `feed`.
  virtual void settle(std::span<core::Verdict> batch_verdicts, InputFeed& feed) = 0;

  /// Collective, once before the first round of a resumed run: remembers
  /// the kept copies the checkpoint committed (file_order_rebuild.hpp).
  /// Returns the copies this rank walked (0 in batch order).
  virtual std::uint64_t remember_committed(comm::KeyRouter& router, const RunManifest& m,
                                           InputFeed& feed, const std::filesystem::path& output_dir,
                                           std::uint64_t budget) = 0;

  /// Bytes of the answer the owner gives each key beside its verdict
  /// (comm::RouteOptions::answer_bytes); 0 for every order but the
  /// confirming one in annotate mode.
  [[nodiscard]] virtual std::size_t answer_bytes() const noexcept { return 0; }
  /// With answer_bytes() > 0: the answers of the last decide(), in its
  /// key order, into `out` (answer_bytes() a key).
  virtual void take_answers(std::span<std::uint8_t> /*out*/) {}

  /// True for the file-order strategy.
  [[nodiscard]] virtual bool in_file_order() const noexcept = 0;
  /// True for the input-order strategy (the one order of all inputs).
  [[nodiscard]] virtual bool in_input_order() const noexcept { return false; }

  /// Collective, after each round's agreement: the input order's watermark
  /// (one MPI_Allreduce of 8 bytes); nothing for the others.
  virtual void after_round(const comm::Communicator&, const InputFeed&) {}

  /// Kept copies this rank retracted as owner for an earlier copy in
  /// another input (input order only): their lines leave the outputs at
  /// the run's end (app/round/retracted_copies.hpp).
  [[nodiscard]] virtual std::span<const core::CrossInputRetraction> cross_input_retractions()
      const {
    return {};
  }

  /// Input order (every rank calls it at a checkpoint cut): what the owners
  /// know beyond tier 2 for the manifest's input_order, the watermark; the
  /// kept copies and the retractions are each rank's own, written as rows
  /// of the generation (remembered_copies(), cross_input_retractions()).
  /// No communication. Every other order: nullopt.
  [[nodiscard]] virtual std::optional<InputOrderProgress> input_order_cut(
      const comm::Communicator&) const {
    return std::nullopt;
  }
  /// Input order: this owner's remembered kept copies (core::FileOrder::
  /// remembered(), 24 bytes each), for a checkpoint; empty in other orders.
  [[nodiscard]] virtual std::vector<core::CrossInputRetraction> remembered_copies() const {
    return {};
  }
  /// Input order, once before the first round of a resumed run (on any
  /// rank count): the watermark, and the saved kept copies and the
  /// retractions still waiting for the end pass whose key `router` gives
  /// this rank. No communication (a version-3 state's rows are each
  /// rank's owned slices' already; older states' lists every rank's).
  virtual void restore_input_order(const InputOrderProgress&, const comm::KeyRouter&, int) {}
  /// In input order, before the first round: the inputs are read in the
  /// lockstep layout (app/split/lockstep_layout.hpp), each by several ranks,
  /// so a copy in the watermark's own input is not final until the
  /// watermark passes it, and a copy retracted by an earlier one of its own
  /// input leaves at the end pass (core::FileOrder::set_inputs_read_by_many).
  /// The watermark then moves a round at a time and the table is pruned
  /// after every round: it holds about one round's kept keys.
  virtual void read_in_lockstep() {}
  /// Whether read_in_lockstep() took: the input order across inputs, read
  /// in lockstep. Its rounds of one sub-round route the batch's keys as
  /// they are, without tags, and are decided in the order they arrive
  /// (Round::route_untagged()).
  [[nodiscard]] virtual bool reads_in_lockstep() const noexcept { return false; }
  /// Before a round's first sub-round (every rank the same value): how many
  /// sub-rounds it is cut into. In lockstep a round of one sub-round is
  /// decided without the owner's table (key_order.cpp says why).
  virtual void plan_subrounds(std::uint64_t /*subrounds*/) {}
  /// Rounds decided without the owner's table so far (plan_subrounds()).
  [[nodiscard]] virtual std::uint64_t rounds_without_table() const noexcept { return 0; }
};

/// Whether a run keeps the one order of all inputs (docs/inputs.md "Which
/// copy of a duplicate is kept"): --kept-copy first in a run of whole
/// records or paragraphs (every paragraph key tagged,
/// core/order/paragraph_order.hpp; whole inputs), in filter or annotate mode
/// (there the end pass flags the retracted copies' attribute lines), with or
/// without --state (a checkpoint saves the owners' memory), with no window
/// or a window of one slot a run (the default slot rule: the whole run is
/// the current slot, so a kept copy is only ever retracted for an earlier
/// copy of a key new to the window; --slot-records/--slot-every are refused,
/// their slots end where rounds end). The one list is input_order_limit().
[[nodiscard]] bool keeps_input_order(const DedupConfig& config);

/// Keys an owner's input-order memory is sized for up front: its share of
/// all input bytes at 128 bytes a record, at most 256K keys (a 12 MiB
/// table). The watermark keeps it to the kept keys of the inputs read ahead
/// of it (at most 506K an owner on the 10M-record benchmark at 2 ranks: one
/// doubling to 24 MiB); a larger reserve is memory held for nothing.
[[nodiscard]] std::size_t input_order_reserve(const RunManifest& m, std::uint32_t ranks);

/// The input-order strategy alone, its memory sized for `reserve` keys.
[[nodiscard]] std::unique_ptr<KeyOrder> make_input_order(std::size_t reserve);

/// Whether a run keeps file order: a filter run of whole records, with no
/// window, and an open split input in `m` (every rank decides the same).
[[nodiscard]] bool keeps_file_order(const DedupConfig& config, const RunManifest& m);

/// Keys an owner's file-order memory is sized for up front: its share of
/// the later ranges of open split inputs at 128 bytes a record (a guess
/// between short URL lines and long documents; growth is only slower,
/// never wrong), at most 1M keys (a 48 MiB table).
[[nodiscard]] std::size_t file_order_reserve(const RunManifest& m, std::uint32_t ranks);

/// The strategy of a run: the confirming batch order under --unit minhash
/// with --confirm-jaccard (confirmed_band_order.hpp), else in input order when keeps_input_order()
/// (then `feed` tags every key), else in file order when keeps_file_order() (then `feed` tags its
/// keys, and the memory is sized for `ranks`), else in batch order.
/// `lockstep_round_bytes` (nonzero: the lockstep layout, app/split/lockstep_layout.hpp, which
/// reads that many input bytes a round over all ranks): the input order then reads in lockstep
/// (KeyOrder::read_in_lockstep) and its table is sized for one round's keys.
[[nodiscard]] std::unique_ptr<KeyOrder> make_key_order(const DedupConfig& config,
                                                       const RunManifest& m, std::uint32_t ranks,
                                                       InputFeed& feed,
                                                       std::uint64_t lockstep_round_bytes = 0);

/// The batch-order strategy alone (tests, and runs without split inputs).
[[nodiscard]] std::unique_ptr<KeyOrder> make_batch_order();

/// The file-order strategy alone, its memory sized for `reserve` keys.
[[nodiscard]] std::unique_ptr<KeyOrder> make_file_order(std::size_t reserve);

}  // namespace bloomshard::app
