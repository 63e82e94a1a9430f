// Text normalization for near-duplicate shingling, "minhash-text/v1":
// the text's canonical caseless form (nfc-casefold/v2 of normalize.hpp:
// NFC + Unicode full case folding, utf8proc, Unicode 15.0), then every code
// point of general category P* (Pc Pd Ps Pe Pi Pf Po) removed, then each
// run of White_Space (text_normalize.hpp) folded to one U+0020, none at
// either end. Everything else (letters, digits, symbols S*, controls) is
// kept. Saved near-duplicate states depend on these rules: a change of any
// of them is a new version. The exact rules and examples: docs/near-duplicates.md.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace bloomshard::core {

/// The name and version of the rules above.
inline constexpr std::string_view kMinHashTextLabel = "minhash-text/v1";

/// Chunk size the normalizer aims at (bytes of input per piece).
inline constexpr std::size_t kMinHashTextChunk = 64 * 1024;

/// Walks the normalized form of a text in pieces, so a long document costs
/// memory of about one chunk, not of the whole text. A chunk ends just
/// before the first cut point (is_minhash_text_cut_point: ASCII, white
/// space, punctuation, CJK ideographs, Hangul syllables) at or past `chunk`
/// bytes: such a code point has canonical combining class 0, its canonical
/// caseless form starts with one too, and it is never the second of a
/// canonical composition pair, and case folding maps code point by code
/// point, so the normalized chunks concatenated are exactly the normalized
/// whole text. Limit: a stretch with no cut point (e.g. a megabyte of
/// combining marks, or of Greek letters without a space) stays whole.
class MinHashTextNormalizer {
 public:
  /// Validates `text` as UTF-8 first (a walk without copying). `text` must
  /// outlive the normalizer. `chunk` is for tests; 0 means one chunk.
  explicit MinHashTextNormalizer(std::string_view text, std::size_t chunk = kMinHashTextChunk);
  /// A normalizer with no text yet (reset() gives it one).
  MinHashTextNormalizer() = default;

  /// Starts over on `text`, as the constructor does, keeping the buffers
  /// (a sketcher reuses one normalizer: no allocation per record once they
  /// have grown to a chunk's size).
  void reset(std::string_view text, std::size_t chunk = kMinHashTextChunk);

  /// Why the text is refused ("invalid UTF-8 at byte 12: ..."), or nullopt
  /// when it is valid. A refused text gives no pieces.
  [[nodiscard]] const std::optional<std::string>& error() const noexcept { return error_; }

  /// The next non-empty piece of the normalized text, or false at the end.
  /// The view is valid until the next call.
  bool next(std::string_view& piece);

 private:
  // The first cut point at or after byte `target` (or the text's end).
  [[nodiscard]] std::size_t cut_at_or_after(std::size_t target) const noexcept;

  // Appends the minhash-text/v1 form of caseless text `folded` to the piece.
  void filter_into_piece(std::string_view folded);
  // Room for `more` bytes past the piece's end (bytes kept, not zeroed).
  char* piece_room(std::size_t more);

  std::string_view text_;
  std::size_t chunk_ = 0;
  std::size_t pos_ = 0;
  std::optional<std::string> error_;
  std::string folded_;  // nfc-casefold/v2 of the current non-ASCII run
  // The current piece: a plain buffer, since std::string::resize would zero
  // the room filter_into_piece makes (twice the input) for every run.
  std::unique_ptr<char[]> piece_;
  std::size_t piece_size_ = 0;
  std::size_t piece_capacity_ = 0;
  bool wrote_any_ = false;
  bool owed_space_ = false;
};

/// The whole normalized text, or nullopt with `error` set for invalid UTF-8.
[[nodiscard]] std::optional<std::string> normalize_minhash_text(std::string_view text,
                                                                std::string* error = nullptr);

/// Whether the normalizer may cut a text just before `cp` with no effect on
/// the result: ASCII, White_Space, P*, CJK Unified Ideographs (U+4E00..
/// U+9FFF, U+3400..U+4DBF) and Hangul syllables (U+AC00..U+D7A3).
[[nodiscard]] bool is_minhash_text_cut_point(char32_t cp) noexcept;

/// True for code points of Unicode general category P* (punctuation).
[[nodiscard]] bool is_unicode_punctuation(char32_t cp) noexcept;

}  // namespace bloomshard::core
