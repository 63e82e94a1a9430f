// Key normalization policies, named and versioned because saved filters
// depend on them: `none` (bytes as given), `nfc` (Unicode NFC), and
// `nfc-casefold` (NFC + full case folding), both via utf8proc.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bloomshard::core {

enum class NormalizePolicy : std::uint8_t { kNone = 0, kNfc = 1, kNfcCasefold = 2 };

/// Version of our normalization code; the Unicode version of utf8proc is
/// recorded beside it (normalization_unicode_version()).
inline constexpr std::uint32_t kNormalizationVersion = 1;

/// Thrown when a policy that needs UTF-8 meets bytes that are not UTF-8.
class InvalidUtf8Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "none", "nfc" or "nfc-casefold".
[[nodiscard]] std::string_view policy_name(NormalizePolicy p) noexcept;

/// Parses a policy name; throws std::invalid_argument naming the bad value.
[[nodiscard]] NormalizePolicy parse_policy(std::string_view name);

/// Unicode version of the linked utf8proc (e.g. "15.0.0").
[[nodiscard]] std::string_view normalization_unicode_version() noexcept;

/// Writes the normalized key into `out` (replacing its contents) and returns
/// a view of it. For kNone returns `key` itself and leaves `out` alone (no
/// copy). Throws InvalidUtf8Error for invalid UTF-8 under kNfc/kNfcCasefold.
/// NUL bytes are valid code points and are kept; the empty key stays empty.
std::string_view normalize_key(NormalizePolicy policy, std::string_view key, std::string& out);

}  // namespace bloomshard::core
