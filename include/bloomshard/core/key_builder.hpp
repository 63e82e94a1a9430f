// Turns a record's key field values into its key bytes under a KeyScheme:
// each value text-normalized, then --normalize'd; several values encoded as
// a tuple; the whole optionally digested. Tuple encoding (key-scheme/v1):
// for each field in order, its length as unsigned LEB128 (7 bits per byte,
// low group first, high bit = more follows), then its bytes; so ("ab","c")
// is 02 'a' 'b' 01 'c' and ("a","bc") is 01 'a' 02 'b' 'c'. A one-field key
// is the value's bytes alone (what states before key-scheme/v1 hold).
// With a digest and no copying normalization (text none or ws, normalize
// none) the values stream into the digest: a 100 MB field is never copied.
// A one-field key under such a scheme can also be built from its value in
// pieces (stream_begin / stream_piece / stream_finish): a long JSON string
// unescaped chunk by chunk, never whole. Other schemes (ws-lower, the
// Unicode policies, tuples) need the whole value: the caller materializes it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "bloomshard/core/key_digest.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/text_normalize.hpp"

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

  /// True when a one-field key can be built from pieces: a digest, text
  /// normalization none or ws, --normalize none.
  [[nodiscard]] bool streams_one_value() const noexcept;
  /// Starts a one-field key (streams_one_value() must hold).
  void stream_begin();
  /// The value's next piece, in any sizes. Throws InvalidUtf8Error under ws.
  void stream_piece(std::string_view piece);
  /// The key of the pieces fed since stream_begin(): what build() gives for
  /// their concatenation. Throws InvalidUtf8Error under ws when the value
  /// ends inside a code point. Valid until the next build or stream call.
  [[nodiscard]] std::string_view stream_finish();

 private:
  void stream_complete(std::string_view code_points);
  void emit(std::string_view piece);

  KeyScheme scheme_;
  std::optional<KeyDigester> digester_;
  std::string key_;
  std::string text_scratch_;
  std::string normal_scratch_;
  std::string prefix_;
  WhitespaceCollapser collapser_;  // stream_*: ws state between pieces
  std::string carry_;              // stream_*: a code point cut by a piece's end
};

}  // namespace bloomshard::core
