// Normalization policies over utf8proc 2.8. Keys are passed with their
// length (never UTF8PROC_NULLTERM), so U+0000 inside a key is an ordinary
// code point. Pure-ASCII keys (URLs, hex digests, most IDs) skip utf8proc:
// ASCII is already NFC, its NFD is itself, and its full case folding is
// plain A-Z -> a-z, so every policy and version agrees on them.
// nfc-casefold/v2 costs three utf8proc passes (NFD, fold, NFC) where v1
// cost one; only non-ASCII keys pay it.
#include "bloomshard/core/normalize.hpp"

#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace bloomshard::core {
namespace {

[[noreturn]] void throw_invalid(std::size_t offset, const char* why) {
  throw InvalidUtf8Error("invalid UTF-8 at byte " + std::to_string(offset) + ": " + why);
}

bool is_cont(unsigned char c) noexcept { return (c & 0xC0U) == 0x80U; }

// Validates the same rules utf8proc_iterate enforces (no overlongs, no
// surrogates, nothing above U+10FFFF) but reports where and why, which
// utf8proc's bare error code does not. `i` starts at the first non-ASCII byte.
void validate_utf8(std::string_view key, std::size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(key.data());
  const std::size_t n = key.size();
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80U) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    if (c < 0xC2U) {
      throw_invalid(i, c < 0xC0U ? "continuation byte without a lead byte"
                                 : "overlong 2-byte sequence (lead byte 0xC0/0xC1)");
    } else if (c < 0xE0U) {
      len = 2;
    } else if (c < 0xF0U) {
      len = 3;
    } else if (c < 0xF5U) {
      len = 4;
    } else {
      throw_invalid(i, "lead byte 0xF5..0xFF is never valid");
    }
    if (n - i < len) throw_invalid(i, "sequence truncated by the end of the key");
    for (std::size_t j = 1; j < len; ++j) {
      if (!is_cont(s[i + j])) throw_invalid(i + j, "expected a continuation byte");
    }
    const unsigned char c1 = s[i + 1];
    if (len == 3) {
      if (c == 0xE0U && c1 < 0xA0U) throw_invalid(i, "overlong 3-byte sequence");
      if (c == 0xEDU && c1 > 0x9FU) throw_invalid(i, "UTF-16 surrogate (U+D800..U+DFFF)");
    } else if (len == 4) {
      if (c == 0xF0U && c1 < 0x90U) throw_invalid(i, "overlong 4-byte sequence");
      if (c == 0xF4U && c1 > 0x8FU) throw_invalid(i, "code point above U+10FFFF");
    }
    i += len;
  }
}

std::size_t first_non_ascii(std::string_view key) noexcept {
  std::size_t i = 0;
  for (const char ch : key) {
    if (static_cast<unsigned char>(ch) >= 0x80U) return i;
    ++i;
  }
  return key.size();
}

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* p) const noexcept { std::free(p); }
};

// One utf8proc_map pass over valid UTF-8 `in` into `out`. Options:
// DECOMPOSE alone is NFD; CASEFOLD alone is toCasefold (full folding, C+F,
// no reordering: utf8proc reorders only under COMPOSE or DECOMPOSE);
// COMPOSE is NFC (it decomposes and reorders first).
void utf8proc_pass(std::string_view in, int options, std::string& out) {
  if (in.size() > static_cast<std::size_t>(PTRDIFF_MAX) / 8) {
    throw std::length_error("normalize_key: key too long for utf8proc");
  }
  utf8proc_uint8_t* raw = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data()),
                                          static_cast<utf8proc_ssize_t>(in.size()), &raw,
                                          static_cast<utf8proc_option_t>(options));
  const std::unique_ptr<utf8proc_uint8_t, FreeDeleter> holder(raw);
  if (n < 0) {
    if (n == UTF8PROC_ERROR_NOMEM) throw std::bad_alloc();
    if (n == UTF8PROC_ERROR_INVALIDUTF8) {
      throw InvalidUtf8Error("invalid UTF-8 (rejected by utf8proc)");
    }
    throw std::runtime_error(std::string("utf8proc_map failed: ") + utf8proc_errmsg(n));
  }
  out.assign(reinterpret_cast<const char*>(raw), static_cast<std::size_t>(n));
}

}  // namespace

std::string_view policy_name(NormalizePolicy p) noexcept {
  switch (p) {
    case NormalizePolicy::kNone:
      return "none";
    case NormalizePolicy::kNfc:
      return "nfc";
    case NormalizePolicy::kNfcCasefold:
    case NormalizePolicy::kNfcCasefoldV1:
      return "nfc-casefold";
  }
  return "unknown";
}

std::uint32_t policy_version(NormalizePolicy p) noexcept {
  return p == NormalizePolicy::kNfcCasefold ? 2U : 1U;
}

std::string policy_label(NormalizePolicy p) {
  return std::string(policy_name(p)) + "/v" + std::to_string(policy_version(p));
}

NormalizePolicy parse_policy(std::string_view name) {
  // The bare name means the current version, which is listed first.
  for (const auto p : kAllPolicies) {
    if (name == policy_name(p) || name == policy_label(p)) return p;
  }
  throw std::invalid_argument("unknown normalization policy '" + std::string(name) +
                              "' (expected none, nfc, nfc-casefold or nfc-casefold/v1)");
}

void check_utf8(std::string_view text) { validate_utf8(text, first_non_ascii(text)); }

std::string_view normalization_unicode_version() noexcept { return utf8proc_unicode_version(); }

std::string_view normalize_key(NormalizePolicy policy, std::string_view key, std::string& out) {
  if (policy == NormalizePolicy::kNone) return key;
  const bool known = policy == NormalizePolicy::kNfc || policy == NormalizePolicy::kNfcCasefold ||
                     policy == NormalizePolicy::kNfcCasefoldV1;
  if (!known) {
    throw std::invalid_argument("normalize_key: unknown policy value " +
                                std::to_string(static_cast<unsigned>(policy)));
  }
  const bool fold = policy != NormalizePolicy::kNfc;

  const std::size_t ascii_end = first_non_ascii(key);
  if (ascii_end == key.size()) {
    out.assign(key);
    if (fold) {
      for (char& ch : out) {
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
      }
    }
    return out;
  }

  validate_utf8(key, ascii_end);
  switch (policy) {
    case NormalizePolicy::kNfc:
      utf8proc_pass(key, UTF8PROC_STABLE | UTF8PROC_COMPOSE, out);
      break;
    case NormalizePolicy::kNfcCasefoldV1:
      // Folds each code point as given, then NFC: folding before canonical
      // reordering is what makes v1 miss some canonical equivalents.
      utf8proc_pass(key, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD, out);
      break;
    default: {
      // D145 canonical caseless matching, NFD(toCasefold(NFD(X))), then NFC
      // (NFC of an NFD string is NFC of the string, so the last NFD is
      // inside the COMPOSE pass).
      std::string nfd;
      utf8proc_pass(key, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE, nfd);
      std::string folded;
      utf8proc_pass(nfd, UTF8PROC_CASEFOLD, folded);
      utf8proc_pass(folded, UTF8PROC_STABLE | UTF8PROC_COMPOSE, out);
      break;
    }
  }
  return out;
}

}  // namespace bloomshard::core
