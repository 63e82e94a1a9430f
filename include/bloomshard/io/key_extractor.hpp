// Key extraction: turns one line into the key bytes that identify its record.
// Plain lines: the key is the line itself. JSON lines: the line must be one
// complete, valid JSON object (checked fully by simdjson: its DOM parser,
// whose runtime-dispatched SIMD kernels validate the whole line, with an On
// Demand walk deciding whatever DOM refuses, so malformed values anywhere
// and trailing garbage are rejected, not just near the key); the key is the field named by a
// dotted path. A string field gives its unescaped UTF-8 bytes, an integer its
// decimal text (int64 or uint64 range); anything else is a reject. With
// duplicate member names the first occurrence wins. Path components cannot
// contain '.' (no escaping syntax). Keys longer than max_key_bytes are
// rejected. One padded buffer is reused: no allocation per record once the
// longest line has been seen.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/io/input_file.hpp"

namespace bloomshard::io {

/// Default longest key accepted: 64 KiB.
inline constexpr std::size_t kDefaultMaxKeyBytes = std::size_t{64} << 10;

/// Either a key (reject_reason empty) or a reject reason (one of
/// io::reason::*). `key` is valid until the next extract() call.
struct KeyResult {
  std::string_view key;
  std::string_view reject_reason;
  [[nodiscard]] bool ok() const noexcept { return reject_reason.empty(); }
};

struct KeyExtractorOptions {
  Format format = Format::kPlainLines;
  std::string key_path = "id";  // JSONL only: dotted path, non-empty components
  std::size_t max_key_bytes = kDefaultMaxKeyBytes;
};

class KeyExtractor {
 public:
  /// Throws std::invalid_argument for an empty path or an empty component.
  explicit KeyExtractor(KeyExtractorOptions options);
  ~KeyExtractor();
  KeyExtractor(KeyExtractor&&) noexcept;
  KeyExtractor& operator=(KeyExtractor&&) noexcept;
  KeyExtractor(const KeyExtractor&) = delete;
  KeyExtractor& operator=(const KeyExtractor&) = delete;

  /// The key of `line` (without terminator) or why it has none.
  [[nodiscard]] KeyResult extract(std::string_view line);

  [[nodiscard]] const KeyExtractorOptions& options() const noexcept { return options_; }

 private:
  struct Json;
  KeyExtractorOptions options_;
  std::unique_ptr<Json> json_;  // simdjson state, JSONL only
};

}  // namespace bloomshard::io
