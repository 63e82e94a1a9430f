// The end of a run in the one order of all inputs (core/order/file_order.hpp,
// OrderScope::kAcrossInputs): a kept copy that an earlier copy in another
// input retracted was written to its input's output already, so once every
// input is read (and split inputs are joined) those lines leave the outputs.
// A retracted copy is known by its order tag (input and input offset) and
// its key hash. An uncompressed output is cut by byte ranges: the offset
// map its writer kept places each retracted record's line
// (retracted_line_place.hpp), or where there is none or it fails a check,
// the input walked beside it (retracted_line_cut.hpp); either way the
// line's key is checked against the hash. A compressed output
// holds at most one line of a key (a whole input keeps only its first copy,
// and the join leaves a split input's later copies out), so the hash finds
// the line there, each line decompressed and parsed. Only the outputs that
// hold a retracted copy are rewritten. In annotate mode the lines stay and
// are flagged a duplicate instead (retracted_annotations.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "app/feed/annotate_mode.hpp"
#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "comm/communicator.hpp"
#include "core/order/file_order.hpp"

namespace bloomshard::app {

/// How the end pass rewrites an output.
struct EndPassOptions {
  std::uint64_t max_line_bytes = 0;  ///< the run's line limit (its readers')
  bool durable = false;              ///< fsync what it writes (a run with --state)
  /// Annotate mode: the attribute files' format; a retracted copy's line is
  /// flagged a duplicate (retracted_annotations.hpp) instead of cut.
  std::optional<AnnotateFormat> annotate;
  /// The run's compression levels (0: the codec's default) for what is
  /// written again compressed, so that it is what a run that wrote it once
  /// would have written.
  int gzip_level = 0;
  int zstd_level = 0;
  /// --unit paragraph: the key scheme and the hash seed; a retraction
  /// names a paragraph, cut from its record's written line
  /// (retracted_paragraphs.hpp) instead of the line being left out.
  std::optional<core::KeyScheme> paragraphs;
  std::uint64_t hash_seed = 0;
};

/// What the pass did, summed over the ranks.
struct RetractedCopiesPass {
  std::uint64_t outputs = 0;  ///< outputs rewritten
  std::uint64_t lines = 0;    ///< lines left out
  /// Outputs whose lines were placed by their offset map
  /// (retracted_line_place.hpp), not by walking their input.
  std::uint64_t by_map = 0;
  /// .gz/.zst outputs that began stored (InputFeed::defer_compression),
  /// compressed here whether or not they held a retracted copy.
  std::uint64_t deferred = 0;
  /// Every rank's cut outputs, ascending input (the same on every rank).
  std::vector<CutOutput> cut;
};

/// Collective: the first half of leave_out_retracted_copies() (below): each
/// output that holds a retracted copy is written without them (in annotate
/// mode: with their lines flagged a duplicate) into its temporary file
/// (retracted_line_cut.hpp cut_output_temp_path), fsynced when
/// `how.durable`; no output is touched, so a run killed here resumes from
/// its last checkpoint as if the pass had not begun. A run with --state
/// records `cut` in a checkpoint before commit_cut_outputs(), so that a
/// kill during the renames is redone, never cut twice. Throws as below.
RetractedCopiesPass cut_retracted_copies(const comm::Communicator& world, const RunManifest& m,
                                         std::span<const core::CrossInputRetraction> mine,
                                         InputFeed& feed, const std::filesystem::path& output_dir,
                                         const EndPassOptions& how);

/// Collective: the second half: the rank (input index mod ranks) renames
/// each cut output's temporary file over the output (the folder fsynced
/// when `durable`). At a resume some may be renamed already: an output
/// without its temporary file must have the cut length. Throws
/// std::runtime_error on every rank when a temporary file or an output has
/// another length than `cuts` says (the failing rank names the file).
void commit_cut_outputs(const comm::Communicator& world, const RunManifest& m,
                        std::span<const CutOutput> cuts, const std::filesystem::path& output_dir,
                        bool durable);

/// Collective (every rank, the same `m`, once every input is read). The
/// cutting rank of each output is the rank that holds its offset map
/// (InputFeed::offset_map(), one allgather of their inputs), else the rank
/// (input index mod ranks); every rank's `mine`
/// (KeyOrder::cross_input_retractions(); 24 bytes each) goes to the
/// cutting ranks of their inputs (one alltoallv: a rank holds about 1/P of
/// all retractions, never the whole list). The cutting rank rewrites each output
/// that holds a retracted copy into a temporary file renamed over the
/// output (fsynced first when `how.durable`): in annotate mode with the
/// retracted copies' lines flagged a duplicate (retracted_annotations.hpp;
/// they count as dropped, InputFeed::count_flagged), else an uncompressed
/// one without the
/// byte ranges of the retracted records' lines (each cut line's key hash,
/// InputFeed::key_hash_of, checked against the retracted one), a .gz/.zst
/// one line by line, decompressed and compressed again in the input's
/// compression, without the lines whose key hash is retracted for that
/// input. A whole compressed output that begins stored (io::
/// output_starts_stored: the rounds wrote it so, InputFeed::defer_compression; each rank
/// reads the headers of its share, input index mod ranks, and the indexes
/// are allgathered with the inputs') is rewritten the same way at the run's
/// level whether or not it holds a retracted copy (filter mode). The lines
/// left out count as dropped in `feed` (count_left_out).
/// Throws std::runtime_error on every rank if any rank failed: a retracted
/// copy missing from its output or holding another key, or an I/O error
/// (the failing rank names the file first). Cost: uncompressed, placed by
/// the map, one pread and one key parse per retracted line, walked, one
/// read of the input and the output up to the last cut (memchr/memcmp, no
/// parse), and either way an in-kernel copy of the output; compressed, one
/// parse of every line and a recompression.
RetractedCopiesPass leave_out_retracted_copies(const comm::Communicator& world,
                                               const RunManifest& m,
                                               std::span<const core::CrossInputRetraction> mine,
                                               InputFeed& feed,
                                               const std::filesystem::path& output_dir,
                                               const EndPassOptions& how);

}  // namespace bloomshard::app
