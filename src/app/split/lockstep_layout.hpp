// The lockstep layout of plain inputs (docs/inputs.md "The lockstep
// layout"): the inputs, in the walked order, are one sequence of
// line-aligned blocks of the run's batch bytes (io::line_aligned_blocks);
// rank r reads blocks r, r + P, r + 2P, ..., one a round, so round i covers
// blocks iP .. iP + P - 1, a contiguous stretch of the one input order, and
// the ranks' positions in it never drift apart by more than a round. A
// block's kept lines go to its input's mirrored output at the offset the
// kept bytes of the blocks before it give (LockstepOutputs: one allgather
// a round, then pwrite). Decisions stay the input-order strategy's
// (app/round/key_order.hpp). With --state a cut after a round is an
// ordinary cut of the manifest (placed blocks are a prefix of the one
// order: inputs done, at most one read up to a block's end, the rest
// untouched: LockstepOutputs::cut_states), and a state of that frontier
// shape resumes in lockstep on any rank count (lockstep_resumable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/options/dedup_options.hpp"
#include "app/run/run_manifest.hpp"
#include "app/split/block_place.hpp"
#include "comm/communicator.hpp"
#include "io/records/line_ranges.hpp"

namespace bloomshard::app {

/// One block: input `input` (index in the manifest), bytes [begin, end).
struct LockstepBlock {
  std::size_t input = 0;
  io::ByteRange bytes;
  friend bool operator==(const LockstepBlock&, const LockstepBlock&) = default;
};

/// The one place that says whether a run reads its inputs in lockstep:
/// dedup in filter mode, --unit record, the first copy in input order kept
/// (keeps_input_order), neither --split-inputs nor --split-min-bytes given
/// (ranges asked for by name), every input of `m` uncompressed, and `m`
/// lockstep_resumable() (a fresh manifest always is). Everything else (a
/// .gz/.zst input, annotate mode, paragraphs, minhash, --kept-copy
/// arrival, split options, a state cut in the tasks layout) keeps the
/// tasks layout. Pure: every rank decides the same from the same manifest
/// and options.
[[nodiscard]] bool lockstep_layout_applies(const DedupConfig& config, const RunManifest& m);
/// The options' and inputs' part alone, with whether every input is
/// uncompressed already known (the plan's sample of a new run).
[[nodiscard]] bool lockstep_layout_applies(const DedupConfig& config, bool all_uncompressed);

/// Pure: whether a run of manifest `m` can go on in lockstep: no input has
/// ranges, the inputs are done, then at most one started one (cursor or
/// output past 0, not done), then untouched ones (cursor {0, 0}, output 0,
/// not skipped), and no kept copy waits in the input order's table
/// (kept_rows 0: a lockstep cut leaves none). A lockstep cut always has
/// this shape; so has a new run's, an incremental run's on a finished
/// state, and a tasks-layout cut that happens to (then its records are a
/// prefix of the one order too, and reading on in lockstep keeps the same
/// first copies).
[[nodiscard]] bool lockstep_resumable(const RunManifest& m);

/// Pure: `whole` (an input's blocks from byte 0, io::line_aligned_blocks)
/// from byte `start` on (a line start): blocks ending at or before it
/// dropped, the one across it begun at it.
[[nodiscard]] std::vector<io::ByteRange> blocks_from(std::vector<io::ByteRange> whole,
                                                     std::uint64_t start);

/// Pure: `blocks` of each input in input order, numbered globally. `cut(i)`
/// gives input i's blocks (io::line_aligned_blocks); an empty input has none.
[[nodiscard]] std::vector<LockstepBlock> number_blocks(
    std::span<const std::vector<io::ByteRange>> per_input);

/// Collective: rank 0 cuts every input of `m` not done into blocks of
/// `block_bytes` (a started one from its cursor's offset: blocks_from) and
/// broadcasts the list, so every rank holds the same. Throws
/// std::runtime_error on every rank (naming the input) when rank 0 cannot
/// read one.
[[nodiscard]] std::vector<LockstepBlock> agree_on_blocks(const comm::Communicator& world,
                                                         const RunManifest& m,
                                                         std::uint64_t block_bytes);

/// Pure: rank `rank` of `ranks`'s tasks: blocks b with b % ranks == rank,
/// in order, each a FileTask with `block` set. `total_bytes` gets the size
/// of all inputs, for progress.
[[nodiscard]] std::vector<FileTask> lockstep_tasks_of_rank(std::span<const LockstepBlock> blocks,
                                                           const RunManifest& m, int rank,
                                                           int ranks, std::uint64_t& total_bytes);

/// Collective: rank 0 makes the mirrored output of every input of `m` not
/// done exactly its committed output_length long (0 for a new run: an
/// existing one, --overwrite, is truncated, so the final length is exactly
/// what the blocks write; a resume cuts what a kill wrote past the cut),
/// creating the missing ones (`durable`: their directory entries synced),
/// then a barrier. Throws io::OutputError on rank 0 (the job aborts), also
/// for a missing output with a committed length.
void prepare_lockstep_outputs(const comm::Communicator& world, const RunManifest& m,
                              const std::filesystem::path& output_dir, bool durable);

/// Where each block's kept bytes go: every rank tracks every input's output
/// length (and line count) the same way, from one allgather a round.
class LockstepOutputs {
 public:
  /// A new run's: every output empty, no line read.
  LockstepOutputs(std::vector<LockstepBlock> blocks, std::size_t inputs);
  /// Going on from manifest `m` (lockstep_resumable): the outputs at its
  /// committed lengths, its started input at its cursor's line count, and
  /// `blocks` those of agree_on_blocks(m).
  LockstepOutputs(std::vector<LockstepBlock> blocks, const RunManifest& m);

  /// Pure: with `staged` every rank's StagedBlock of this round in rank
  /// order, the place of each (zeros for none), advancing the lengths. The
  /// staged blocks must be the next ones not placed, in rank order (the
  /// lockstep contract): else std::logic_error naming the blocks, the same
  /// on every rank.
  [[nodiscard]] std::vector<BlockPlace> place_all(std::span<const StagedBlock> staged);

  /// Collective, once a round on every rank: this rank's StagedBlock goes
  /// to every rank (MPI_Allgather of three numbers); returns its place.
  [[nodiscard]] BlockPlace place(const comm::Communicator& world, const StagedBlock& mine);

  /// Pure: the FileState of every input not done at the start, as the
  /// blocks placed so far leave it: done once all its blocks are placed
  /// (cursor {its lines, its last block's end}), read up to its last placed
  /// block's end, or as it started; output_length its bytes placed; no
  /// prefix digest (no rank read its prefix). The same on every rank: pass
  /// it to merge_cut() from one rank only. nullopt while an input not done
  /// has unknown lines (a block of it broke: --on-input-error skip): such a
  /// cut is not written until the input is done (can_cut()).
  [[nodiscard]] std::optional<std::vector<FileState>> cut_states() const;
  /// Whether cut_states() gives a cut now.
  [[nodiscard]] bool can_cut() const;

  [[nodiscard]] std::uint64_t output_length(std::size_t input) const { return lengths_.at(input); }
  [[nodiscard]] std::size_t block_count() const noexcept { return blocks_.size(); }
  [[nodiscard]] std::span<const LockstepBlock> blocks() const noexcept { return blocks_; }

 private:
  std::vector<LockstepBlock> blocks_;
  std::vector<std::uint64_t> lengths_;  // per input: the bytes placed so far
  std::vector<std::uint64_t> lines_;    // and the lines read (kUnknownLines: one broke)
  std::size_t next_ = 0;                // the first block not placed yet
  // Per input, from the start: done already (no blocks), where its first
  // block begins, and its blocks' range in blocks_.
  std::vector<bool> done_before_;
  std::vector<std::uint64_t> start_offset_;
  std::vector<std::size_t> first_block_;
  std::vector<std::size_t> end_block_;

  void index_blocks();
};

}  // namespace bloomshard::app
