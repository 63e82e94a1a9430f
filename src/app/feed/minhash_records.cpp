#include "app/feed/minhash_records.hpp"

#include <string>

#include "bloomshard/core/key_hash.hpp"
#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {

core::MinHashConfig minhash_config(const core::KeyScheme& key) {
  return {.shingle = core::parse_shingle_spec(key.shingle), .bands = key.bands, .rows = key.rows};
}

MinHashRecords::MinHashRecords(const core::KeyScheme& key, std::uint64_t hash_seed, bool positions)
    : hash_seed_(hash_seed),
      sketcher_(minhash_config(key)),
      field_(key.fields.front()),
      confirm_bits_(key.confirm_jaccard > 0.0 ? core::kDefaultConfirmBits : 0),
      values_(key.bands * key.rows),
      positions_(positions && confirm_bits_ != 0) {}

std::string_view MinHashRecords::add(RoundBatch& batch, std::uint32_t file_slot,
                                     std::string_view line, std::string_view terminator,
                                     std::string_view text, bool json, std::uint64_t position) {
  // A missing field read as empty (--missing-field empty) has no token;
  // any other value must be a JSON string.
  if (json && !text.empty() && !field_.find_string(line)) return kRejectMinHashNotString;
  if (!sketcher_.sketch(text, sketch_, error_)) {
    reason_ = "minhash text is not UTF-8: " + error_;
    return reason_;
  }
  ++counters_.records;
  if (sketch_.empty) ++counters_.empty_texts;
  batch.add_kept_record(file_slot, line, terminator);
  if (confirm_bits_ != 0) form_ = core::pack_bbit(sketch_.signature, confirm_bits_);
  for (const core::BandKey& k : sketch_.band_keys) {
    const std::string_view bytes(reinterpret_cast<const char*>(k.data()), k.size());
    if (confirm_bits_ == 0) {
      batch.add_key(core::hash_key(bytes, hash_seed_), bytes);
      continue;
    }
    wire_key_.assign(bytes);
    wire_key_.append(reinterpret_cast<const char*>(form_.packed.data()), form_.packed.size());
    if (positions_) wire_key_.append(reinterpret_cast<const char*>(&position), sizeof position);
    batch.add_key(core::hash_key(bytes, hash_seed_), wire_key_);
  }
  counters_.band_keys += sketch_.band_keys.size();
  return {};
}

bool MinHashRecords::decide(const RoundBatch& batch, std::size_t i,
                            std::span<const core::Verdict> verdicts) {
  const std::span<const core::Verdict> mine =
      verdicts.subspan(batch.first_key(i), batch.key_count(i));
  bool kept = true;
  bool hit = false;
  for (const core::Verdict v : mine) {
    if (v == core::Verdict::kDuplicate) {
      kept = false;
      hit = true;
      ++counters_.confirmed_hits;
    } else if (v == core::Verdict::kUnconfirmedHit) {
      hit = true;
      ++counters_.unconfirmed_hits;
    } else {
      ++counters_.band_keys_new;
    }
  }
  if (hit) ++counters_.candidates;
  if (!kept) ++counters_.near_duplicates;
  return kept;
}

std::optional<NearMatch> MinHashRecords::best_match(const RoundBatch& batch, std::size_t i,
                                                    std::span<const core::Verdict> verdicts,
                                                    std::span<const std::uint8_t> answers) const {
  std::optional<NearMatch> best;
  const std::size_t first = batch.first_key(i);
  for (std::size_t k = first; k < first + batch.key_count(i); ++k) {
    if (verdicts[k] != core::Verdict::kDuplicate) continue;
    const core::BandMatch m = core::get_band_match(answers.data() + k * core::kBandMatchBytes);
    const double similarity = core::bbit_estimate(m.matches, values_, confirm_bits_);
    if (!best || similarity > best->similarity) best = NearMatch{similarity, m.position, m.run};
  }
  return best;
}

}  // namespace bloomshard::app
