// Turns a record's key field values into its key bytes under a KeyScheme:
// each value text-normalized, then --normalize'd; several values encoded as
// a tuple; the whole optionally digested. Tuple encoding (key-scheme/v1):
// for each field in order, its length as unsigned LEB128 (7 bits per byte,
// low group first, high bit = more follows), then its bytes; so ("ab","c")
// is 02 'a' 'b' 01 'c' and ("a","bc") is 01 'a' 02 'b' 'c'. A one-field key
// is the value's bytes alone (what states before key-scheme/v1 hold).
// With a digest and no copying normalization (text none or ws, normalize
// none) the values stream into the digest: a 100 MB field is never copied.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "bloomshard/core/key_digest.hpp"
#include "bloomshard/core/key_scheme.hpp"

namespace bloomshard::core {

/// Appends the unsigned LEB128 encoding of `n` to `out`.
void append_leb128(std::uint64_t n, std::string& out);

class KeyBuilder {
 public:
  explicit KeyBuilder(const KeyScheme& scheme);

  /// The key of one record from its field values, in the scheme's field
  /// order (a plain line: one value). Valid until the next build() call;
  /// may point into `values`. Throws InvalidUtf8Error when a policy that
  /// needs UTF-8 meets other bytes.
  [[nodiscard]] std::string_view build(std::span<const std::string_view> values);

 private:
  void emit(std::string_view piece);

  KeyScheme scheme_;
  std::optional<KeyDigester> digester_;
  std::string key_;
  std::string text_scratch_;
  std::string normal_scratch_;
  std::string prefix_;
};

}  // namespace bloomshard::core
