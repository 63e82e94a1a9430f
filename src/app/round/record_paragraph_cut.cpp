#include "app/round/record_paragraph_cut.hpp"

#include <algorithm>
#include <span>

namespace bloomshard::app {

RecordParagraphCut::RecordParagraphCut(const core::KeyScheme& key, std::uint64_t seed)
    : key_(key), seed_(seed), keyer_(key), out_keyer_(key), field_(key.fields.front()) {}

bool RecordParagraphCut::load(std::string_view line, std::string text, bool json) {
  line_ = line;
  json_ = json;
  text_ = std::move(text);
  if (json) {
    const std::optional<io::TokenSpan> token = field_.find_string(line);
    if (!token) return false;
    token_ = *token;
  }
  try {
    keyer_.key_text(text_);
  } catch (const core::InvalidUtf8Error&) {
    return false;
  }
  // The first copy of each key in the record: one sort of (hash, index),
  // not a search per paragraph (a long document has thousands).
  const std::size_t n = keyer_.spans().size();
  hashes_.assign(n, {});
  first_.assign(n, false);
  order_.clear();
  for (std::size_t p = 0; p < n; ++p) {
    if (!keyer_.keyed()[p]) continue;
    hashes_[p] = core::hash_key(keyer_.key(p), seed_);
    order_.push_back(p);
  }
  std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(hashes_[a].hi, hashes_[a].lo, a) < std::tie(hashes_[b].hi, hashes_[b].lo, b);
  });
  for (std::size_t j = 0; j < order_.size(); ++j) {
    first_[order_[j]] = j == 0 || !(hashes_[order_[j - 1]] == hashes_[order_[j]]);
  }
  return true;
}

void RecordParagraphCut::derive(std::string_view written_text) {
  out_keyer_.key_text(written_text);  // valid UTF-8: the run wrote it
  kept_.clear();
  for (std::size_t p = 0; p < out_keyer_.spans().size(); ++p) {
    if (!out_keyer_.keyed()[p]) continue;
    const core::KeyHash h = core::hash_key(out_keyer_.key(p), seed_);
    kept_.emplace_back(h.hi, h.lo);
  }
  std::sort(kept_.begin(), kept_.end());
  clear_flags();
  for (std::size_t p = 0; p < paragraphs(); ++p) {
    if (!keyer_.keyed()[p]) continue;
    dup_[p] = !first_[p] || !std::binary_search(kept_.begin(), kept_.end(),
                                                std::pair(hashes_[p].hi, hashes_[p].lo));
  }
}

std::optional<std::string_view> RecordParagraphCut::line() {
  const std::span<const bool> dup(dup_.get(), paragraphs());
  const core::ParagraphRemoval r = core::measure_removal(text_.size(), keyer_.spans(), dup);
  removal_ = r;
  if (r.paragraphs_removed == 0) return line_;
  if (core::drop_for_removed_fraction(r.removed_fraction, key_.drop_if_removed_fraction)) {
    return std::nullopt;
  }
  const std::string_view kept = core::remove_paragraphs(text_, keyer_.spans(), dup, text_out_);
  if (!json_) return kept;
  return io::replace_string_token(line_, token_, kept, line_out_);
}

bool RecordParagraphCut::flag_listed(
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& listed, bool dolma) {
  clear_flags();
  // Each paragraph's listed form: bloomshard its bytes [start, end),
  // dolma its cut's code points [start, cut_end), counted in one pass.
  forms_.clear();
  std::uint64_t chars = 0;
  std::size_t at = 0;
  const auto chars_to = [&](std::size_t byte) {
    for (; at < byte; ++at) {
      chars += (static_cast<unsigned char>(text_[at]) & 0xC0U) != 0x80U ? 1U : 0U;
    }
    return chars;
  };
  for (std::size_t p = 0; p < paragraphs(); ++p) {
    const core::ParagraphSpan& sp = keyer_.spans()[p];
    if (dolma) {
      const std::uint64_t start = chars_to(sp.start);
      forms_.push_back({start, chars_to(sp.cut_end), p});
    } else {
      forms_.push_back({sp.start, sp.end, p});
    }
  }
  std::sort(forms_.begin(), forms_.end());
  for (const auto& [a, b] : listed) {
    const auto it = std::lower_bound(forms_.begin(), forms_.end(), Form{a, b, 0});
    if (it == forms_.end() || it->start != a || it->end != b) return false;
    dup_[it->paragraph] = true;
  }
  (void)line();  // removal_ of the listed flags
  return true;
}

ParagraphDecision RecordParagraphCut::decision() {
  ParagraphDecision d;
  d.text = text_;
  d.paragraphs = paragraphs();
  for (std::size_t p = 0; p < paragraphs(); ++p) {
    if (dup_[p]) d.duplicates.push_back(keyer_.spans()[p]);
  }
  (void)line();
  d.dropped = dropped();
  return d;
}

bool RecordParagraphCut::dropped() const noexcept {
  return removal_.paragraphs_removed != 0 &&
         core::drop_for_removed_fraction(removal_.removed_fraction, key_.drop_if_removed_fraction);
}

bool RecordParagraphCut::holds(std::uint64_t p, const core::KeyHash& hash) const {
  return p < paragraphs() && keyer_.keyed()[p] && hashes_[p] == hash;
}

void RecordParagraphCut::clear_flags() {
  if (paragraphs() > dup_capacity_) {
    dup_capacity_ = std::max(paragraphs(), 2 * dup_capacity_);
    dup_ = std::make_unique<bool[]>(dup_capacity_);
  }
  std::fill(dup_.get(), dup_.get() + paragraphs(), false);
}

}  // namespace bloomshard::app
