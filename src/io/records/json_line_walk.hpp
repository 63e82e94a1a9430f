// A grammar check of one JSONL line over the structural indexes of its run
// (private to src/io, key_extractor_lines.cpp): the cheap alternative to
// simdjson's DOM stage 2 for a line that is an ordinary object.
//
// DOM stage 2 writes a tape entry for every value and copies every string
// (unescaping it); a line's key lookup needs neither. This walk checks the
// same grammar from the same structurals and only looks at the bytes it must:
// each string's tail (its closing quote) and escapes, each number and
// literal. It answers "valid object" only where that is certain, and
// "unsure" for everything unusual (a \u escape, an escaped member name, a
// number with an exponent or more than 18 digits, deeper than 64 levels, a
// root member the lookup cannot answer from its raw bytes, any grammar
// error); the caller then asks DOM stage 2 as before, so the answer for
// those lines is unchanged. What makes "valid" certain: stage 1 of the run
// succeeded (UTF-8 valid, no control character inside a string, every string
// closed), so only grammar, escapes and scalar syntax are left, and every
// accepted form is one DOM accepts.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace bloomshard::io::json_detail {

// Nesting the walk follows; deeper lines are left to DOM (limit 255).
inline constexpr int kWalkMaxDepth = 64;

// What a root member's value is, as far as the key lookup cares.
enum class WalkedKind : std::uint8_t {
  kPlainString,  // a string without escapes: its contents are its value
  kOther,        // an object, array, true, false or null: the wrong type
  kUnsure,       // an escaped string or a number: DOM must say what it is
};

namespace walk_detail {

inline bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

inline bool only_space(const char* p, const char* end) noexcept {
  for (; p < end; ++p) {
    if (!is_space(*p)) return false;
  }
  return true;
}

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// The closing quote of the string opened at `open`, whose token ends before
// `stop`: after a closing quote only white space comes before the next
// structural (any other byte would be one), so it is the last non-blank
// byte before `stop`. nullptr when that is not a quote after `open`.
inline const char* closing_quote(const char* open, const char* stop) noexcept {
  while (stop > open + 1 && is_space(stop[-1])) --stop;
  return stop > open + 1 && stop[-1] == '"' ? stop - 1 : nullptr;
}

// True when every escape in [p, end) is one DOM turns into one byte; false
// for \u (surrogate rules are DOM's to apply) and invalid escapes. A byte
// loop: the rest of a string is short next to a memchr call per escape.
inline bool simple_escapes(const char* p, const char* end) noexcept {
  for (;; ++p) {
    while (p < end && *p != '\\') ++p;
    if (p == end) return true;
    if (end - p < 2) return false;
    switch (*++p) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        break;
      default:
        return false;
    }
  }
}

// -?(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})? and then only white space before
// `stop`: an int64 or a double DOM always parses; anything else is unsure.
static_assert(std::endian::native == std::endian::little, "skip_digits reads bytes as a word");

// Digits from p on, 8 bytes at a time (a timestamp is 10 of them): the
// bytes read past `stop` lie in the line, its terminator or the padding.
inline const char* skip_digits(const char* p, const char* stop) noexcept {
  for (;;) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    // High bit of each byte that is not '0'..'9' (little-endian).
    const std::uint64_t not_digit =
        ((x & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
        (((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL);
    if (not_digit != 0) {
      const auto n = static_cast<std::size_t>(std::countr_zero(not_digit) / 8);
      return std::min(p + n, stop);
    }
    p += 8;
    if (p >= stop) return stop;
  }
}

inline bool plain_number(const char* p, const char* stop) noexcept {
  if (p < stop && *p == '-') ++p;
  const char* digits = p;
  if (p < stop && *p == '0') {
    ++p;
  } else if (p < stop) {
    p = skip_digits(p, stop);
  }
  if (p == digits || p - digits > 18) return false;
  if (p < stop && *p == '.') {
    const char* fraction = ++p;
    if (p < stop) p = skip_digits(p, stop);
    if (p == fraction || p - fraction > 18) return false;
  }
  return only_space(p, stop);
}

inline bool literal(const char* p, const char* stop, std::string_view word) noexcept {
  return static_cast<std::size_t>(stop - p) >= word.size() &&
         std::memcmp(p, word.data(), word.size()) == 0 && only_space(p + word.size(), stop);
}

}  // namespace walk_detail

/// The backslashes of a run, found one memchr at a time as the walk goes:
/// a line whose strings hold none (most lines) costs one memchr per run,
/// not one per string.
class Backslashes {
 public:
  Backslashes(const char* begin, const char* end) noexcept : end_(end), next_(find(begin)) {}
  /// The first backslash at or after `from` (or the run's end).
  const char* first_from(const char* from) noexcept {
    if (next_ < from) next_ = find(from);
    return next_;
  }

 private:
  const char* find(const char* from) const noexcept {
    const void* hit =
        from < end_ ? std::memchr(from, '\\', static_cast<std::size_t>(end_ - from)) : nullptr;
    return hit != nullptr ? static_cast<const char*>(hit) : end_;
  }
  const char* end_;
  const char* next_;
};

/// The scalar value at `p` (a string, number or literal) whose token ends
/// before `stop`: its kind and, for a string, its raw contents. False when
/// unsure (an escape DOM must judge, a number DOM may parse otherwise, any
/// other token). Always inlined: it runs for every value of every line,
/// and as a call it cost the walk a third more instructions (callgrind).
[[gnu::always_inline]] inline bool walk_scalar(const char* p, const char* stop,
                                               Backslashes& slashes, WalkedKind& kind,
                                               std::string_view& contents) noexcept {
  using namespace walk_detail;
  if (*p == '"') {
    const char* const close = closing_quote(p, stop);
    if (close == nullptr) return false;
    const char* const slash = slashes.first_from(p + 1);
    const bool escaped = slash < close;
    if (escaped && !simple_escapes(slash, close)) return false;
    kind = escaped ? WalkedKind::kUnsure : WalkedKind::kPlainString;
    contents = std::string_view(p + 1, static_cast<std::size_t>(close - p - 1));
    return true;
  }
  if (*p == '-' || is_digit(*p)) {
    kind = WalkedKind::kUnsure;
    return plain_number(p, stop);
  }
  kind = WalkedKind::kOther;
  return literal(p, stop, "true") || literal(p, stop, "false") || literal(p, stop, "null");
}

/// walk_object_line() for the common line, a flat object of scalars, one
/// member (four structurals: name, ':', value, ',' or '}') per step, with
/// no state to keep and the structurals' loads independent of each other.
/// False for any other line, valid or not: the general walk then decides
/// (on_root_member may have been called for some members by then).
template <class OnRootMember>
bool walk_flat_object(const char* b, const std::uint32_t* st, std::uint32_t count, std::uint32_t& i,
                      std::size_t line_end, Backslashes& slashes, OnRootMember&& on_root_member) {
  using namespace walk_detail;
  if (i >= count || st[i] >= line_end || b[st[i]] != '{') return false;
  std::uint32_t k = i + 1;
  if (k >= count || st[k] >= line_end || b[st[k]] == '}') return false;
  for (;;) {
    // Structural indexes increase: the member lies in the line if its last does.
    if (k + 3 >= count || st[k + 3] >= line_end) return false;
    const char* const name = b + st[k];
    const char* const colon = b + st[k + 1];
    const char* const value = b + st[k + 2];
    const char* const next = b + st[k + 3];
    if (*name != '"' || *colon != ':') return false;
    const char* const name_close = closing_quote(name, colon);
    if (name_close == nullptr || slashes.first_from(name + 1) < name_close) return false;
    WalkedKind kind = WalkedKind::kOther;
    std::string_view contents;
    if (!walk_scalar(value, next, slashes, kind, contents)) return false;
    const std::string_view member(name + 1, static_cast<std::size_t>(name_close - name - 1));
    if (!on_root_member(member, kind, contents)) return false;
    k += 4;
    if (*next == ',') continue;
    if (*next != '}' || !only_space(next + 1, b + line_end)) return false;
    i = k;
    return true;
  }
}

/// Walks the object whose '{' is structural `i` of a run starting at `b`
/// (`st`: the run's `count` structural indexes, followed by stage 1's
/// sentinel), within the line ending at offset `line_end`; `slashes` are
/// the run's. Calls
/// `on_root_member(name, kind, contents)` for each member of the root object
/// in order; it returns false to give up. True when the line is certainly one
/// valid JSON object followed only by white space, with `i` then the first
/// structural after it; false when unsure (DOM decides).
template <class OnRootMember>
bool walk_object_line(const char* b, const std::uint32_t* st, std::uint32_t count, std::uint32_t& i,
                      std::size_t line_end, Backslashes& slashes, OnRootMember&& on_root_member) {
  using namespace walk_detail;
  enum class Expect : std::uint8_t { kValue, kAfterValue, kKey, kObjectStart, kArrayStart };
  std::uint32_t k = i;
  // The token at structural k ends before the next structural or the line end.
  const auto stop = [&](std::uint32_t at) {
    return b + std::min<std::size_t>(st[at + 1], line_end);
  };
  if (k >= count || st[k] >= line_end || b[st[k]] != '{') return false;
  std::uint64_t arrays = 0;  // bit d: level d + 1 is an array
  int depth = 1;
  ++k;
  Expect expect = Expect::kObjectStart;
  std::string_view member;  // the root member whose value comes next
  for (;;) {
    if (expect == Expect::kAfterValue && depth == 0) {
      // The root closed at structural k - 1: only white space may follow.
      if (!only_space(b + st[k - 1] + 1, b + line_end)) return false;
      i = k;
      return true;
    }
    if (k >= count || st[k] >= line_end) return false;
    const char* const p = b + st[k];
    switch (expect) {
      case Expect::kObjectStart:
      case Expect::kArrayStart:
        if (*p == (expect == Expect::kObjectStart ? '}' : ']')) {
          ++k;
          --depth;
          expect = Expect::kAfterValue;
        } else {
          expect = expect == Expect::kObjectStart ? Expect::kKey : Expect::kValue;
        }
        break;
      case Expect::kKey: {
        if (*p != '"') return false;
        const char* close = closing_quote(p, stop(k));
        // An escaped name may equal a key path once unescaped: DOM decides.
        if (close == nullptr || slashes.first_from(p + 1) < close) return false;
        member = depth == 1 ? std::string_view(p + 1, static_cast<std::size_t>(close - p - 1))
                            : std::string_view();
        ++k;
        if (k >= count || st[k] >= line_end || b[st[k]] != ':') return false;
        ++k;
        expect = Expect::kValue;
        break;
      }
      case Expect::kValue: {
        const bool root_member = depth == 1 && (arrays & 1U) == 0;
        WalkedKind kind = WalkedKind::kOther;
        std::string_view contents;
        if (*p == '{' || *p == '[') {
          if (depth == kWalkMaxDepth) return false;
          if (*p == '[') {
            arrays |= std::uint64_t{1} << depth;
          } else {
            arrays &= ~(std::uint64_t{1} << depth);
          }
          if (root_member && !on_root_member(member, kind, contents)) return false;
          ++depth;
          ++k;
          expect = *p == '{' ? Expect::kObjectStart : Expect::kArrayStart;
          break;
        }
        if (!walk_scalar(p, stop(k), slashes, kind, contents)) return false;
        if (root_member && !on_root_member(member, kind, contents)) return false;
        ++k;
        expect = Expect::kAfterValue;
        break;
      }
      case Expect::kAfterValue: {
        const bool in_array = ((arrays >> (depth - 1)) & 1U) != 0;
        if (*p == ',') {
          expect = in_array ? Expect::kValue : Expect::kKey;
        } else if (*p == (in_array ? ']' : '}')) {
          --depth;
          expect = Expect::kAfterValue;
        } else {
          return false;
        }
        ++k;
        break;
      }
    }
  }
}

}  // namespace bloomshard::io::json_detail
