#include "bloomshard/core/text_normalize.hpp"

#include <algorithm>
#include <stdexcept>

#include "bloomshard/core/normalize.hpp"

namespace bloomshard::core {
namespace {

// Length of the UTF-8 sequence starting with `lead` (valid input only).
std::size_t sequence_length(unsigned char lead) noexcept {
  if (lead < 0x80U) return 1;
  if (lead < 0xE0U) return 2;
  if (lead < 0xF0U) return 3;
  return 4;
}

// Bytes of the White_Space code point at `i`, or 0 if there is none there.
// Only 0x09..0x0D, 0x20 and the lead bytes 0xC2 (U+0085, U+00A0), 0xE1
// (U+1680), 0xE2 (U+2000..U+205F) and 0xE3 (U+3000) can start one.
std::size_t space_at(std::string_view s, std::size_t i) noexcept {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c == 0x20U || (c >= 0x09U && c <= 0x0DU)) return 1;
  if (c < 0xC2U) return 0;
  const std::size_t len = sequence_length(c);
  if (len < 2 || len > 3 || i + len > s.size()) return 0;
  char32_t cp = 0;
  if (len == 2) {
    cp = (char32_t{c} & 0x1FU) << 6 | (static_cast<unsigned char>(s[i + 1]) & 0x3FU);
  } else {
    cp = (char32_t{c} & 0x0FU) << 12 |
         (char32_t{static_cast<unsigned char>(s[i + 1])} & 0x3FU) << 6 |
         (static_cast<unsigned char>(s[i + 2]) & 0x3FU);
  }
  return is_unicode_white_space(cp) ? len : 0;
}

}  // namespace

std::string_view text_normalize_name(TextNormalize t) noexcept {
  switch (t) {
    case TextNormalize::kNone:
      return "none";
    case TextNormalize::kWs:
      return "ws";
    case TextNormalize::kWsLower:
      return "ws-lower";
  }
  return "unknown";
}

std::string text_normalize_label(TextNormalize t) {
  return std::string(text_normalize_name(t)) + "/v1";
}

TextNormalize parse_text_normalize(std::string_view name) {
  for (const auto t : kAllTextNormalizations) {
    if (name == text_normalize_name(t) || name == text_normalize_label(t)) return t;
  }
  throw std::invalid_argument("unknown text normalization '" + std::string(name) +
                              "' (expected none, ws or ws-lower)");
}

bool is_unicode_white_space(char32_t cp) noexcept {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool CollapsedWhitespace::next(std::string_view& piece) noexcept {
  // Skip a run of spaces; one separator is owed only between two words,
  // so leading and trailing runs vanish (trim).
  bool skipped = false;
  while (pos_ < text_.size()) {
    const std::size_t n = space_at(text_, pos_);
    if (n == 0) break;
    pos_ += n;
    skipped = true;
  }
  if (pos_ == text_.size()) return false;
  if (skipped && pending_space_) {
    pending_space_ = false;
    piece = " ";
    return true;
  }
  const std::size_t begin = pos_;
  while (pos_ < text_.size() && space_at(text_, pos_) == 0) {
    pos_ += sequence_length(static_cast<unsigned char>(text_[pos_]));
  }
  if (pos_ > text_.size()) pos_ = text_.size();
  piece = text_.substr(begin, pos_ - begin);
  pending_space_ = true;
  return true;
}

std::size_t WhitespaceCollapser::white_space_bytes_at(std::string_view s, std::size_t i) noexcept {
  return space_at(s, i);
}

std::size_t WhitespaceCollapser::end_of_word(std::string_view s, std::size_t i) noexcept {
  while (i < s.size() && space_at(s, i) == 0)
    i += sequence_length(static_cast<unsigned char>(s[i]));
  return std::min(i, s.size());
}

std::size_t CollapsedWhitespace::length(std::string_view text) noexcept {
  CollapsedWhitespace walk(text);
  std::size_t n = 0;
  std::string_view piece;
  while (walk.next(piece)) n += piece.size();
  return n;
}

std::string_view normalize_text(TextNormalize policy, std::string_view text, std::string& out) {
  if (policy == TextNormalize::kNone) return text;
  check_utf8(text);
  std::string collapsed;
  std::string& target = policy == TextNormalize::kWs ? out : collapsed;
  target.clear();
  CollapsedWhitespace walk(text);
  std::string_view piece;
  while (walk.next(piece)) target.append(piece);
  if (policy == TextNormalize::kWs) return out;
  const std::string_view folded = normalize_key(NormalizePolicy::kNfcCasefold, collapsed, out);
  if (folded.data() != out.data()) out.assign(folded);
  return out;
}

}  // namespace bloomshard::core
