// Key normalization policies, named and versioned because saved filters
// depend on them: `none` (bytes as given), `nfc/v1` (Unicode NFC), and
// `nfc-casefold/v2` (canonical caseless matching, Unicode 15.0 section 3.13
// D145, emitted in NFC), all via utf8proc. `nfc-casefold/v1` (full case
// folding of the code points as given, then NFC) is kept only so that
// filters saved with it keep their keys: it can give two canonically
// equivalent strings two keys. The rules are spelled out in docs/keys.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bloomshard::core {

/// A policy and the version of its rules. kNfcCasefold is the current
/// nfc-casefold (v2); kNfcCasefoldV1 is the legacy one, chosen only by
/// naming it ("nfc-casefold/v1") or by resuming a state saved with it.
enum class NormalizePolicy : std::uint8_t {
  kNone = 0,
  kNfc = 1,
  kNfcCasefold = 2,
  kNfcCasefoldV1 = 3,
};

/// Every policy value, for tests and name lookups.
inline constexpr NormalizePolicy kAllPolicies[] = {NormalizePolicy::kNone, NormalizePolicy::kNfc,
                                                   NormalizePolicy::kNfcCasefold,
                                                   NormalizePolicy::kNfcCasefoldV1};

/// Thrown when a policy that needs UTF-8 meets bytes that are not UTF-8.
class InvalidUtf8Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "none", "nfc" or "nfc-casefold" (both nfc-casefold versions).
[[nodiscard]] std::string_view policy_name(NormalizePolicy p) noexcept;

/// Version of the policy's rules: 1, except 2 for the current nfc-casefold.
/// The Unicode version of utf8proc is recorded beside it.
[[nodiscard]] std::uint32_t policy_version(NormalizePolicy p) noexcept;

/// "name/vN", e.g. "nfc-casefold/v2": what checkpoints and `info` show.
[[nodiscard]] std::string policy_label(NormalizePolicy p);

/// Parses "name" (the current version) or "name/vN"; throws
/// std::invalid_argument naming the bad value.
[[nodiscard]] NormalizePolicy parse_policy(std::string_view name);

/// Unicode version of the linked utf8proc (e.g. "15.0.0").
[[nodiscard]] std::string_view normalization_unicode_version() noexcept;

/// Throws InvalidUtf8Error (naming the byte offset and why) unless `text`
/// is valid UTF-8: no overlongs, no surrogates, nothing above U+10FFFF.
void check_utf8(std::string_view text);

/// Writes the normalized key into `out` (replacing its contents) and returns
/// a view of it. For kNone returns `key` itself and leaves `out` alone (no
/// copy). Throws InvalidUtf8Error for invalid UTF-8 under every other policy.
/// NUL bytes are valid code points and are kept; the empty key stays empty.
std::string_view normalize_key(NormalizePolicy policy, std::string_view key, std::string& out);

}  // namespace bloomshard::core
