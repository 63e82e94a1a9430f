// One escape grammar, walked by both functions: decode_escape() reads the
// escape at `i` and says how many raw bytes it took and which code point it
// stands for, or fails.
#include "io/records/json_long_string.hpp"

#include <stdexcept>

#include "bloomshard/core/normalize.hpp"

namespace bloomshard::io {
namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 4 hex digits at raw[i..i+4), or -1.
long hex4(std::string_view raw, std::size_t i) noexcept {
  if (i + 4 > raw.size()) return -1;
  long v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int h = hex_value(raw[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

struct Escape {
  std::size_t raw_bytes = 0;  // 0: invalid
  char32_t code_point = 0;
};

// The escape starting with the backslash at raw[i].
Escape decode_escape(std::string_view raw, std::size_t i) noexcept {
  if (i + 1 >= raw.size()) return {};
  switch (raw[i + 1]) {
    case '"':
      return {2, U'"'};
    case '\\':
      return {2, U'\\'};
    case '/':
      return {2, U'/'};
    case 'b':
      return {2, U'\b'};
    case 'f':
      return {2, U'\f'};
    case 'n':
      return {2, U'\n'};
    case 'r':
      return {2, U'\r'};
    case 't':
      return {2, U'\t'};
    case 'u':
      break;
    default:
      return {};
  }
  const long hi = hex4(raw, i + 2);
  if (hi < 0 || (hi >= 0xDC00 && hi <= 0xDFFF)) return {};  // lone low surrogate
  if (hi < 0xD800 || hi > 0xDBFF) return {6, static_cast<char32_t>(hi)};
  // A high surrogate needs a \u low surrogate right after it.
  if (i + 7 >= raw.size() || raw[i + 6] != '\\' || raw[i + 7] != 'u') return {};
  const long lo = hex4(raw, i + 8);
  if (lo < 0xDC00 || lo > 0xDFFF) return {};
  return {12, static_cast<char32_t>(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))};
}

std::size_t utf8_bytes(char32_t cp) noexcept {
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

std::size_t put_utf8(char32_t cp, char* out) noexcept {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace

std::optional<std::uint64_t> json_string_unescaped_length(std::string_view raw) {
  std::uint64_t length = 0;
  std::size_t i = 0;
  while (i < raw.size()) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == '\\') {
      const Escape e = decode_escape(raw, i);
      if (e.raw_bytes == 0) return std::nullopt;
      length += utf8_bytes(e.code_point);
      i += e.raw_bytes;
      continue;
    }
    if (c < 0x20U || c == '"') return std::nullopt;  // must be escaped
    ++length;
    ++i;
  }
  // Escapes are ASCII, so the raw bytes are valid UTF-8 iff the text between
  // the escapes is.
  try {
    core::check_utf8(raw);
  } catch (const core::InvalidUtf8Error&) {
    return std::nullopt;
  }
  return length;
}

void for_each_unescaped_chunk(std::string_view raw, std::size_t chunk_bytes, std::string& scratch,
                              const std::function<void(std::string_view)>& sink) {
  if (chunk_bytes < 16) throw std::invalid_argument("for_each_unescaped_chunk: chunk_bytes < 16");
  scratch.resize(chunk_bytes);
  char* const out = scratch.data();
  std::size_t used = 0;
  std::size_t i = 0;
  while (i < raw.size()) {
    if (used + 4 > chunk_bytes) {
      sink(std::string_view(out, used));
      used = 0;
    }
    if (raw[i] == '\\') {
      const Escape e = decode_escape(raw, i);
      if (e.raw_bytes == 0) {
        throw std::invalid_argument("invalid JSON string escape at byte " + std::to_string(i));
      }
      used += put_utf8(e.code_point, out + used);
      i += e.raw_bytes;
      continue;
    }
    // A run of plain bytes up to the next escape, as much as fits.
    std::size_t run = i;
    const std::size_t limit = std::min(raw.size(), i + (chunk_bytes - used));
    while (run < limit && raw[run] != '\\') ++run;
    raw.copy(out + used, run - i, i);
    used += run - i;
    i = run;
  }
  if (used > 0) sink(std::string_view(out, used));
}

void unescape_json_string(std::string_view raw, std::string& out) {
  out.clear();
  out.reserve(raw.size());  // an escape never unescapes to more bytes than it takes
  std::string scratch;
  for_each_unescaped_chunk(raw, std::size_t{64} << 10, scratch,
                           [&](std::string_view chunk) { out.append(chunk); });
}

}  // namespace bloomshard::io
