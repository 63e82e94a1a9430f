// The end pass of the one input order under --unit paragraph (docs/keys.md
// "Which record keeps a paragraph"): a paragraph kept in a record of one
// input that an earlier copy in another input retracted is cut from that
// record's written line as well, and the record is dropped if
// --drop-if-removed-fraction now drops it. A retraction names the
// paragraph by its order tag (its record's input offset plus its index in
// the text, core/order/paragraph_order.hpp) and its key hash.
//
// The record's other removals are re-derived, not recorded: the input is
// read beside the output, and an input record's written line is the one
// whose kept paragraphs (split and keyed again) make the record's cut line
// byte for byte (a paragraph is kept iff its key is among the written
// line's and it is the first copy of that key in the record). Recording
// them instead would cost every writing rank a note per written record
// until the run's end (and a copy in every checkpoint); the re-derivation
// costs the pass one more parse of the records it walks, and each line it
// changes is checked against the record it came from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "app/feed/annotate_mode.hpp"
#include "app/round/retracted_line_cut.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// The text field's value of an input or output line (terminator included
/// or not), or nullopt for a line the run rejects before splitting it
/// (InputFeed::paragraph_text_of).
using ParagraphTextOf = std::function<std::optional<std::string>(std::string_view line)>;

/// What re-cutting one output changed, for the metrics: the lines touched,
/// the records dropped now, and the paragraph counters' differences
/// (differences modulo 2^64 where they may be negative).
struct ParagraphRecut {
  std::uint64_t lines_dropped = 0;   ///< records dropped now (over the fraction)
  std::uint64_t lines_changed = 0;   ///< lines re-cut, re-flagged or left out
  std::uint64_t bytes_removed = 0;   ///< output bytes less (an attribute file grows)
  std::uint64_t length = 0;          ///< the temporary file's length
  std::int64_t records_changed = 0;  ///< paragraph counters' differences
  std::int64_t paragraphs_removed = 0;
  std::int64_t text_bytes_removed = 0;
};

/// Writes `output` (the kept records of `input`, cut of their duplicate
/// paragraphs, in the input's compression) with the retracted paragraphs
/// `retracted` (ascending input_offset, unique) cut as well into
/// cut_output_temp_path(output), fsynced when `durable`; the output is left
/// as it is. Lines of records without a retraction are copied as they are.
/// A retraction of a record that was dropped whole changes nothing (its
/// paragraphs counted as seen). Throws std::runtime_error naming the
/// output, the input and the offset when a retraction is no keyed
/// paragraph of an accepted record, names another key, names a paragraph
/// the written line had cut already, or when an output line is not its
/// record's cut line (the temporary file removed). Cost: one read of the
/// input and the output, a paragraph split and keying of each record up to
/// the last retraction whose line changed (others: a memcmp), the output
/// written again (recompressed at `options`' level for .gz/.zst).
ParagraphRecut cut_retracted_paragraphs(const io::InputFile& input,
                                        const std::filesystem::path& output,
                                        std::span<const RetractedLine> retracted,
                                        const ParagraphTextOf& text_of, const core::KeyScheme& key,
                                        std::uint64_t hash_seed, std::uint64_t max_line_bytes,
                                        const io::OutputOptions& options, bool durable);

/// Annotate mode: writes the attribute file `output` of `input` with each
/// retracted paragraph added to its record's duplicate spans (and the
/// bloomshard format's `duplicate` set when --drop-if-removed-fraction now
/// drops the record), the line written again as the run writes it
/// (append_paragraph_annotation), into cut_output_temp_path(output). Line
/// n of the attribute file is about line n of the input; the record's
/// spans so far are read from its attribute line. Throws
/// std::runtime_error naming the output, the input and the offset as
/// cut_retracted_paragraphs() does, and for an attribute line whose span
/// list names no paragraph of its record. Cost: one read of both files,
/// a paragraph split and keying of each retracted record, the attribute
/// file written again.
ParagraphRecut flag_retracted_paragraphs(const io::InputFile& input,
                                         const std::filesystem::path& output,
                                         std::span<const RetractedLine> retracted,
                                         const ParagraphTextOf& text_of, const core::KeyScheme& key,
                                         std::uint64_t hash_seed, AnnotateFormat format,
                                         std::uint64_t max_line_bytes,
                                         const io::OutputOptions& options, bool durable);

}  // namespace bloomshard::app
