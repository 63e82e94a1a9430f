// The end of a run in the one order of all inputs (core/order/file_order.hpp,
// OrderScope::kAcrossInputs): a kept copy that an earlier copy in another
// input retracted was written to its input's output already, so once every
// input is read (and split inputs are joined) those lines leave the outputs.
// A retracted copy is known by its input and its key hash: an output holds
// at most one line of a key (a whole input keeps only its first copy, and
// the join leaves a split input's later copies out), so the hash finds the
// line without walking the input, plain or compressed. Only the outputs
// that hold a retracted copy are rewritten.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"
#include "comm/communicator.hpp"
#include "core/order/file_order.hpp"

namespace bloomshard::app {

/// What the pass did, summed over the ranks.
struct RetractedCopiesPass {
  std::uint64_t outputs = 0;  ///< outputs rewritten
  std::uint64_t lines = 0;    ///< lines left out
};

/// Collective (every rank, the same `m`, once every input is read). Gathers
/// every rank's `mine` (KeyOrder::cross_input_retractions(); 24 bytes each,
/// one allgather); the rank (input index mod ranks) rewrites each output
/// that holds a retracted copy: every line is copied as it is (for .gz/.zst
/// decompressed and compressed again, in the input's compression) except
/// those whose key hash (InputFeed::key_hash_of) is retracted for that
/// input, into a temporary file renamed over the output (fsynced first
/// when `durable`). The lines left out count as dropped in `feed`
/// (count_left_out). Throws std::runtime_error on every rank if any rank
/// failed: a retracted copy missing from its output, or an I/O error (the
/// failing rank names the file first). Cost: one read and one write of the
/// rewritten outputs.
RetractedCopiesPass leave_out_retracted_copies(const comm::Communicator& world,
                                               const RunManifest& m,
                                               std::span<const core::CrossInputRetraction> mine,
                                               InputFeed& feed,
                                               const std::filesystem::path& output_dir,
                                               std::uint64_t max_line_bytes, bool durable);

}  // namespace bloomshard::app
