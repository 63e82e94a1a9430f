#include "bloomshard/core/key_builder.hpp"

#include <algorithm>
#include <stdexcept>

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/text_normalize.hpp"

namespace bloomshard::core {
namespace {

// Bytes of the UTF-8 sequence a lead byte announces; 1 for bytes that
// cannot lead one (continuations, C0, C1, F5..FF), left to check_utf8.
std::size_t announced_length(unsigned char lead) noexcept {
  if (lead >= 0xC2U && lead <= 0xDFU) return 2;
  if (lead >= 0xE0U && lead <= 0xEFU) return 3;
  if (lead >= 0xF0U && lead <= 0xF4U) return 4;
  return 1;
}

bool is_continuation(unsigned char c) noexcept { return (c & 0xC0U) == 0x80U; }

}  // namespace

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
  // The common scheme (one field, no normalization, no digest): the value.
  if (!tuple && !digester_ && scheme_.text == TextNormalize::kNone &&
      scheme_.normalize == NormalizePolicy::kNone && values.size() == 1) {
    return values.front();
  }
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

namespace bloomshard::core {

bool KeyBuilder::streams_one_value() const noexcept {
  return digester_.has_value() && scheme_.normalize == NormalizePolicy::kNone &&
         (scheme_.text == TextNormalize::kNone || scheme_.text == TextNormalize::kWs);
}

void KeyBuilder::stream_begin() {
  if (!streams_one_value()) throw std::logic_error("KeyBuilder: this key scheme cannot stream");
  digester_->reset();
  collapser_.reset();
  carry_.clear();
}

// Whole code points (or bytes check_utf8 refuses) of the value under ws.
void KeyBuilder::stream_complete(std::string_view code_points) {
  check_utf8(code_points);
  collapser_.feed(code_points, [this](std::string_view out) { digester_->update(out); });
}

// Under ws a piece is cut after its last whole code point and the rest is
// carried to the next piece. The cut is before a byte that is not a
// continuation byte, where UTF-8 validity splits (the value is valid iff
// both sides are), so checking the sides apart checks the whole.
void KeyBuilder::stream_piece(std::string_view piece) {
  if (scheme_.text == TextNormalize::kNone) {
    digester_->update(piece);
    return;
  }
  if (!carry_.empty()) {
    const std::size_t want = announced_length(static_cast<unsigned char>(carry_[0]));
    const std::size_t take = std::min(want - carry_.size(), piece.size());
    carry_.append(piece.substr(0, take));
    piece.remove_prefix(take);
    if (carry_.size() < want) return;
    stream_complete(carry_);
    carry_.clear();
  }
  std::size_t cut = piece.size();
  for (std::size_t back = 1; back <= 3 && back <= piece.size(); ++back) {
    const auto c = static_cast<unsigned char>(piece[piece.size() - back]);
    if (is_continuation(c)) continue;
    if (announced_length(c) > back) cut = piece.size() - back;
    break;
  }
  stream_complete(piece.substr(0, cut));
  carry_.assign(piece.substr(cut));
}

std::string_view KeyBuilder::stream_finish() {
  if (!carry_.empty()) {
    check_utf8(carry_);  // a code point cut by the end of the value: throws
    stream_complete(carry_);
    carry_.clear();
  }
  digester_->finish(key_);
  return key_;
}

}  // namespace bloomshard::core
