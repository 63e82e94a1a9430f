#include "bloomshard/core/paragraph_split.hpp"

#include <stdexcept>

namespace bloomshard::core {
namespace {

bool is_blank(std::string_view line) noexcept {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Cut ends: each paragraph's cut runs to the next one's start, the last
// one's to the end of the text.
void set_cut_ends(std::size_t text_size, std::vector<ParagraphSpan>& spans) {
  for (std::size_t i = 0; i < spans.size(); ++i) {
    spans[i].cut_end = i + 1 < spans.size() ? spans[i + 1].start : text_size;
  }
}

}  // namespace

std::string_view paragraph_split_name(ParagraphSplit s) noexcept {
  return s == ParagraphSplit::kBlankline ? "blankline" : "newline";
}

std::string paragraph_split_label(ParagraphSplit s) {
  return std::string(paragraph_split_name(s)) + "/v1";
}

ParagraphSplit parse_paragraph_split(std::string_view name) {
  for (const ParagraphSplit s : {ParagraphSplit::kNewline, ParagraphSplit::kBlankline}) {
    if (name == paragraph_split_name(s) || name == paragraph_split_label(s)) return s;
  }
  throw std::invalid_argument("paragraph split '" + std::string(name) +
                              "' is not newline or blankline (v1)");
}

void split_paragraphs(ParagraphSplit rule, std::string_view text, std::vector<ParagraphSpan>& out) {
  out.clear();
  std::size_t line_start = 0;
  bool in_paragraph = false;
  for (;;) {
    const std::size_t nl = text.find('\n', line_start);
    const std::size_t line_end = nl == std::string_view::npos ? text.size() : nl;
    if (rule == ParagraphSplit::kNewline) {
      out.push_back({line_start, line_end, 0});
    } else if (is_blank(text.substr(line_start, line_end - line_start))) {
      in_paragraph = false;
    } else if (in_paragraph) {
      out.back().end = line_end;  // the paragraph grows by this line
    } else {
      out.push_back({line_start, line_end, 0});
      in_paragraph = true;
    }
    if (nl == std::string_view::npos) break;
    line_start = nl + 1;
  }
  set_cut_ends(text.size(), out);
}

}  // namespace bloomshard::core
