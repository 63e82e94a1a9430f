#include "app/feed/paragraph_records.hpp"

#include <algorithm>

#include "app/round/retracted_paragraphs.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "core/order/paragraph_order.hpp"

namespace bloomshard::app {

ParagraphRecords::ParagraphRecords(const core::KeyScheme& key, std::uint64_t hash_seed)
    : key_(key), hash_seed_(hash_seed), keyer_(key), field_(key.fields.front()) {}

void ParagraphRecords::clear() noexcept {
  entries_.clear();
  texts_.clear();
  spans_.clear();
  keyed_.clear();
}

std::string_view ParagraphRecords::add(RoundBatch& batch, std::uint32_t file_slot,
                                       std::string_view line, std::string_view terminator,
                                       std::string_view text, bool json,
                                       std::optional<core::OrderTag> record_tag) {
  Entry e{};
  e.json = json;
  e.line_length = line.size();
  if (json) {
    const std::optional<io::TokenSpan> token = field_.find_string(line);
    if (!token) return kRejectParagraphNotString;
    e.token = *token;
  }
  keyer_.key_text(text);  // may throw InvalidUtf8Error: nothing added yet
  e.text_offset = texts_.size();
  e.text_length = text.size();
  texts_.append(text);
  e.first_span = spans_.size();
  e.span_count = keyer_.spans().size();
  batch.add_record(file_slot, line, terminator);
  for (std::size_t p = 0; p < e.span_count; ++p) {
    spans_.push_back(keyer_.spans()[p]);
    keyed_.push_back(keyer_.keyed()[p]);
    if (keyer_.keyed()[p]) {
      batch.add_key(core::hash_key(keyer_.key(p), hash_seed_), keyer_.key(p));
      if (record_tag) batch.tag_last_key(core::paragraph_order_tag(*record_tag, p, line.size()));
    }
  }
  entries_.push_back(e);
  return {};
}

void ParagraphRecords::flag_duplicates(const RoundBatch& batch, std::size_t i,
                                       std::span<const core::Verdict> verdicts) {
  const Entry& e = entries_[i];
  if (e.span_count > dup_capacity_) {
    dup_capacity_ = std::max(e.span_count, 2 * dup_capacity_);
    dup_ = std::make_unique<bool[]>(dup_capacity_);
  }
  std::size_t k = batch.first_key(i);
  for (std::size_t p = 0; p < e.span_count; ++p) {
    const bool keyed = keyed_[e.first_span + p];
    dup_[p] = keyed && !core::is_kept(verdicts[k]);
    if (keyed) ++k;
  }
}

core::ParagraphRemoval ParagraphRecords::count_record(const RoundBatch& batch, std::size_t i) {
  const Entry& e = entries_[i];
  const std::span<const core::ParagraphSpan> spans(spans_.data() + e.first_span, e.span_count);
  const std::span<const bool> dup(dup_.get(), e.span_count);
  counters_.paragraphs += e.span_count;
  counters_.paragraphs_keyed += batch.key_count(i);
  const core::ParagraphRemoval r = core::measure_removal(e.text_length, spans, dup);
  if (r.paragraphs_removed == 0) return r;
  if (core::drop_for_removed_fraction(r.removed_fraction, key_.drop_if_removed_fraction)) {
    ++counters_.records_dropped;
    return r;
  }
  ++counters_.records_changed;
  counters_.paragraphs_removed += r.paragraphs_removed;
  counters_.bytes_removed += r.bytes_removed;
  return r;
}

ParagraphDecision ParagraphRecords::decide(const RoundBatch& batch, std::size_t i,
                                           std::span<const core::Verdict> verdicts) {
  const Entry& e = entries_[i];
  flag_duplicates(batch, i, verdicts);
  const core::ParagraphRemoval r = count_record(batch, i);
  ParagraphDecision d;
  d.text = std::string_view(texts_.data() + e.text_offset, e.text_length);
  d.paragraphs = e.span_count;
  d.dropped = r.paragraphs_removed != 0 &&
              core::drop_for_removed_fraction(r.removed_fraction, key_.drop_if_removed_fraction);
  for (std::size_t p = 0; p < e.span_count; ++p) {
    if (dup_[p]) d.duplicates.push_back(spans_[e.first_span + p]);
  }
  return d;
}

ParagraphOutcome ParagraphRecords::write(const RoundBatch& batch, std::size_t i,
                                         std::span<const core::Verdict> verdicts,
                                         io::OutputWriter& out) {
  const Entry& e = entries_[i];
  flag_duplicates(batch, i, verdicts);
  const std::span<const core::ParagraphSpan> spans(spans_.data() + e.first_span, e.span_count);
  const std::span<const bool> dup(dup_.get(), e.span_count);
  const core::ParagraphRemoval r = count_record(batch, i);
  if (r.paragraphs_removed == 0) {
    out.write_bytes(batch.record_bytes(i));
    return ParagraphOutcome::kUnchanged;
  }
  if (core::drop_for_removed_fraction(r.removed_fraction, key_.drop_if_removed_fraction)) {
    return ParagraphOutcome::kDropped;
  }
  const std::string_view text(texts_.data() + e.text_offset, e.text_length);
  const std::string_view record = batch.record_bytes(i);
  const std::string_view line = record.substr(0, e.line_length);
  const std::string_view terminator = record.substr(e.line_length);
  if (e.json && write_cut_line(line, e.token, text, spans, dup, terminator, out)) {
    return ParagraphOutcome::kChanged;
  }
  const std::string_view kept_text = core::remove_paragraphs(text, spans, dup, text_scratch_);
  if (e.json) {
    out.write_bytes(io::replace_string_token(line, e.token, kept_text, line_scratch_));
  } else {
    out.write_bytes(kept_text);
  }
  out.write_bytes(terminator);
  return ParagraphOutcome::kChanged;
}

bool ParagraphRecords::write_cut_line(std::string_view line, io::TokenSpan token,
                                      std::string_view text,
                                      std::span<const core::ParagraphSpan> spans,
                                      std::span<const bool> dup, std::string_view terminator,
                                      io::OutputWriter& out) {
  // The kept stretches of the text, [offsets_[2j], offsets_[2j + 1]).
  offsets_.clear();
  offsets_.push_back(0);
  for (std::size_t p = 0; p < spans.size(); ++p) {
    if (!dup[p]) continue;
    offsets_.push_back(spans[p].start);
    offsets_.push_back(spans[p].cut_end);
  }
  offsets_.push_back(text.size());
  if (!io::map_canonical_token_offsets(line, token, text, offsets_)) return false;
  pieces_.clear();
  pieces_.push_back(line.substr(0, offsets_.front()));  // through the opening quote
  for (std::size_t j = 0; j + 1 < offsets_.size(); j += 2) {
    pieces_.push_back(line.substr(offsets_[j], offsets_[j + 1] - offsets_[j]));
  }
  pieces_.push_back(line.substr(offsets_.back()));  // from the closing quote
  pieces_.push_back(terminator);
  out.write_pieces(pieces_);
  return true;
}

void ParagraphRecords::count_recut(const ParagraphRecut& recut) noexcept {
  // The differences may be negative: modulo 2^64, as the totals are summed.
  counters_.records_dropped += recut.lines_dropped;
  counters_.records_changed += static_cast<std::uint64_t>(recut.records_changed);
  counters_.paragraphs_removed += static_cast<std::uint64_t>(recut.paragraphs_removed);
  counters_.bytes_removed += static_cast<std::uint64_t>(recut.text_bytes_removed);
}

std::vector<core::TextSpan> ParagraphRecords::duplicate_spans(
    const RoundBatch& batch, std::size_t i, std::span<const core::Verdict> verdicts) {
  const Entry& e = entries_[i];
  flag_duplicates(batch, i, verdicts);
  return core::duplicate_spans({spans_.data() + e.first_span, e.span_count},
                               {dup_.get(), e.span_count});
}

}  // namespace bloomshard::app
