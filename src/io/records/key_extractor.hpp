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
// longest line has been seen. Several key paths (a composite key, see
// core/key_builder.hpp) are looked up in one DOM parse; a line that needs
// the On Demand walk is walked once per path (the values are then copied).
// Long lines (over long_line_bytes, 1 MiB): every string value of more than
// kLongStringRawBytes is checked by io/records/json_long_string.hpp (simdjson's own
// rules) and replaced by a short placeholder before simdjson sees the line,
// so simdjson's buffers grow with the line's structure, not with its text;
// a key field that is such a string is unescaped from the line itself
// (materialized, or left escaped for streaming with stream_long_values).
// Accepted lines, values and reject reasons are the short-line path's
// (tests/io/test_key_extractor_long.cpp). Memory for a line of one 100 MB
// string: this buffer holds the line minus that string (no copy of it);
// docs/keys.md has the figures.
//
// Many lines per parse: extract_lines() takes a run of lines as
// the reader buffers them (back to back, each followed by "\n" or "\r\n")
// and indexes up to 64 KiB of them with one simdjson stage 1, then checks
// each ordinary line with a grammar walk over its structurals (values of
// root members come back as views into the line) and builds the DOM of the
// others with one stage 2 (src/io/records/key_extractor_lines.cpp), all where the
// lines lie (no copy). A line takes that answer only when it is
// provably the per-line answer; every other line is decided by
// extract_fields(), so accepted lines, values and reject reasons are the
// per-line path's (tests/io/test_key_extractor_lines.cpp and the
// key-extractor fuzz target compare the two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "io/records/input_file.hpp"

namespace bloomshard::io {

/// Default longest key accepted: 64 KiB.
inline constexpr std::size_t kDefaultMaxKeyBytes = std::size_t{64} << 10;
/// JSON lines longer than this take their long strings out before parsing.
inline constexpr std::size_t kDefaultLongLineBytes = std::size_t{1} << 20;
/// A string token (quotes included) longer than this is a long string.
inline constexpr std::size_t kLongStringRawBytes = 1024;

/// Either a key (reject_reason empty) or a reject reason (one of
/// io::reason::*). `key` is valid until the next extract() call.
struct KeyResult {
  std::string_view key;
  std::string_view reject_reason;
  [[nodiscard]] bool ok() const noexcept { return reject_reason.empty(); }
};

/// The values of every key path of one line (reject_reason empty), or why
/// the line has none. The views are valid until the next extract call.
struct FieldsResult {
  std::span<const std::string_view> values;
  std::string_view reject_reason;
  /// With KeyExtractorOptions::stream_long_values: empty, or one entry per
  /// value; a non-empty entry is a long string value left escaped (the raw
  /// bytes between its quotes, a view into the line; unescape it with
  /// io/records/json_long_string.hpp), and values[i] is then empty.
  std::span<const std::string_view> escaped = {};
  [[nodiscard]] bool ok() const noexcept { return reject_reason.empty(); }
};

struct KeyExtractorOptions {
  Format format = Format::kPlainLines;
  std::string key_path = "id";  // JSONL only: dotted path, non-empty components
  /// Longest value accepted (each field); SIZE_MAX for digest keys.
  std::size_t max_key_bytes = kDefaultMaxKeyBytes;
  /// JSONL only: when not empty, the key paths of a composite key (in
  /// order), used instead of key_path.
  std::vector<std::string> key_paths;
  /// A missing field gives "" instead of a kKeyMissing reject.
  bool missing_is_empty = false;
  /// JSONL only: lines longer than this take their long strings out first
  /// (tests lower it to 0 to run every line through that path).
  std::size_t long_line_bytes = kDefaultLongLineBytes;
  /// A key value that is a long string comes back escaped (FieldsResult::
  /// escaped) instead of unescaped into a copy.
  bool stream_long_values = false;
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

  /// Every key path's value of `line` (plain lines: the line, one value),
  /// in the order of key_paths (or key_path alone), or the reject reason of
  /// the first field in that order that has none.
  [[nodiscard]] FieldsResult extract_fields(std::string_view line);

  /// The fields of each of `lines` in order, exactly as extract_fields()
  /// gives them, handed to `sink(index, const FieldsResult&)` (its views
  /// are valid during that call only); a sink that returns false stops the
  /// walk after its line. Returns how many lines were handed over. Every
  /// line must have io::kLinePaddingBytes readable bytes after it (lines
  /// from RecordReader::peek_lines() do); lines that follow each other in
  /// memory with only a line terminator between them are parsed many at a
  /// time.
  template <typename Sink>
  std::size_t extract_lines(std::span<const std::string_view> lines, Sink&& sink) {
    using S = std::remove_reference_t<Sink>;
    return extract_lines_with(
        lines,
        [](void* s, std::size_t i, const FieldsResult& r) { return (*static_cast<S*>(s))(i, r); },
        const_cast<void*>(static_cast<const void*>(&sink)));
  }

  /// Lines extract_lines() took from a document stream so far (the others
  /// went through extract_fields()): for tests and benchmarks.
  [[nodiscard]] std::uint64_t lines_streamed() const noexcept;

  [[nodiscard]] const KeyExtractorOptions& options() const noexcept { return options_; }

 private:
  using SinkFn = bool (*)(void* sink, std::size_t index, const FieldsResult& result);
  std::size_t extract_lines_with(std::span<const std::string_view> lines, SinkFn fn, void* sink);

  struct Json;
  KeyExtractorOptions options_;
  std::unique_ptr<Json> json_;   // simdjson state, JSONL only
  std::string_view line_value_;  // plain lines: the one value of extract_fields
};

}  // namespace bloomshard::io
