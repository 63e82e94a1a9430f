#include "bloomshard/core/key_builder.hpp"

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {

void append_leb128(std::uint64_t n, std::string& out) {
  do {
    const auto low = static_cast<unsigned char>(n & 0x7FU);
    n >>= 7;
    out.push_back(static_cast<char>(n != 0 ? (low | 0x80U) : low));
  } while (n != 0);
}

KeyBuilder::KeyBuilder(const KeyScheme& scheme) : scheme_(scheme) {
  if (scheme_.digest != KeyDigest::kNone) digester_.emplace(scheme_.digest);
}

void KeyBuilder::emit(std::string_view piece) {
  if (digester_) {
    digester_->update(piece);
  } else {
    key_.append(piece);
  }
}

std::string_view KeyBuilder::build(std::span<const std::string_view> values) {
  const bool tuple = values.size() > 1;
  key_.clear();
  for (const std::string_view value : values) {
    if (digester_ && scheme_.text == TextNormalize::kWs &&
        scheme_.normalize == NormalizePolicy::kNone) {
      // Streamed: the collapsed pieces go straight into the digest.
      check_utf8(value);
      if (tuple) {
        prefix_.clear();
        append_leb128(CollapsedWhitespace::length(value), prefix_);
        emit(prefix_);
      }
      CollapsedWhitespace walk(value);
      std::string_view piece;
      while (walk.next(piece)) emit(piece);
      continue;
    }
    const std::string_view text = normalize_text(scheme_.text, value, text_scratch_);
    const std::string_view normal = normalize_key(scheme_.normalize, text, normal_scratch_);
    if (!tuple && !digester_) return normal;  // a one-field key is the value: no copy
    if (tuple) {
      prefix_.clear();
      append_leb128(normal.size(), prefix_);
      emit(prefix_);
    }
    emit(normal);
  }
  if (digester_) digester_->finish(key_);
  return key_;
}

}  // namespace bloomshard::core
