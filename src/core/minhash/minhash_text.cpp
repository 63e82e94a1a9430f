// minhash-text/v1 (minhash_text.hpp). ASCII runs, most of a web corpus,
// skip utf8proc: their caseless form is A-Z -> a-z and the category of each
// ASCII byte comes from a table filled from utf8proc itself; runs of
// letters, digits and single spaces are lowered and copied up to 16 bytes at
// a time (SSE2).
#include "core/minhash/minhash_text.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

constexpr std::size_t kAsciiBlock = 16;

#if defined(__SSE2__)
__m128i bytes_in_range(__m128i v, char lo, char hi) noexcept {
  // Signed compares: bytes >= 0x80 are negative, below every range here.
  return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                       _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
}
#endif

// The common case of running text, 16 bytes at a time: letters, digits and
// single spaces between them, where minhash-text/v1 only lowers A-Z. Takes
// the longest such prefix of the block (up to the first punctuation, other
// white space, second space of a run or non-ASCII byte), writes it (and a
// space owed from before it; a space it ends with becomes owed) and returns
// its length; returns 0, writing nothing, when the block starts with a byte
// the byte loop must take (a space before any word or after an owed one,
// or any byte outside the prefix's set). Stores 16 bytes at `out`: the
// caller has room for them.
std::size_t copy_plain_ascii_prefix(const char* in, char*& out, bool& owed_space,
                                    bool& wrote_any) noexcept {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m128i upper = bytes_in_range(v, 'A', 'Z');
  const __m128i keep =
      _mm_or_si128(_mm_or_si128(upper, bytes_in_range(v, 'a', 'z')), bytes_in_range(v, '0', '9'));
  const auto kept = static_cast<unsigned>(_mm_movemask_epi8(keep));
  const auto spaces =
      static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
  if ((spaces & 1U) != 0 && (!wrote_any || owed_space)) return 0;
  const unsigned stop = (~(kept | spaces) & 0xFFFFU) | (spaces & (spaces << 1U));
  const std::size_t length =
      stop == 0 ? kAsciiBlock : static_cast<std::size_t>(std::countr_zero(stop));
  if (length == 0) return 0;
  const bool ends_with_space = ((spaces >> (length - 1)) & 1U) != 0;
  const std::size_t written = length - (ends_with_space ? 1 : 0);
  if (written == 0) {  // one space after a word: owed to the next one
    owed_space = true;
    return length;
  }
  if (owed_space) *out++ = ' ';  // the first byte is a kept one
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_add_epi8(v, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
  out += written;
  owed_space = ends_with_space;
  wrote_any = true;
  return length;
#else
  (void)in, (void)out, (void)owed_space, (void)wrote_any;
  return 0;
#endif
}

// The end of the run of ASCII bytes of `s` from `i`, 8 bytes at a time.
std::size_t ascii_run_end(std::string_view s, std::size_t i) noexcept {
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  while (i + 8 <= s.size()) {
    std::uint64_t word = 0;
    std::memcpy(&word, s.data() + i, 8);
    if ((word & kHighBits) != 0) break;
    i += 8;
  }
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80U) ++i;
  return i;
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

MinHashTextNormalizer::MinHashTextNormalizer(std::string_view text, std::size_t chunk) {
  reset(text, chunk);
}

void MinHashTextNormalizer::reset(std::string_view text, std::size_t chunk) {
  text_ = text;
  chunk_ = chunk == 0 ? text.size() : chunk;
  pos_ = 0;
  error_.reset();
  piece_size_ = 0;
  wrote_any_ = false;
  owed_space_ = false;
  try {
    check_utf8(text_);
  } catch (const InvalidUtf8Error& e) {
    error_ = e.what();
    pos_ = text_.size();
  }
}

char* MinHashTextNormalizer::piece_room(std::size_t more) {
  if (piece_capacity_ - piece_size_ < more) {
    const std::size_t capacity = std::max(piece_size_ + more, 2 * piece_capacity_);
    std::unique_ptr<char[]> bigger(new char[capacity]);  // not zero-filled
    if (piece_size_ != 0) std::memcpy(bigger.get(), piece_.get(), piece_size_);
    piece_ = std::move(bigger);
    piece_capacity_ = capacity;
  }
  return piece_.get() + piece_size_;
}

void MinHashTextNormalizer::filter_into_piece(std::string_view folded) {
  // Writes through a pointer into room made up front: each input code point
  // gives at most itself and one owed space before it. The state lives in
  // locals: a store through a char pointer may alias any member, so members
  // would be reloaded and stored again for every byte.
  char* out = piece_room(2 * folded.size());
  const auto& classes = ascii_classes();
  bool owed_space = owed_space_;
  bool wrote_any = wrote_any_;
  const char* const in = folded.data();
  const std::size_t size = folded.size();
  std::size_t i = 0;
  while (i < size) {
    const auto byte = static_cast<unsigned char>(in[i]);
    if (byte < 0x80U) {
      if (i + kAsciiBlock <= size) {
        const std::size_t took = copy_plain_ascii_prefix(in + i, out, owed_space, wrote_any);
        if (took != 0) {
          i += took;
          continue;
        }
      }
      ++i;
      const AsciiClass cls = classes[byte];
      if (cls == AsciiClass::kKeep) {
        *out = ' ';  // kept only when owed: no branch on the common path
        out += owed_space ? 1 : 0;
        owed_space = false;
        wrote_any = true;
        *out++ = byte >= 'A' && byte <= 'Z' ? static_cast<char>(byte - 'A' + 'a')
                                            : static_cast<char>(byte);
      } else if (cls == AsciiClass::kSpace) {
        owed_space = wrote_any;
      }
      continue;
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(in + i),
                                                  static_cast<utf8proc_ssize_t>(size - i), &cp);
    // The input was validated and utf8proc emits valid UTF-8.
    const auto n = static_cast<std::size_t>(len > 0 ? len : 1);
    const auto c = static_cast<char32_t>(cp);
    if (is_unicode_white_space(c)) {
      owed_space = wrote_any;
    } else if (!is_unicode_punctuation(c)) {
      if (owed_space) *out++ = ' ';
      owed_space = false;
      wrote_any = true;
      std::memcpy(out, in + i, n);
      out += n;
    }
    i += n;
  }
  owed_space_ = owed_space;
  wrote_any_ = wrote_any;
  piece_size_ = static_cast<std::size_t>(out - piece_.get());
}

bool is_minhash_text_cut_point(char32_t cp) noexcept {
  // CJK Unified Ideographs (and Extension A) and Hangul syllables have no
  // decomposition that starts with a mark (a syllable decomposes to a
  // leading jamo, itself never a second) and no case folding; punctuation
  // and white space (some decompose, to one starter: U+2000 -> U+2002)
  // neither. A test checks the combining class of each through utf8proc.
  if (cp < 0x80U) return true;
  if ((cp >= 0x4E00U && cp <= 0x9FFFU) || (cp >= 0x3400U && cp <= 0x4DBFU) ||
      (cp >= 0xAC00U && cp <= 0xD7A3U)) {
    return true;
  }
  return is_unicode_white_space(cp) || is_unicode_punctuation(cp);
}

std::size_t MinHashTextNormalizer::cut_at_or_after(std::size_t target) const noexcept {
  for (std::size_t end = target; end < text_.size(); ++end) {
    const auto byte = static_cast<unsigned char>(text_[end]);
    if (byte < 0x80U) return end;
    if ((byte & 0xC0U) == 0x80U) continue;  // inside a code point
    utf8proc_int32_t cp = 0;
    utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text_.data() + end),
                     static_cast<utf8proc_ssize_t>(text_.size() - end), &cp);
    if (cp >= 0 && is_minhash_text_cut_point(static_cast<char32_t>(cp))) return end;
  }
  return text_.size();
}

bool MinHashTextNormalizer::next(std::string_view& piece) {
  while (pos_ < text_.size()) {
    const std::size_t end =
        pos_ + chunk_ < text_.size() ? cut_at_or_after(pos_ + chunk_) : text_.size();
    const std::string_view chunk = text_.substr(pos_, end - pos_);
    pos_ = end;

    // Inside the chunk too, a cut before any ASCII byte is exact: ASCII
    // runs take the fast path, and each non-ASCII run goes through utf8proc
    // with the ASCII byte before it (which may compose with a following
    // combining mark: "e" U+0301).
    piece_size_ = 0;
    std::size_t i = 0;
    while (i < chunk.size()) {
      const std::size_t j = ascii_run_end(chunk, i);
      if (j == chunk.size()) {
        filter_into_piece(chunk.substr(i));
        break;
      }
      const std::size_t run_start = j > i ? j - 1 : j;
      filter_into_piece(chunk.substr(i, run_start - i));
      std::size_t k = j;
      while (k < chunk.size() && static_cast<unsigned char>(chunk[k]) >= 0x80U) ++k;
      filter_into_piece(normalize_key(NormalizePolicy::kNfcCasefold,
                                      chunk.substr(run_start, k - run_start), folded_));
      i = k;
    }
    if (piece_size_ != 0) {
      piece = std::string_view(piece_.get(), piece_size_);
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
