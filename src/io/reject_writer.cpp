// Reject lines as JSON: RFC 8259 escaping, U+FFFD for invalid UTF-8 bytes
// with the exact bytes kept in base64, raw truncated at a UTF-8 boundary.
#include "bloomshard/io/reject_writer.hpp"

#include <charconv>

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

void append_base64(std::string& out, std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  const auto at = [&](std::size_t k) {
    return static_cast<unsigned>(static_cast<unsigned char>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 0) return;
  const unsigned v = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0U);
  out += kAlphabet[(v >> 18) & 63];
  out += kAlphabet[(v >> 12) & 63];
  out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
  out += '=';
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
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(bytes, i);
      if (len == 0) {
        out += kReplacement;
        valid = false;
        ++i;
      } else {
        out.append(bytes.data() + i, len);
        i += len;
      }
      continue;
    }
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
    ++i;
  }
  return valid;
}

void append_reject_json(std::string& out, std::string_view file, std::uint64_t line,
                        std::string_view reason, std::string_view raw, bool raw_truncated,
                        std::size_t max_raw_bytes) {
  if (raw.size() > max_raw_bytes) {
    std::size_t cut = max_raw_bytes;
    // Do not split a UTF-8 sequence: back off to its lead byte (at most 3).
    for (int k = 0; k < 3 && cut > 0 && (static_cast<unsigned char>(raw[cut]) & 0xC0) == 0x80;
         ++k) {
      --cut;
    }
    raw = raw.substr(0, cut);
    raw_truncated = true;
  }
  out += "{\"file\":\"";
  append_json_string_contents(out, file);
  out += "\",\"line\":";
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, line);
  out.append(digits, r.ptr);
  out += ",\"reason\":\"";
  append_json_string_contents(out, reason);
  out += "\",\"raw\":\"";
  const bool valid = append_json_string_contents(out, raw);
  out += '"';
  if (raw_truncated) out += ",\"raw_truncated\":true";
  if (!valid) {
    out += ",\"raw_invalid_utf8\":true,\"raw_base64\":\"";
    append_base64(out, raw);
    out += '"';
  }
  out += "}\n";
}

RejectWriter RejectWriter::create(const std::filesystem::path& path, std::size_t max_raw_bytes,
                                  OutputOptions options) {
  RejectWriter w;
  w.out_ = OutputWriter::create(path, Compression::kNone, options);
  w.max_raw_bytes_ = max_raw_bytes;
  return w;
}

RejectWriter RejectWriter::open_for_resume(const std::filesystem::path& path,
                                           std::uint64_t committed_length, RejectCounts counts,
                                           std::size_t max_raw_bytes) {
  RejectWriter w;
  w.out_ = OutputWriter::open_for_resume(path, Compression::kNone, committed_length);
  w.max_raw_bytes_ = max_raw_bytes;
  w.counts_ = std::move(counts);
  for (const auto& [reason, n] : w.counts_) w.total_ += n;
  return w;
}

void RejectWriter::write(std::string_view file, std::uint64_t line, std::string_view reason,
                         std::string_view raw, bool raw_truncated) {
  scratch_.clear();
  append_reject_json(scratch_, file, line, reason, raw, raw_truncated, max_raw_bytes_);
  out_.write_bytes(scratch_);
  if (auto it = counts_.find(reason); it != counts_.end()) {
    ++it->second;
  } else {
    counts_.emplace(std::string(reason), 1);
  }
  ++total_;
}

void RejectWriter::append_lines(std::string_view lines) { out_.write_bytes(lines); }

}  // namespace bloomshard::io
