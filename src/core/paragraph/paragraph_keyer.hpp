// The keys of one record's paragraphs under --unit paragraph: the text is
// split (paragraph_split.hpp), each paragraph text-normalized and
// --normalize'd exactly as a one-field record key would be (KeyBuilder),
// and, when its normalized form has at least min_paragraph_bytes, keyed by
// the scheme's digest of that form (the same bytes KeyBuilder would digest
// for a record whose field is that paragraph). Shorter paragraphs are kept
// and never keyed. Pure, no MPI; one per rank, reused per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/key_builder.hpp"
#include "bloomshard/core/key_digest.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/paragraph_split.hpp"

namespace bloomshard::core {

class ParagraphKeyer {
 public:
  /// `scheme` must be a paragraph scheme (key_scheme_problem() empty).
  /// Throws std::invalid_argument for a scheme without a digest.
  explicit ParagraphKeyer(const KeyScheme& scheme);

  /// Splits `text` and keys its paragraphs; afterwards spans(), keyed() and
  /// key() describe them. Throws InvalidUtf8Error (normalize.hpp) when a
  /// policy that needs UTF-8 meets other bytes.
  void key_text(std::string_view text);

  [[nodiscard]] const std::vector<ParagraphSpan>& spans() const noexcept { return spans_; }
  /// keyed()[i]: paragraph i has a key (its normalized text is long enough).
  [[nodiscard]] const std::vector<bool>& keyed() const noexcept { return keyed_; }
  /// The digest key of keyed paragraph i (valid until the next key_text()).
  [[nodiscard]] std::string_view key(std::size_t i) const noexcept;
  [[nodiscard]] std::size_t keyed_count() const noexcept { return keyed_count_; }

 private:
  KeyScheme scheme_;
  KeyBuilder normalizer_;  // the scheme without its digest: normalized bytes
  KeyDigester digester_;
  std::vector<ParagraphSpan> spans_;
  std::vector<bool> keyed_;
  std::vector<std::size_t> key_offset_;  // per paragraph, into keys_
  std::string keys_;                     // the digests back to back
  std::string digest_;
  std::size_t key_bytes_ = 0;
  std::size_t keyed_count_ = 0;
};

}  // namespace bloomshard::core
