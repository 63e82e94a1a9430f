// Paragraph splitting for --unit paragraph: where the
// paragraphs of a record's text are, as byte spans into that text, and
// which bytes go when a paragraph is removed. Pure, no allocation beyond
// the output vector. Rules (paragraph-split/v1, docs/keys.md):
//   newline    every '\n' ends a paragraph: "a\nb\n" is "a", "b" and the
//              empty paragraph after the last '\n'. A '\r' before the '\n'
//              stays in the paragraph (--text-normalize ws trims it).
//   blankline  a paragraph is a maximal run of non-blank lines; a blank
//              line is empty or holds only ' ', '\t' and '\r'. The span
//              runs from its first line's first byte to its last line's
//              last byte (without that line's '\n').
// The cut of a paragraph (what its removal deletes) runs from its start to
// the next paragraph's start, or to the end of the text for the last one:
// the paragraph and the separator after it. Bytes before the first
// paragraph (leading blank lines) are never cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::core {

enum class ParagraphSplit : std::uint8_t { kNewline = 0, kBlankline = 1 };

/// "newline" or "blankline".
[[nodiscard]] std::string_view paragraph_split_name(ParagraphSplit s) noexcept;

/// "newline/v1" or "blankline/v1": what a state records.
[[nodiscard]] std::string paragraph_split_label(ParagraphSplit s);

/// Parses "name" or "name/v1"; throws std::invalid_argument naming the value.
[[nodiscard]] ParagraphSplit parse_paragraph_split(std::string_view name);

/// One paragraph of a text, in bytes: [start, end) is the paragraph itself,
/// [start, cut_end) what removing it deletes (end <= cut_end).
struct ParagraphSpan {
  std::size_t start = 0;
  std::size_t end = 0;
  std::size_t cut_end = 0;
  friend bool operator==(const ParagraphSpan&, const ParagraphSpan&) = default;
};

/// Replaces `out` with the paragraphs of `text` in order. Newline mode
/// always gives at least one (possibly empty) paragraph; blankline mode
/// gives none for a text of blank lines only. Cost: one pass over `text`.
void split_paragraphs(ParagraphSplit rule, std::string_view text, std::vector<ParagraphSpan>& out);

}  // namespace bloomshard::core
