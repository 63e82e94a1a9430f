// The end pass of the one input order in annotate mode: a kept copy that an
// earlier copy in another input retracted has its attribute line written
// already, as kept. Once every input is read, the attribute files that hold
// such a line are rewritten with the line flagged a duplicate
// (annotation_writer.hpp DuplicateFlag), into a temporary file renamed over
// the attribute file as filter mode's cut outputs are (retracted_copies.hpp).
//
// Line n of an attribute file is about line n of its input, so the input is
// read beside it (the same RecordReader, the same line limit) up to the last
// retracted record: each retracted offset names one input line, hence one
// attribute line. The input record is read anyway, so the Dolma span's
// length (code points of "text") comes from it, not from the attribute
// line: a kept line does not carry it, and carrying it would change the
// format for every line to serve the few retracted ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "app/feed/annotate_mode.hpp"
#include "app/round/retracted_line_cut.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// What flagging did to one attribute file.
struct FlaggedLines {
  std::uint64_t lines = 0;   ///< lines flagged a duplicate
  std::int64_t growth = 0;   ///< uncompressed bytes added (negative: removed)
  std::uint64_t length = 0;  ///< the temporary file's length
};

/// Writes the attribute file `output` (of `input`, in `input`'s compression,
/// in `format`) into cut_output_temp_path(output) with the lines of the
/// records at `retracted` offsets (ascending, no offset twice) flagged a
/// duplicate; compressed with `options` (the run's level, so that the bytes
/// are those a run without retractions writes), fsynced when `durable`; the
/// attribute file is left as it is. Throws std::runtime_error naming the
/// attribute file, the input and the line when a retracted offset is not
/// the start of an input line, the input record's key hash (`hash_of`) is
/// not the retracted one, its attribute line is not a kept record's line, or
/// the attribute file ends first (the temporary file removed). Cost: one
/// read of the input up to the last retracted record (one key parse per
/// retracted record, and under dolma one "text" parse), one read and one
/// write of the whole attribute file (decompressed and compressed again).
FlaggedLines flag_retracted_annotations(const io::InputFile& input,
                                        const std::filesystem::path& output,
                                        std::span<const RetractedLine> retracted,
                                        const LineKeyHash& hash_of, AnnotateFormat format,
                                        std::uint64_t max_line_bytes,
                                        const io::OutputOptions& options, bool durable);

}  // namespace bloomshard::app
