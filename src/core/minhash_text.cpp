// minhash-text/v1 (minhash_text.hpp). ASCII chunks, most of a web corpus,
// skip utf8proc: their caseless form is A-Z -> a-z and the category of each
// ASCII byte comes from a table filled from utf8proc itself.
#include "bloomshard/core/minhash_text.hpp"

#include <utf8proc.h>

#include <array>
#include <cstdint>

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {
namespace {

enum class AsciiClass : std::uint8_t { kKeep, kDrop, kSpace };

std::array<AsciiClass, 128> make_ascii_classes() noexcept {
  std::array<AsciiClass, 128> t{};
  for (char32_t c = 0; c < 128; ++c) {
    if (is_unicode_white_space(c)) {
      t[c] = AsciiClass::kSpace;
    } else if (is_unicode_punctuation(c)) {
      t[c] = AsciiClass::kDrop;
    }
  }
  return t;
}

const std::array<AsciiClass, 128>& ascii_classes() noexcept {
  static const std::array<AsciiClass, 128> t = make_ascii_classes();
  return t;
}

bool all_ascii(std::string_view s) noexcept {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80U) return false;
  }
  return true;
}

}  // namespace

bool is_unicode_punctuation(char32_t cp) noexcept {
  if (cp > 0x10FFFFU) return false;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

MinHashTextNormalizer::MinHashTextNormalizer(std::string_view text, std::size_t chunk)
    : text_(text), chunk_(chunk == 0 ? text.size() : chunk) {
  try {
    check_utf8(text_);
  } catch (const InvalidUtf8Error& e) {
    error_ = e.what();
    pos_ = text_.size();
  }
}

bool MinHashTextNormalizer::next(std::string_view& piece) {
  const auto& classes = ascii_classes();
  while (pos_ < text_.size()) {
    std::size_t end = pos_ + chunk_ < text_.size() ? pos_ + chunk_ : text_.size();
    while (end < text_.size() && static_cast<unsigned char>(text_[end]) >= 0x80U) ++end;
    const std::string_view chunk = text_.substr(pos_, end - pos_);
    pos_ = end;

    std::string_view folded = chunk;
    const bool ascii = all_ascii(chunk);
    if (!ascii) folded = normalize_key(NormalizePolicy::kNfcCasefold, chunk, folded_);

    out_.clear();
    const auto emit_space_if_owed = [&] {
      if (owed_space_) out_.push_back(' ');
      owed_space_ = false;
      wrote_any_ = true;
    };
    std::size_t i = 0;
    while (i < folded.size()) {
      const auto byte = static_cast<unsigned char>(folded[i]);
      if (byte < 0x80U) {
        ++i;
        switch (classes[byte]) {
          case AsciiClass::kSpace:
            owed_space_ = wrote_any_;
            break;
          case AsciiClass::kDrop:
            break;
          case AsciiClass::kKeep:
            emit_space_if_owed();
            out_.push_back(byte >= 'A' && byte <= 'Z' ? static_cast<char>(byte - 'A' + 'a')
                                                      : static_cast<char>(byte));
            break;
        }
        continue;
      }
      utf8proc_int32_t cp = 0;
      const utf8proc_ssize_t len =
          utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(folded.data() + i),
                           static_cast<utf8proc_ssize_t>(folded.size() - i), &cp);
      // The input was validated and utf8proc emits valid UTF-8.
      const auto n = static_cast<std::size_t>(len > 0 ? len : 1);
      const auto c = static_cast<char32_t>(cp);
      if (is_unicode_white_space(c)) {
        owed_space_ = wrote_any_;
      } else if (!is_unicode_punctuation(c)) {
        emit_space_if_owed();
        out_.append(folded.substr(i, n));
      }
      i += n;
    }
    if (!out_.empty()) {
      piece = out_;
      return true;
    }
  }
  return false;
}

std::optional<std::string> normalize_minhash_text(std::string_view text, std::string* error) {
  MinHashTextNormalizer walk(text);
  if (walk.error()) {
    if (error != nullptr) *error = *walk.error();
    return std::nullopt;
  }
  std::string out;
  std::string_view piece;
  while (walk.next(piece)) out.append(piece);
  return out;
}

}  // namespace bloomshard::core
