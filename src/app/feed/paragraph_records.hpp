// The paragraph side of a round under --unit paragraph:
// turns a record into its paragraph keys in the RoundBatch (one per keyed
// paragraph, in text order, so the router's first-copy rule and the
// owners' (source rank, position) order decide paragraphs exactly as they
// decide whole records), and, once the verdicts are back, writes each
// record with its duplicate paragraphs cut out of its text field (the rest
// of the line byte-identical: io/records/json_field_token.hpp), unchanged when no
// paragraph was a duplicate, or not at all when it lost more than
// --drop-if-removed-fraction of its text. Not collective; one per rank.
// Memory: a copy of each record's text and its spans, for one round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/round/round_batch.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "core/order/file_order.hpp"
#include "core/paragraph/paragraph_keyer.hpp"
#include "core/paragraph/paragraph_removal.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/json_field_token.hpp"

namespace bloomshard::app {

struct ParagraphRecut;

/// Reject reason: a JSONL record whose text field is not a JSON string (an
/// integer key field is fine as a record key, not as text to split).
inline constexpr std::string_view kRejectParagraphNotString = "paragraph field is not a string";

/// This rank's paragraph counters (this process). paragraphs_removed and
/// bytes_removed count what was cut out of records that were written; a
/// record dropped whole counts in records_dropped only.
struct ParagraphCounters {
  std::uint64_t paragraphs = 0;          ///< paragraphs split (keyed or not)
  std::uint64_t paragraphs_keyed = 0;    ///< of those, long enough to be keyed
  std::uint64_t paragraphs_removed = 0;  ///< duplicates cut out of written records
  std::uint64_t records_changed = 0;     ///< written with at least one paragraph cut
  std::uint64_t records_dropped = 0;     ///< over --drop-if-removed-fraction
  std::uint64_t bytes_removed = 0;       ///< text bytes cut (unescaped UTF-8)
};

/// What the verdicts of one record's paragraph keys decide (decide()):
/// which paragraphs are duplicates and whether the record goes whole.
struct ParagraphDecision {
  std::string_view text;  ///< the record's original text (valid until clear())
  std::vector<core::ParagraphSpan> duplicates;  ///< in text order, bytes into `text`
  std::size_t paragraphs = 0;
  bool dropped = false;  ///< lost more than --drop-if-removed-fraction
};

/// What write() did with one record.
enum class ParagraphOutcome : std::uint8_t { kUnchanged, kChanged, kDropped };

class ParagraphRecords {
 public:
  /// `key` must be a paragraph scheme; `hash_seed` the job's.
  ParagraphRecords(const core::KeyScheme& key, std::uint64_t hash_seed);

  /// Forgets the previous round (with RoundBatch::clear()).
  void clear() noexcept;

  /// Adds a record whose text field value is `text` (unescaped; for a
  /// plain-line file the line) to `batch` with its paragraph keys. Returns
  /// a reject reason, or "" when added. `json`: the line is a JSONL record
  /// whose field token is rewritten; else the whole line is the text.
  /// Throws core::InvalidUtf8Error under a policy that needs UTF-8.
  /// `record_tag`: in a run that tags its keys, the record's order tag
  /// (0: untagged); each paragraph key is tagged
  /// core::paragraph_order_tag(record_tag, its index, line.size()).
  [[nodiscard]] std::string_view add(RoundBatch& batch, std::uint32_t file_slot,
                                     std::string_view line, std::string_view terminator,
                                     std::string_view text, bool json,
                                     std::optional<core::OrderTag> record_tag = std::nullopt);

  /// Decides record i of `batch` from its keys' verdicts (all of the
  /// batch's, in key order) and writes what is kept to `out`; returns what
  /// was done.
  ParagraphOutcome write(const RoundBatch& batch, std::size_t i,
                         std::span<const core::Verdict> verdicts, io::OutputWriter& out);

  /// Annotate mode: decides record i like write() (and counts it the same
  /// way) without writing it.
  [[nodiscard]] ParagraphDecision decide(const RoundBatch& batch, std::size_t i,
                                         std::span<const core::Verdict> verdicts);

  /// The duplicate paragraphs of record i as byte spans into its original
  /// text, for annotate mode's Dolma `[start, end, 1.0]` triples.
  [[nodiscard]] std::vector<core::TextSpan> duplicate_spans(
      const RoundBatch& batch, std::size_t i, std::span<const core::Verdict> verdicts);

  [[nodiscard]] const ParagraphCounters& counters() const noexcept { return counters_; }
  /// The end pass cut `recut`'s retracted paragraphs out of written records
  /// (app/round/retracted_paragraphs.hpp): the counters become those of a
  /// run that cut them when it wrote the records.
  void count_recut(const ParagraphRecut& recut) noexcept;

 private:
  struct Entry {
    std::size_t text_offset;  // into texts_
    std::size_t text_length;
    std::size_t line_length;  // of the record's bytes, the rest is its terminator
    io::TokenSpan token;      // JSONL: the field's raw token in the line
    bool json;
    std::size_t first_span;  // into spans_ / keyed_
    std::size_t span_count;
  };
  // Counts record i (paragraphs, removals or the drop) and measures what
  // its duplicates take; flag_duplicates(i) must have run.
  core::ParagraphRemoval count_record(const RoundBatch& batch, std::size_t i);
  // Fills dup_ with the duplicate flag of each of record i's paragraphs.
  void flag_duplicates(const RoundBatch& batch, std::size_t i,
                       std::span<const core::Verdict> verdicts);

  // Writes a JSONL record whose field token is written as the escaper
  // would write it with the duplicates' cuts taken out as pieces of the
  // line itself (no unescape, no escape, no scratch copy); false, having
  // written nothing, for a token written otherwise (then write() escapes
  // the kept text again: the same bytes either way).
  bool write_cut_line(std::string_view line, io::TokenSpan token, std::string_view text,
                      std::span<const core::ParagraphSpan> spans, std::span<const bool> dup,
                      std::string_view terminator, io::OutputWriter& out);

  core::KeyScheme key_;
  std::uint64_t hash_seed_;
  core::ParagraphKeyer keyer_;
  io::JsonFieldToken field_;
  std::vector<Entry> entries_;
  std::string texts_;
  std::vector<core::ParagraphSpan> spans_;
  std::vector<bool> keyed_;
  std::unique_ptr<bool[]> dup_;  // scratch, one flag per paragraph of a record
  std::size_t dup_capacity_ = 0;
  std::string text_scratch_;
  std::string line_scratch_;
  std::vector<std::size_t> offsets_;      // write_cut_line's scratch
  std::vector<std::string_view> pieces_;  // write_cut_line's scratch
  ParagraphCounters counters_;
};

}  // namespace bloomshard::app
