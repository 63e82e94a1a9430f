// The join of a split input: once every range of it is done, the
// output parts of ranges k > 0 are written into the mirrored output (which
// range 0 wrote) at the sum of the earlier ranges' output lengths, so the
// file is byte for byte what one reader of the whole input writes; the
// ranges' reject parts go to the reject files with absolute line numbers.
// Idempotent: a kill during a join leaves the input unjoined at the last
// checkpoint, and the next attempt writes the same bytes to the same places.
#pragma once

#include <filesystem>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"
#include "comm/communicator.hpp"

namespace bloomshard::app {

/// Collective (every rank, the same `cut`, e.g. merge_cut() of the last
/// round). Joins every split input of `cut` that is not done and whose
/// ranges all are: part k is copied by rank (its unit number mod ranks), its
/// rejects are appended, renumbered, to that rank's reject file (through
/// `feed`), everything is fsynced with `durable`, all ranks agree, and rank
/// 0 cuts the mirrored output to the joined length. Marks those inputs done
/// in `cut` (output_length = joined length) and returns their indexes.
/// Throws on every rank if any rank failed (the failing rank names why).
std::vector<std::size_t> join_split_inputs(const comm::Communicator& comm, RunManifest& cut,
                                           InputFeed& feed, const std::filesystem::path& output_dir,
                                           bool durable);

/// Rank 0, once a generation records the joins (or at once without a
/// state): deletes the parts of every joined input of `m`, and the
/// _ranges folder when nothing else is left in it. Best effort.
void remove_joined_parts(const RunManifest& m, const std::filesystem::path& output_dir);

/// Rewrites the "line" numbers of reject lines (io::append_reject_json) of
/// `file` by adding `first_line - 1`: a range's range-relative numbers made
/// absolute. Lines that are not rejects of `file` pass unchanged. Pure.
[[nodiscard]] std::string renumber_rejects(std::string_view lines, std::string_view file,
                                           std::uint64_t first_line);

}  // namespace bloomshard::app
