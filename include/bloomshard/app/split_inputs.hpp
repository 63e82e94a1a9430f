// Big single files (issue 12): an uncompressed input larger than
// --split-min-bytes is cut, at the run's first start, into line-aligned byte
// ranges (io/line_ranges.hpp) stored in the manifest; each range is a task
// of its own (own cursor, done flag, output part, reject part), so any rank
// count can resume them. Range 0 writes the mirrored output itself, range
// k > 0 writes OUTPUT/_ranges/<mirror path>.range-<k> (+ .rejects.jsonl);
// app/range_join.hpp puts the parts in place when every range is done.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/app/input_feed.hpp"
#include "bloomshard/app/run_manifest.hpp"
#include "bloomshard/comm/communicator.hpp"

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

/// Rank 0 at a first start: splits every uncompressed input of `m` larger
/// than `min_bytes` into io::range_count_for(..., ranks, min_bytes) line-
/// aligned ranges (probing the file near each cut); a file that gives one
/// range stays whole. Throws io::InputError if a file cannot be probed.
void split_large_inputs(RunManifest& m, int ranks, std::uint64_t min_bytes);

/// Tasks ("units") of a manifest: one per whole input, one per range of a
/// split input, numbered in input order. Entry i is input i's first unit;
/// the last entry is the unit count.
[[nodiscard]] std::vector<std::size_t> first_units(const RunManifest& m);

/// Collective: `base` with every rank's task states (InputFeed::commit())
/// applied: the manifest of a cut, the same on every rank. Inputs (or
/// ranges) no rank read in this segment stay as `base` says.
[[nodiscard]] RunManifest merge_cut(const comm::Communicator& comm, const RunManifest& base,
                                    std::span<const FileState> states);

}  // namespace bloomshard::app
