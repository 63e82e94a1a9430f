// JSON string escaping: runs of bytes that need nothing copied in one go,
// UTF-8 sequences validated as they pass.
#include "io/output/json_escape.hpp"

#include <cstddef>

namespace bloomshard::io {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (overlong, surrogate, > U+10FFFF, truncated or stray continuation byte).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // > U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

// The escape of an ASCII byte below 0x20, '"' or '\'.
void append_escaped_ascii(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
  }
}

}  // namespace

bool append_json_string_contents(std::string& out, std::string_view bytes) {
  bool valid = true;
  std::size_t i = 0;
  while (i < bytes.size()) {
    // Copy the run of bytes that need no escaping in one go.
    std::size_t run = i;
    while (run < bytes.size()) {
      const auto c = static_cast<unsigned char>(bytes[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out.append(bytes.data() + i, run - i);
    i = run;
    if (i == bytes.size()) break;
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x80) {
      append_escaped_ascii(out, c);
      ++i;
    } else if (const std::size_t len = utf8_sequence_length(bytes, i); len != 0) {
      out.append(bytes.data() + i, len);
      i += len;
    } else {
      out += kReplacement;
      valid = false;
      ++i;
    }
  }
  return valid;
}

void append_json_string(std::string& out, std::string_view bytes) {
  out += '"';
  (void)append_json_string_contents(out, bytes);
  out += '"';
}

}  // namespace bloomshard::io
