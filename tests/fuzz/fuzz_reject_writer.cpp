// libFuzzer target: the reject writer's JSON escaping. Input: one selector
// byte (max_raw_bytes, raw_truncated), one split byte, then the file name
// and the raw line. Checked beyond "no crash": the reject line is one valid
// JSON object (simdjson validates UTF-8 too) ending in '\n', its fields give
// back line and reason, "raw" gives back the raw bytes (their kept prefix)
// whenever they are valid UTF-8, and "raw_base64" gives back the exact bytes
// whenever they are not; the prefix is cut only with raw_truncated set.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/output/reject_writer.hpp"

namespace {

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string b64_decode(std::string_view text) {
  if (text.size() % 4 != 0) std::abort();
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    unsigned v = 0;
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=') {
        ++pad;
        v <<= 6;
        continue;
      }
      const int d = b64_value(c);
      if (d < 0 || pad != 0) std::abort();
      v = (v << 6) | static_cast<unsigned>(d);
    }
    out += static_cast<char>((v >> 16) & 0xFFU);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xFFU);
    if (pad < 1) out += static_cast<char>(v & 0xFFU);
  }
  return out;
}

bool valid_utf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max_raw =
      (data[0] & 0x80U) != 0 ? bloomshard::io::kDefaultMaxRawBytes : std::size_t{data[0] & 0x3FU};
  const bool given_truncated = (data[0] & 0x40U) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::size_t split = std::min<std::size_t>(data[1], rest.size());
  const std::string_view file = rest.substr(0, split);
  const std::string_view raw = rest.substr(split);
  const std::uint64_t line_no = size * 2654435761ULL;

  std::string out;
  bloomshard::io::append_reject_json(out, file, line_no, "malformed JSON", raw, given_truncated,
                                     max_raw);
  if (out.empty() || out.back() != '\n') std::abort();
  if (out.find('\n') != out.size() - 1) std::abort();  // one line: '\n' inside is escaped

  static simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(out.data(), out.size() - 1).get(doc) != simdjson::SUCCESS) std::abort();
  simdjson::dom::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) std::abort();
  std::uint64_t got_line = 0;
  std::string_view got_reason, got_raw, got_file;
  if (obj["line"].get(got_line) || got_line != line_no) std::abort();
  if (obj["reason"].get(got_reason) || got_reason != "malformed JSON") std::abort();
  if (obj["raw"].get(got_raw) || obj["file"].get(got_file)) std::abort();
  if (valid_utf8(file) && got_file != file) std::abort();
  bool truncated = false;
  if (obj["raw_truncated"].get(truncated) != simdjson::SUCCESS) truncated = false;
  if (truncated != (given_truncated || raw.size() > max_raw)) std::abort();

  std::string_view b64;
  std::string_view kept;
  if (obj["raw_base64"].get(b64) == simdjson::SUCCESS) {
    bool flag = false;
    if (obj["raw_invalid_utf8"].get(flag) || !flag) std::abort();
    const std::string bytes = b64_decode(b64);
    kept = raw.substr(0, bytes.size());
    if (bytes != kept) std::abort();
    if (valid_utf8(bytes)) std::abort();  // base64 only for invalid bytes
  } else {
    if (got_raw.size() > raw.size()) std::abort();
    kept = raw.substr(0, got_raw.size());
    if (got_raw != kept) std::abort();
  }
  // The kept prefix is all of raw unless cut at max_raw (backed off at most 3).
  if (kept.size() != raw.size()) {
    if (raw.size() <= max_raw || kept.size() > max_raw || kept.size() + 3 < max_raw) std::abort();
  }
  return 0;
}
