// The lockstep layout of plain inputs (docs/inputs.md "The lockstep
// layout"): the inputs, in the walked order, are one sequence of
// line-aligned blocks of the run's batch bytes (io::line_aligned_blocks);
// rank r reads blocks r, r + P, r + 2P, ..., one a round, so round i covers
// blocks iP .. iP + P - 1, a contiguous stretch of the one input order, and
// the ranks' positions in it never drift apart by more than a round. A
// block's kept lines go to its input's mirrored output at the offset the
// kept bytes of the blocks before it give (LockstepOutputs: one allgather
// a round, then pwrite). Decisions stay the input-order strategy's
// (app/round/key_order.hpp). Only runs without --state use it: a cut
// would need a block cursor in the checkpoint format.
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
/// (keeps_input_order), no --state, neither --split-inputs nor
/// --split-min-bytes given (ranges asked for by name), and every one of
/// `inputs` uncompressed. Everything else (a .gz/.zst input, annotate mode,
/// paragraphs, minhash, --state, --kept-copy arrival, split options) keeps
/// the tasks layout. Pure: every rank decides the same from the same
/// manifest and options.
[[nodiscard]] bool lockstep_layout_applies(const DedupConfig& config,
                                           std::span<const InputProgress> inputs);
/// The same, with whether every input is uncompressed already known (the
/// plan's sample).
[[nodiscard]] bool lockstep_layout_applies(const DedupConfig& config, bool all_uncompressed);

/// Pure: `blocks` of each input in input order, numbered globally. `cut(i)`
/// gives input i's blocks (io::line_aligned_blocks); an empty input has none.
[[nodiscard]] std::vector<LockstepBlock> number_blocks(
    std::span<const std::vector<io::ByteRange>> per_input);

/// Collective: rank 0 cuts every input of `m` into blocks of `block_bytes`
/// and broadcasts the list, so every rank holds the same. Throws
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

/// Collective: rank 0 creates every input's mirrored output empty (an
/// existing one, --overwrite, is truncated to 0, so the final length is
/// exactly what the blocks write), then a barrier. Throws io::OutputError
/// on rank 0 (the job aborts).
void create_lockstep_outputs(const comm::Communicator& world, const RunManifest& m,
                             const std::filesystem::path& output_dir);

/// Where each block's kept bytes go: every rank tracks every input's output
/// length (and line count) the same way, from one allgather a round.
class LockstepOutputs {
 public:
  LockstepOutputs(std::vector<LockstepBlock> blocks, std::size_t inputs);

  /// Pure: with `staged` every rank's StagedBlock of this round in rank
  /// order, the place of each (zeros for none), advancing the lengths. The
  /// staged blocks must be the next ones not placed, in rank order (the
  /// lockstep contract): else std::logic_error naming the blocks, the same
  /// on every rank.
  [[nodiscard]] std::vector<BlockPlace> place_all(std::span<const StagedBlock> staged);

  /// Collective, once a round on every rank: this rank's StagedBlock goes
  /// to every rank (MPI_Allgather of three numbers); returns its place.
  [[nodiscard]] BlockPlace place(const comm::Communicator& world, const StagedBlock& mine);

  [[nodiscard]] std::uint64_t output_length(std::size_t input) const { return lengths_.at(input); }
  [[nodiscard]] std::size_t block_count() const noexcept { return blocks_.size(); }
  [[nodiscard]] std::span<const LockstepBlock> blocks() const noexcept { return blocks_; }

 private:
  std::vector<LockstepBlock> blocks_;
  std::vector<std::uint64_t> lengths_;  // per input: the bytes placed so far
  std::vector<std::uint64_t> lines_;    // and the lines read (kUnknownLines: one broke)
  std::size_t next_ = 0;                // the first block not placed yet
};

}  // namespace bloomshard::app
