#include "core/paragraph/paragraph_keyer.hpp"

#include <array>

namespace bloomshard::core {
namespace {

KeyScheme without_digest(KeyScheme s) {
  s.digest = KeyDigest::kNone;
  s.unit = KeyUnit::kRecord;
  return s;
}

}  // namespace

ParagraphKeyer::ParagraphKeyer(const KeyScheme& scheme)
    : scheme_(scheme),
      normalizer_(without_digest(scheme)),
      digester_(scheme.digest),
      key_bytes_(key_digest_bytes(scheme.digest)) {}

void ParagraphKeyer::key_text(std::string_view text) {
  split_paragraphs(scheme_.paragraph_split, text, spans_);
  keyed_.assign(spans_.size(), false);
  key_offset_.assign(spans_.size(), 0);
  keys_.clear();
  keyed_count_ = 0;
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    const std::array<std::string_view, 1> value{
        text.substr(spans_[i].start, spans_[i].end - spans_[i].start)};
    const std::string_view normalized = normalizer_.build(value);
    if (normalized.size() < scheme_.min_paragraph_bytes) continue;
    digester_.digest(normalized, digest_);
    keyed_[i] = true;
    key_offset_[i] = keys_.size();
    keys_ += digest_;
    ++keyed_count_;
  }
}

std::string_view ParagraphKeyer::key(std::size_t i) const noexcept {
  return std::string_view(keys_).substr(key_offset_[i], key_bytes_);
}

}  // namespace bloomshard::core
