// Text normalization for content keys (--text-normalize), applied to each
// key field before the --normalize policy. Named and versioned like the
// Unicode policies, because a saved filter's keys depend on the rules:
//   none/v1      the bytes as given
//   ws/v1        trim, and collapse each run of Unicode White_Space (the 25
//                code points of PropList.txt, Unicode 15.0: U+0009..U+000D,
//                U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028,
//                U+2029, U+202F, U+205F, U+3000) to one U+0020. Needs
//                valid UTF-8. U+200B ZERO WIDTH SPACE and U+FEFF are not
//                White_Space and are kept.
//   ws-lower/v1  ws/v1, then nfc-casefold/v2 (normalize.hpp)
// The table of examples is in docs/keys.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace bloomshard::core {

enum class TextNormalize : std::uint8_t { kNone = 0, kWs = 1, kWsLower = 2 };

inline constexpr TextNormalize kAllTextNormalizations[] = {TextNormalize::kNone, TextNormalize::kWs,
                                                           TextNormalize::kWsLower};

/// "none", "ws" or "ws-lower".
[[nodiscard]] std::string_view text_normalize_name(TextNormalize t) noexcept;

/// "name/v1", e.g. "ws-lower/v1".
[[nodiscard]] std::string text_normalize_label(TextNormalize t);

/// Parses "name" or "name/v1"; throws std::invalid_argument naming the value.
[[nodiscard]] TextNormalize parse_text_normalize(std::string_view name);

/// True for the 25 code points with the Unicode White_Space property.
[[nodiscard]] bool is_unicode_white_space(char32_t cp) noexcept;

/// Walks the ws/v1 form of valid UTF-8 `text` in pieces, without copying:
/// each next() gives either a run of non-space bytes (a view into `text`)
/// or the single separator " ". The text must have been checked with
/// check_utf8() (normalize.hpp) first.
class CollapsedWhitespace {
 public:
  explicit CollapsedWhitespace(std::string_view text) noexcept : text_(text) {}

  /// The next piece, or false at the end.
  bool next(std::string_view& piece) noexcept;

  /// Bytes of the whole ws/v1 form of `text` (one walk, no copy).
  [[nodiscard]] static std::size_t length(std::string_view text) noexcept;

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  bool pending_space_ = false;
};

/// ws/v1 over a value that comes in pieces (a long field unescaped chunk by
/// chunk): feed() each piece in order, each cut at a code point boundary and
/// checked with check_utf8(); what `sink` receives, concatenated, is
/// normalize_text(kWs, whole value). State between pieces: whether a word
/// was written and whether white space followed it.
class WhitespaceCollapser {
 public:
  void reset() noexcept { wrote_word_ = owed_space_ = false; }

  template <class Sink>
  void feed(std::string_view piece, Sink&& sink) {
    std::size_t i = 0;
    while (i < piece.size()) {
      const std::size_t word_end = end_of_word(piece, i);
      if (word_end == i) {  // white space at i
        i += white_space_bytes_at(piece, i);
        owed_space_ = wrote_word_;
        continue;
      }
      if (owed_space_) sink(std::string_view(" "));
      owed_space_ = false;
      sink(piece.substr(i, word_end - i));
      wrote_word_ = true;
      i = word_end;
    }
  }

  /// Bytes of the White_Space code point at `s[i]`, or 0.
  [[nodiscard]] static std::size_t white_space_bytes_at(std::string_view s, std::size_t i) noexcept;
  /// End of the run of non-space code points starting at `s[i]`.
  [[nodiscard]] static std::size_t end_of_word(std::string_view s, std::size_t i) noexcept;

 private:
  bool wrote_word_ = false;
  bool owed_space_ = false;
};

/// Writes the normalized text into `out` and returns a view of it; for
/// kNone returns `text` itself. Throws InvalidUtf8Error (normalize.hpp)
/// for invalid UTF-8 under ws and ws-lower.
std::string_view normalize_text(TextNormalize policy, std::string_view text, std::string& out);

}  // namespace bloomshard::core
