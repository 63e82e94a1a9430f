// The fixed reject reasons of the read path. They are metric labels (counts
// by reason) and appear verbatim in reject files, so they never change
// wording once released.
#pragma once

#include <string_view>

namespace bloomshard::io::reason {

inline constexpr std::string_view kLineTooLong = "line too long";
inline constexpr std::string_view kEmptyLine = "empty line";  // JSONL: empty or whitespace only
inline constexpr std::string_view kMalformedJson = "malformed JSON";
inline constexpr std::string_view kNotAnObject = "JSON line is not an object";
inline constexpr std::string_view kKeyMissing = "key field missing";
inline constexpr std::string_view kKeyWrongType = "key field is not a string or integer";
inline constexpr std::string_view kKeyIntegerRange = "key integer out of 64-bit range";
inline constexpr std::string_view kKeyTooLong = "key too long";

}  // namespace bloomshard::io::reason
