// Where a JSONL record's string field sits in the line, as raw bytes, and
// the line with that one value replaced: how --unit paragraph rewrites a
// record's text field while every other byte of the line (key order,
// spacing, the escapes of other fields) stays as it was read. The new value
// is written as a JSON string with the escapes of
// io::append_json_string_contents: '"' and '\' escaped, control
// characters as \b \f \n \r \t or \u00XX, everything else (non-ASCII,
// '/', U+2028) as raw UTF-8; so the field's own original escapes (\u00e9,
// \/) are not kept. The line must already have passed the key extractor
// (valid JSON object). One parser and padded buffer reused per rank.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace bloomshard::io {

/// [begin, end) of a value token in a line, quotes included for a string.
struct TokenSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

class JsonFieldToken {
 public:
  /// `dotted_path` as --key-field ("a.b"); the first member of each name
  /// wins, as in the key extractor.
  explicit JsonFieldToken(std::string dotted_path);
  ~JsonFieldToken();
  JsonFieldToken(JsonFieldToken&&) noexcept;
  JsonFieldToken& operator=(JsonFieldToken&&) noexcept;
  JsonFieldToken(const JsonFieldToken&) = delete;
  JsonFieldToken& operator=(const JsonFieldToken&) = delete;

  /// The raw token of the field's value when it is a JSON string; nullopt
  /// when the field is missing or not a string (or the line cannot be
  /// walked).
  [[nodiscard]] std::optional<TokenSpan> find_string(std::string_view line);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Writes `line` with the bytes of `token` replaced by `value` as a JSON
/// string literal (quotes included) into `out`; returns a view of it.
std::string_view replace_string_token(std::string_view line, TokenSpan token,
                                      std::string_view value, std::string& out);

}  // namespace bloomshard::io
