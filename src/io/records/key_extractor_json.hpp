// The simdjson state behind KeyExtractor (private to src/io): shared by the
// per-line path (key_extractor.cpp) and the many-lines path
// (key_extractor_lines.cpp).
#pragma once

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/records/key_extractor.hpp"

namespace bloomshard::io {
namespace json_detail {

class Backslashes;  // json_line_walk.hpp

// Nesting beyond this is rejected as malformed: the walk is recursive and a
// 16 MiB line of '[' must not overflow the stack.
inline constexpr int kMaxJsonDepth = 256;

// DOM nesting limit. The walk accepts a scalar at depth 256 (root object =
// 1); DOM counts containers only, so a limit one lower keeps every document
// DOM accepts within what the walk accepts. Deeper documents fall back.
inline constexpr std::size_t kDomMaxDepth = kMaxJsonDepth - 1;

// Longer lines skip DOM: its tape and string buffers take about 14 bytes per
// input byte, kept for the extractor's life, so this bounds them to ~14 MiB.
inline constexpr std::size_t kDomMaxLineBytes = std::size_t{1} << 20;

inline bool is_json_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

}  // namespace json_detail

struct KeyExtractor::Json {
  // A long string of the current line: its raw contents (a view into the
  // line) and unescaped length.
  struct LongString {
    std::size_t begin = 0;  // token [begin, end) in the line, quotes included
    std::size_t end = 0;
    std::uint64_t length = 0;
  };
  enum class Compaction { kDone, kMalformed, kNotWorth };

  simdjson::dom::parser dom_parser;
  bool dom_ready = false;            // dom_parser allocated with kDomMaxDepth
  simdjson::dom::parser run_parser;  // extract_lines: stage 1 per run, stage 2 per line
  bool run_ready = false;            // run_parser allocated (key_extractor_lines.cpp)
  bool walk_root_fields = false;     // every key path is one root member (walk_line)
  std::vector<KeyResult> walked;     // walk_line's lookups, one per key path
  std::uint64_t streamed = 0;        // lines_streamed()
  std::size_t last_handed = 0;       // extract_lines: lines handed to the sink so far
  simdjson::ondemand::parser parser;
  std::unique_ptr<char[]> buf;  // line copy + SIMDJSON_PADDING, grown to the longest line
  std::size_t cap = 0;
  std::vector<std::vector<std::string>> paths;  // every key path, split at '.'
  std::vector<std::string> path;                // the path the On Demand walk follows
  std::size_t max_key_bytes = 0;
  bool missing_is_empty = false;
  char int_text[24] = {};
  std::vector<std::array<char, 24>> int_texts;  // DOM: one decimal text per key path
  std::vector<std::string_view> values;         // extract_fields' answer
  std::vector<std::string> owned;               // On Demand values of a composite key
  // Outcome of the current line's key lookup (first occurrence wins).
  std::string_view key;
  std::string_view key_reason;
  // Long lines only (empty otherwise).
  std::size_t long_line_bytes = kDefaultLongLineBytes;
  bool stream_long_values = false;
  std::string_view line;                  // the line being extracted
  std::vector<LongString> longs;          // its long strings, in line order
  std::vector<std::string_view> escaped;  // extract_fields' escaped answer
  std::vector<std::string> unescaped;     // materialized long values

  FieldsResult extract_fields(std::string_view line);
  // key_extractor_lines.cpp
  std::size_t extract_lines(std::span<const std::string_view> lines, SinkFn fn, void* sink);
  bool decide_run(std::span<const std::string_view> run, std::size_t first_index, SinkFn fn,
                  void* sink, int splits_left);
  bool walk_line(const char* begin, const std::uint32_t* structurals, std::uint32_t count,
                 std::uint32_t& at, std::size_t line_end, json_detail::Backslashes& slashes);
  FieldsResult walked_fields();
  bool decide_alone(std::span<const std::string_view> lines, std::size_t first_index, SinkFn fn,
                    void* sink);
  // key_extractor.cpp
  FieldsResult fields_from_dom(simdjson::dom::element root);
  bool settle(std::size_t i, const KeyResult& r);
  void reserve(std::size_t len);
  Compaction compact(std::string_view text, std::size_t& compact_len);
  FieldsResult extract_buffered(std::size_t len);
  FieldsResult resolve_long_values(FieldsResult r);
  [[nodiscard]] std::uint64_t value_length(std::string_view v) const noexcept;
  bool parse_dom(std::size_t len, simdjson::dom::element& root);
  KeyResult lookup_dom(simdjson::dom::element element, const std::vector<std::string>& p,
                       std::array<char, 24>& digits) const;
  KeyResult extract_on_demand(std::size_t len);
  simdjson::error_code walk(simdjson::ondemand::value& v, int depth, int level);
  simdjson::error_code walk_object(simdjson::ondemand::object& o, int depth, int level);
  simdjson::error_code take_key(simdjson::ondemand::value& v, int depth);
  simdjson::error_code validate_number(simdjson::ondemand::value& v);
  simdjson::error_code validate_root(simdjson::ondemand::document& doc,
                                     simdjson::ondemand::json_type type);
};

}  // namespace bloomshard::io
