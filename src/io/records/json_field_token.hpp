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
#include <span>
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

/// Maps offsets into the string token's unescaped value `value` to offsets
/// into `line`, in place (`offsets` ascending, each <= value.size()), when
/// the token is already written as replace_string_token() would write it:
/// every escape one that append_json_string_contents makes (\" \\ \b \f
/// \n \r \t, \u00XX in lower case for other control characters), no raw
/// control character. Then the line's bytes between two mapped offsets are
/// exactly what replace_string_token() would write for the value's bytes
/// between them, so a caller can cut pieces out of the value by copying
/// the line's bytes around them, without unescaping and escaping again
/// (docs/performance.md: ~4% of the paragraph job's CPU). Returns false,
/// leaving `offsets` unspecified, for any other token (\u00e9, \/, an
/// offset inside an escape, a token that does not decode to `value`): the
/// caller then uses replace_string_token(). The token's raw UTF-8 must be
/// valid, as it is in a line find_string() found (simdjson validates it).
/// Cost: one memchr-speed pass over the token.
[[nodiscard]] bool map_canonical_token_offsets(std::string_view line, TokenSpan token,
                                               std::string_view value,
                                               std::span<std::size_t> offsets) noexcept;

}  // namespace bloomshard::io
