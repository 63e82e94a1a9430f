// Big single files: when whole files do not balance over the
// ranks, the big uncompressed inputs are cut, at the run's first start, into
// line-aligned byte ranges (io/records/line_ranges.hpp) stored in the manifest; each
// range is a task of its own (own cursor, done flag, output part, reject
// part), so any rank count can resume them. Range 0 writes the mirrored
// output itself, range k > 0 writes OUTPUT/_ranges/<mirror path>.range-<k>
// (+ .rejects.jsonl); app/split/range_join.hpp puts the parts in place when every
// range is done. A split is not free: the join copies the output of ranges
// k > 0 once more, so only what balance needs is cut (plan_range_counts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"
#include "comm/communicator.hpp"

namespace bloomshard::app {

/// Folder of the range parts inside the output dir (like _rejects).
inline constexpr const char* kRangesDirName = "_ranges";

/// Output part of range k > 0 of the input mirrored at `relative_path`.
[[nodiscard]] std::filesystem::path range_output_path(const std::filesystem::path& output_dir,
                                                      const std::string& relative_path,
                                                      std::size_t range);
/// Reject part of range k > 0: reject lines with range-relative numbers.
[[nodiscard]] std::filesystem::path range_reject_path(const std::filesystem::path& output_dir,
                                                      const std::string& relative_path,
                                                      std::size_t range);

/// The balance a split aims at: the most loaded rank of longest-first
/// assignment (io::assign_files_to_ranks) reads at most this many times the
/// mean. On the 10M-record corpus at 2 ranks whole files give 1.052 and are
/// left whole; docs/inputs.md has the measurements behind the number.
inline constexpr double kSplitMaxImbalance = 1.10;

/// How many ranges each input is cut into (1: it stays whole), for inputs of
/// `sizes` bytes of which input i may be cut into at most max_counts[i]
/// ranges, at a first start on `ranks` ranks. The goal: the most loaded
/// rank of longest-first assignment (io::assign_files_to_ranks) of the
/// pieces within kSplitMaxImbalance x the mean load, or x the largest piece
/// that cannot be cut smaller when that is larger (a big .gz). None is cut
/// when whole files meet it; otherwise the input holding the largest piece
/// that may shrink gets one range more (its pieces size / count; ties: the
/// lower index), again and again, until the goal is met (then a count just
/// short of a multiple of the rank count, within kSplitMaxImbalance of it,
/// is rounded up to it unless that raises the largest load), or no input
/// may take more ranges (then the best balance seen). So only the big files
/// are cut, each into as few ranges as balance needs: 1 GB alone at 2 / 3 /
/// 4 / 16 ranks gives 2 / 3 / 4 / 16 ranges; an input never gets more than
/// size / (0.1 x mean) (such pieces always balance), which bounds the steps
/// by inputs + 10 x ranks. Cost: a longest-first assignment per step once
/// no piece is above the goal (40 ms for a 1 TB file at 16384 ranks). Pure.
/// Throws std::invalid_argument unless ranks >= 1 and the spans are as long.
[[nodiscard]] std::vector<std::uint64_t> plan_range_counts(
    std::span<const std::uint64_t> sizes, std::span<const std::uint64_t> max_counts, int ranks);

/// Rank 0 at a first start: cuts the inputs of `m` into line-aligned ranges
/// (probing each file near its cuts) as plan_range_counts() says, where an
/// uncompressed input larger than `min_bytes` may take up to
/// max(2, size / min_bytes) ranges (ranges of at least min_bytes, or half
/// of it for a file under twice it) and any other stays whole; a file that
/// gives one range stays whole. Throws io::InputError if a file cannot be
/// probed.
void split_large_inputs(RunManifest& m, int ranks, std::uint64_t min_bytes);

/// Tasks ("units") of a manifest: one per whole input, one per range of a
/// split input, numbered in input order. Entry i is input i's first unit;
/// the last entry is the unit count.
[[nodiscard]] std::vector<std::size_t> first_units(const RunManifest& m);

/// Collective: `base` with every rank's task states (InputFeed::commit())
/// applied: the manifest of a cut, the same on every rank. Inputs (or
/// ranges) no rank read in this segment stay as `base` says. `retracted`:
/// the order tags this rank retracted as owner in this segment
/// (InputFeed::retracted()); every rank's are added to their ranges'
/// RangeProgress::retracted (one MPI_Allgatherv of them all). Throws
/// std::logic_error on every rank if a tag names no range k > 0 of a split
/// input.
[[nodiscard]] RunManifest merge_cut(const comm::Communicator& comm, const RunManifest& base,
                                    std::span<const FileState> states,
                                    std::span<const core::OrderTag> retracted = {});

}  // namespace bloomshard::app
