#include "core/paragraph/paragraph_removal.hpp"

namespace bloomshard::core {

ParagraphRemoval measure_removal(std::size_t text_bytes, std::span<const ParagraphSpan> spans,
                                 std::span<const bool> duplicate) {
  ParagraphRemoval r;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!duplicate[i]) continue;
    ++r.paragraphs_removed;
    r.bytes_removed += spans[i].cut_end - spans[i].start;
  }
  r.removed_fraction = text_bytes == 0
                           ? 0.0
                           : static_cast<double>(r.bytes_removed) / static_cast<double>(text_bytes);
  return r;
}

std::string_view remove_paragraphs(std::string_view text, std::span<const ParagraphSpan> spans,
                                   std::span<const bool> duplicate, std::string& out) {
  out.clear();
  std::size_t copied_to = 0;  // text[0, copied_to) is decided
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!duplicate[i]) continue;
    out.append(text.substr(copied_to, spans[i].start - copied_to));
    copied_to = spans[i].cut_end;
  }
  out.append(text.substr(copied_to));
  return out;
}

std::vector<TextSpan> duplicate_spans(std::span<const ParagraphSpan> spans,
                                      std::span<const bool> duplicate) {
  std::vector<TextSpan> out;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (duplicate[i]) out.push_back({spans[i].start, spans[i].end});
  }
  return out;
}

}  // namespace bloomshard::core
