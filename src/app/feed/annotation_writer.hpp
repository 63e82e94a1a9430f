// Annotate mode (`dedup --mode annotate`, docs/commands.md): one JSON line
// per input line, in input order, rejects included, written to the input's
// mirrored output instead of the kept records. A round's lines are noted as
// the feed reads them (rejects complete at once, keyed records waiting for
// their verdict) and written after the verdicts come back, so the
// attribute files go through the same OutputWriter, committed lengths and
// resume truncation as filter mode's outputs: exactly once, aligned.
// Not collective; one per rank (inside InputFeed).
//
// Formats (one line each):
//   bloomshard: {"key":"v","duplicate":false}             one key field
//               {"key":["u","t"],"duplicate":true}        composite key
//               (+ "key_digest":"<hex>" under --key-digest)
//               {"key":null,"duplicate":false,"reject":"key field missing"}
//   dolma:      {"id":"d1","attributes":{"bloomshard_duplicate":[]}}
//               {"id":"d2","attributes":{"bloomshard_duplicate":[[0,N,1.0]]}}
//               N = characters (Unicode code points) of the "text" field,
//               Dolma's span unit (Python str slicing); rejects add "reject".
// Under --unit paragraph a record's line lists its
// duplicate paragraphs instead of one flag:
//   bloomshard: {"duplicate":false,"paragraphs":4,"duplicate_spans":[[6,11]]}
//               spans [start, end) in bytes of the original (unescaped)
//               text, without the separator; "duplicate" is true when the
//               record goes whole (--drop-if-removed-fraction)
//   dolma:      {"id":"d1","attributes":{"bloomshard_duplicate":[[6,12,1.0]]}}
//               [start, end) in characters, each covering the paragraph
//               and the separator after it: the convention of Dolma's own
//               paragraph deduper (src/deduper.rs), which `dolma mix`'s
//               span replacement applies
// Under --unit minhash a record's line is the record format's without the
// key (the text is not repeated): "duplicate" is its near-duplicate flag,
//   bloomshard: {"duplicate":true}
//   dolma:      as for records, the whole text's span when it is one.
// With --confirm-jaccard (write_near_matches) a near-duplicate's line adds
// its best confirmed estimate and the record it matched (input index in the
// run's sorted inputs, byte offset of the record's first byte in the
// decompressed input; null when the state did not keep it):
//   bloomshard: {"duplicate":true,"similarity":0.9107,"match":{"input":3,"offset":10452}}
//               {"duplicate":false}
//   dolma:      "bloomshard_duplicate":[[0,N,1.0]],"bloomshard_similarity":[[0,N,0.9107]],
//               "bloomshard_match_input":[[0,N,3]],"bloomshard_match_offset":[[0,N,10452]]
//               (each [] for a kept record)
// The estimate is written as the shortest text that reads back as the
// same double.
// Cost: dolma parses each JSON line twice more (the id and text fields).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/feed/annotate_mode.hpp"
#include "app/feed/minhash_records.hpp"
#include "app/feed/paragraph_records.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"
#include "io/records/key_extractor.hpp"

namespace bloomshard::app {

/// The Dolma attribute name of a duplicate document.
inline constexpr std::string_view kDolmaDuplicateAttribute = "bloomshard_duplicate";
/// The Dolma attributes of a confirmed near-duplicate's match.
inline constexpr std::string_view kDolmaSimilarityAttribute = "bloomshard_similarity";
inline constexpr std::string_view kDolmaMatchInputAttribute = "bloomshard_match_input";
inline constexpr std::string_view kDolmaMatchOffsetAttribute = "bloomshard_match_offset";
/// The ordinal of the state's run whose inputs the match's input index names.
inline constexpr std::string_view kDolmaMatchRunAttribute = "bloomshard_match_run";

/// Turns a kept record's attribute line into its duplicate line, as
/// RoundAnnotations::write() would have written it with a duplicate verdict:
/// for the end pass of --kept-copy first (app/round/retracted_annotations.hpp),
/// where an earlier copy read later retracts a copy already written as kept.
/// bloomshard: `..."duplicate":false}` becomes `..."duplicate":true}`; dolma:
/// `..."bloomshard_duplicate":[]}}` becomes `...[[0,N,1.0]]}}`, N the code
/// points of the record's "text" (of the line for plain-line inputs), read
/// from the input record itself: a kept line does not carry it.
class DuplicateFlag {
 public:
  explicit DuplicateFlag(AnnotateFormat format);

  /// The duplicate line of `kept_line` (one attribute line without its
  /// terminator) about the input record `record_line` (without terminator,
  /// followed by io::kLinePaddingBytes readable bytes) of an input of
  /// `format`; nullopt when `kept_line` is not a kept record's line of this
  /// format (a reject's, a duplicate's, another format's).
  [[nodiscard]] std::optional<std::string> flag(std::string_view kept_line, io::Format format,
                                                std::string_view record_line);

 private:
  AnnotateFormat format_;
  io::KeyExtractor text_field_;  // dolma: "text"
};

/// Under --unit paragraph: appends to `tail` what follows a record line's
/// head (bloomshard `{"duplicate":`, dolma `..."bloomshard_duplicate":`)
/// for the decision `d`, newline included: the one writer of these lines
/// (RoundAnnotations::write_paragraphs and the end pass of --kept-copy
/// first, app/round/retracted_paragraph_annotations.hpp).
void append_paragraph_annotation(AnnotateFormat format, const ParagraphDecision& d,
                                 std::string& tail);

class RoundAnnotations {
 public:
  /// `digest_keys`: the key scheme digests its keys (adds "key_digest").
  RoundAnnotations(AnnotateFormat format, bool digest_keys);

  /// Forgets the noted lines (the start of a round).
  void clear() noexcept;

  /// A record that went into the round's batch (its verdict comes back in
  /// batch order): `values` are the key field values as extracted, `key`
  /// the key bytes the filter sees.
  void add_record(std::uint32_t file_slot, io::Format format, std::string_view line,
                  std::span<const std::string_view> values, std::string_view key);

  /// Under --unit paragraph: a record that went into the batch with its
  /// paragraph keys (its line is made from its ParagraphDecision).
  void add_paragraph_record(std::uint32_t file_slot, io::Format format, std::string_view line);

  /// Under --unit minhash: a record that went into the batch with its band
  /// keys; write() takes one verdict per record (kDuplicate: a near-duplicate).
  void add_minhash_record(std::uint32_t file_slot, io::Format format, std::string_view line);

  /// A rejected line: `values` when the fields were extracted (the reject
  /// came later, e.g. invalid UTF-8 for normalization), else none.
  void add_reject(std::uint32_t file_slot, io::Format format, std::string_view line,
                  std::optional<std::span<const std::string_view>> values, std::string_view reason);

  /// Writes every noted line in order, the i-th record with verdicts[i]
  /// (the batch's), to outputs[file_slot], then clears. Returns the bytes
  /// written. Throws io::OutputError.
  std::uint64_t write(std::span<const core::Verdict> verdicts, std::span<io::OutputWriter> outputs);

  /// Under --unit minhash with --confirm-jaccard: like write(), the i-th
  /// record a near-duplicate when matches[i] holds its best confirmed
  /// match, written with it (see the banner).
  std::uint64_t write_near_matches(std::span<const std::optional<NearMatch>> matches,
                                   std::span<io::OutputWriter> outputs);

  /// Under --unit paragraph: like write(), the i-th record's line made
  /// from decide(i), called once per record in batch order.
  std::uint64_t write_paragraphs(const std::function<ParagraphDecision(std::size_t)>& decide,
                                 std::span<io::OutputWriter> outputs);

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    std::uint32_t file_slot;
    bool reject;
    std::uint64_t begin;       // text in arena_: the whole line (reject) or
    std::uint64_t end;         // the part before the verdict (record)
    std::uint64_t text_chars;  // dolma: code points of "text"
  };
  // Writes every entry, a record's line ended by tail(i, out) for the i-th
  // record, then clears.
  std::uint64_t write_entries(const std::function<void(std::size_t, std::string&)>& tail,
                              std::span<io::OutputWriter> outputs);
  void append_key(std::span<const std::string_view> values);
  void append_dolma_id(io::Format format, std::string_view line);
  std::uint64_t dolma_text_chars(io::Format format, std::string_view line);

  AnnotateFormat format_;
  bool digest_keys_;
  std::string arena_;
  std::vector<Entry> entries_;
  io::KeyExtractor id_field_;    // dolma: "id"
  io::KeyExtractor text_field_;  // dolma: "text"
};

}  // namespace bloomshard::app
