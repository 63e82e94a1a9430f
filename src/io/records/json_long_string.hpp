// Long JSON string values without a DOM: the checks simdjson makes on a
// string's contents, and its unescaped bytes produced in bounded chunks.
// The key extractor uses them to take the long strings out of a long line
// before simdjson sees it (a 100 MB text field would otherwise cost
// simdjson's structural index, about 4 bytes per input byte, plus its
// unescaped copy), and the key builder digests a long key value from the
// chunks. The rules are simdjson 3.0's, checked by tests/io against it:
// the contents must be valid UTF-8 (no overlongs, surrogates or code points
// above U+10FFFF), hold no byte below 0x20 (0x7F is allowed), and escapes
// are \" \\ \/ \b \f \n \r \t and \uXXXX (hex digits of either case),
// where a high surrogate must be followed by a \u low surrogate and a lone
// low surrogate is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace bloomshard::io {

/// Bytes of the unescaped value of the string whose raw contents (the bytes
/// between its quotes) are `raw`, or nullopt when simdjson would refuse
/// them. One pass, no allocation.
[[nodiscard]] std::optional<std::uint64_t> json_string_unescaped_length(std::string_view raw);

/// Calls `sink` with the unescaped value of `raw` in consecutive chunks of at
/// most `chunk_bytes` (>= 16) bytes, built in `scratch`; the chunks
/// concatenated are the value. `raw` must have passed
/// json_string_unescaped_length (std::invalid_argument otherwise, at the
/// first bad escape). Memory: `scratch` holds one chunk.
void for_each_unescaped_chunk(std::string_view raw, std::size_t chunk_bytes, std::string& scratch,
                              const std::function<void(std::string_view)>& sink);

/// The whole unescaped value of `raw` in `out` (replacing it).
void unescape_json_string(std::string_view raw, std::string& out);

}  // namespace bloomshard::io
