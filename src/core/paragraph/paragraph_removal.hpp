// What a record's text becomes under --unit paragraph once the verdicts of
// its paragraph keys are back: the duplicate paragraphs cut out (their
// cuts, paragraph_split.hpp), the removed fraction that
// --drop-if-removed-fraction compares, and the Dolma-style spans of the
// duplicates (byte offsets into the original text) for annotate mode.
// Pure, no MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/paragraph_split.hpp"

namespace bloomshard::core {

/// [start, end) in bytes of the original text.
struct TextSpan {
  std::size_t start = 0;
  std::size_t end = 0;
  friend bool operator==(const TextSpan&, const TextSpan&) = default;
};

struct ParagraphRemoval {
  std::size_t paragraphs_removed = 0;
  std::size_t bytes_removed = 0;  ///< sum of the removed paragraphs' cuts
  /// bytes_removed / text bytes (0 for an empty text): the fraction the
  /// text lost.
  double removed_fraction = 0;
};

/// Counts what removing the paragraphs flagged in `duplicate` (one flag per
/// span of `spans`) takes from a text of `text_bytes` bytes.
[[nodiscard]] ParagraphRemoval measure_removal(std::size_t text_bytes,
                                               std::span<const ParagraphSpan> spans,
                                               std::span<const bool> duplicate);

/// Writes into `out` the text without the cuts of the flagged paragraphs
/// (the other bytes in order, untouched) and returns a view of it.
std::string_view remove_paragraphs(std::string_view text, std::span<const ParagraphSpan> spans,
                                   std::span<const bool> duplicate, std::string& out);

/// The flagged paragraphs' own spans [start, end) (without separators), in
/// order: what annotate mode writes as Dolma `[start, end, 1.0]` triples.
[[nodiscard]] std::vector<TextSpan> duplicate_spans(std::span<const ParagraphSpan> spans,
                                                    std::span<const bool> duplicate);

/// True when --drop-if-removed-fraction `threshold` drops the record: it
/// lost strictly more than that fraction of its text (1.0: never).
[[nodiscard]] constexpr bool drop_for_removed_fraction(double removed_fraction,
                                                       double threshold) noexcept {
  return removed_fraction > threshold;
}

}  // namespace bloomshard::core
