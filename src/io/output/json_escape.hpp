// JSON string escaping (RFC 8259) for everything the program writes as JSON:
// reject lines, the run manifest, metrics, annotations. Invalid UTF-8 never
// reaches a JSON file: each invalid byte becomes U+FFFD, and the caller
// learns it happened (a reject line then keeps the exact bytes in base64).
#pragma once

#include <string>
#include <string_view>

namespace bloomshard::io {

/// Appends `bytes` to `out` as the contents of a JSON string (no quotes):
/// '"', '\' and control characters escaped (\n \r \t \b \f by name, the
/// rest as \u00XX), other bytes copied; invalid UTF-8 bytes become U+FFFD.
/// Returns false iff `bytes` was not valid UTF-8 (overlong forms,
/// surrogates and code points > U+10FFFF are invalid).
bool append_json_string_contents(std::string& out, std::string_view bytes);

/// Appends `bytes` as a quoted JSON string: '"', the contents as
/// append_json_string_contents writes them, '"'. Invalid UTF-8 is replaced
/// silently (callers that must know use the contents form).
void append_json_string(std::string& out, std::string_view bytes);

}  // namespace bloomshard::io
