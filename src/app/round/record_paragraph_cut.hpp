// One accepted input record split into its paragraphs, and what a line the
// run wrote for it holds: the shared re-cut of the paragraph end pass
// (retracted_paragraphs.hpp). Both of its writers load an input record
// here, mark the retracted paragraphs cut, and take the record's new line
// (filter mode) or its new duplicate spans (annotate mode) from it.
//
// The record's earlier removals are re-derived, not recorded: derive()
// from the written line's text (filter mode), flag_listed() from the
// attribute line's span list (annotate mode). Buffers are reused from
// record to record: one object serves a whole output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "app/feed/annotation_writer.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "core/paragraph/paragraph_keyer.hpp"
#include "core/paragraph/paragraph_removal.hpp"
#include "io/records/json_field_token.hpp"

namespace bloomshard::app {

/// The paragraphs of one input record and their cut flags. `key` must
/// outlive the object.
class RecordParagraphCut {
 public:
  RecordParagraphCut(const core::KeyScheme& key, std::uint64_t seed);

  /// Splits and keys `text` (the text field's value) of `line`; false for a
  /// record the run rejects at this step (a JSONL field that is not a
  /// string, invalid UTF-8 under a policy that needs UTF-8). `line` must
  /// stay valid until the next load().
  bool load(std::string_view line, std::string text, bool json);

  /// Sets the flags to those of a line written for this record whose text
  /// is `written_text`: a keyed paragraph was kept iff it is the first copy
  /// of its key in the record and the written text holds that key.
  void derive(std::string_view written_text);

  /// The record's line with the flagged paragraphs cut (written as
  /// ParagraphRecords::write writes it), or nullopt when
  /// --drop-if-removed-fraction drops it. Valid until the next call.
  std::optional<std::string_view> line();

  /// Sets the flags to those an attribute line lists (annotate mode):
  /// `listed` are its [start, end) pairs (bloomshard: bytes of the
  /// paragraphs; dolma: code points of the cuts). False when one names no
  /// paragraph of the record.
  bool flag_listed(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& listed, bool dolma);

  /// The decision the annotate writer makes a line from, for the flags.
  [[nodiscard]] ParagraphDecision decision();

  /// Whether the flags drop the record (valid after line(), flag_listed()
  /// or decision()).
  [[nodiscard]] bool dropped() const noexcept;

  /// Whether paragraph `p` is keyed and its key hashes to `hash`: what a
  /// retraction of (record start + p, hash) must name.
  [[nodiscard]] bool holds(std::uint64_t p, const core::KeyHash& hash) const;

  [[nodiscard]] std::size_t paragraphs() const noexcept { return keyer_.spans().size(); }
  [[nodiscard]] bool duplicate(std::size_t p) const { return dup_[p]; }
  void cut(std::size_t p) { dup_[p] = true; }
  /// What the flags remove (valid after line(), flag_listed() or decision()).
  [[nodiscard]] const core::ParagraphRemoval& removal() const noexcept { return removal_; }

 private:
  // All flags false, for this record's paragraphs.
  void clear_flags();
  // A paragraph as an attribute line lists it.
  struct Form {
    std::uint64_t start;
    std::uint64_t end;
    std::size_t paragraph;
    friend bool operator<(const Form& x, const Form& y) {
      return std::tie(x.start, x.end) < std::tie(y.start, y.end);
    }
  };

  const core::KeyScheme& key_;
  std::uint64_t seed_;
  core::ParagraphKeyer keyer_;
  core::ParagraphKeyer out_keyer_;
  io::JsonFieldToken field_;
  std::string_view line_;
  std::string text_;
  bool json_ = false;
  io::TokenSpan token_{};
  std::vector<core::KeyHash> hashes_;  // per paragraph ({} when not keyed)
  std::vector<bool> first_;            // the first copy of its key in the record
  std::vector<std::size_t> order_;     // load()'s scratch
  std::vector<std::pair<std::uint64_t, std::uint64_t>> kept_;  // keys of the written line, sorted
  std::vector<Form> forms_;                                    // flag_listed()'s, sorted
  std::unique_ptr<bool[]> dup_;                                // per paragraph: cut (a duplicate)
  std::size_t dup_capacity_ = 0;
  core::ParagraphRemoval removal_;
  std::string text_out_;
  std::string line_out_;
};

}  // namespace bloomshard::app
