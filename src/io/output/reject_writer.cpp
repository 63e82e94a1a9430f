// Reject lines as JSON: RFC 8259 escaping, U+FFFD for invalid UTF-8 bytes
// with the exact bytes kept in base64, raw truncated at a UTF-8 boundary.
#include "io/output/reject_writer.hpp"

#include <charconv>

#include "io/output/json_escape.hpp"

namespace bloomshard::io {
namespace {

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
