#include "core/minhash/band_confirmation.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/minhash/minhash_jaccard.hpp"

namespace bloomshard::core {

std::uint32_t bbit_matches(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                           std::uint32_t values, std::uint32_t bits) noexcept {
  std::uint32_t matches = 0;
  if (bits >= 8) {  // whole bytes per value
    const std::size_t step = bits / 8;
    for (std::size_t i = 0; i < values; ++i) {
      matches += std::memcmp(a.data() + i * step, b.data() + i * step, step) == 0 ? 1U : 0U;
    }
    return matches;
  }
  const unsigned mask = (1U << bits) - 1U;
  for (std::size_t i = 0; i < values; ++i) {
    const std::size_t bit = i * bits;
    const unsigned x = (a[bit / 8] >> (bit % 8)) & mask;
    const unsigned y = (b[bit / 8] >> (bit % 8)) & mask;
    matches += x == y ? 1U : 0U;
  }
  return matches;
}

double bbit_estimate(std::uint32_t matches, std::uint32_t values, std::uint32_t bits) noexcept {
  const double p = static_cast<double>(matches) / static_cast<double>(values);
  const double chance = std::ldexp(1.0, -static_cast<int>(bits));
  return (p - chance) / (1.0 - chance);
}

std::uint64_t confirm_table_bytes(std::uint64_t keys, std::uint32_t values,
                                  std::uint32_t bits) noexcept {
  return keys * (bbit_bytes(values, bits) + kConfirmIndexBytesPerKey);
}

std::uint64_t confirm_table_bytes(std::uint64_t keys, std::uint32_t values, std::uint32_t bits,
                                  bool positions) noexcept {
  return confirm_table_bytes(keys, values, bits) +
         (positions ? keys * (kBandPositionBytes + sizeof(std::uint32_t)) : 0);
}

void put_band_match(const BandMatch& m, std::uint8_t* out) noexcept {
  std::memcpy(out, &m.position, sizeof m.position);
  std::memcpy(out + sizeof m.position, &m.matches, sizeof m.matches);
  std::memcpy(out + sizeof m.position + sizeof m.matches, &m.run, sizeof m.run);
}

BandMatch get_band_match(const std::uint8_t* in) noexcept {
  BandMatch m;
  std::memcpy(&m.position, in, sizeof m.position);
  std::memcpy(&m.matches, in + sizeof m.position, sizeof m.matches);
  std::memcpy(&m.run, in + sizeof m.position + sizeof m.matches, sizeof m.run);
  return m;
}

std::size_t BandConfirmer::BandKeyHash::operator()(const BandKey& k) const noexcept {
  // Band keys are XXH3-128 digests: any 8 of their bytes are uniform.
  std::uint64_t h = 0;
  std::memcpy(&h, k.data(), sizeof(h));
  return static_cast<std::size_t>(h);
}

BandConfirmer::BandConfirmer(double threshold, std::uint32_t values, std::uint32_t bits,
                             bool positions)
    : threshold_(threshold),
      values_(values),
      bits_(bits),
      form_bytes_(bbit_bytes(values, bits)),
      positions_(positions) {
  if (!(threshold > 0.0 && threshold <= 1.0)) {
    throw std::invalid_argument("confirmation threshold " + std::to_string(threshold) +
                                " is not in (0, 1]");
  }
  if (values == 0 || !valid_confirm_bits(bits)) {
    throw std::invalid_argument("confirmation forms of " + std::to_string(values) + " x " +
                                std::to_string(bits) + " bits");
  }
}

std::span<const std::uint8_t> BandConfirmer::find_form(const BandKey& key) const noexcept {
  const auto found = index_.find(key);
  if (found == index_.end()) return {};
  return form_of(found->second);
}

bool BandConfirmer::adopt_form(const BandKey& key, std::span<const std::uint8_t> form) {
  if (form.size() != form_bytes_) {
    throw std::invalid_argument("confirm: a form of " + std::to_string(form.size()) +
                                " bytes, want " + std::to_string(form_bytes_));
  }
  return remember(key, form.data(), 0, 0);
}

bool BandConfirmer::adopt_form(const BandKey& key, std::span<const std::uint8_t> form,
                               const FormOrigin& origin) {
  if (form.size() != form_bytes_) {
    throw std::invalid_argument("confirm: a form of " + std::to_string(form.size()) +
                                " bytes, want " + std::to_string(form_bytes_));
  }
  if (origin.run > kMaxOriginRun) {
    throw std::invalid_argument("confirm: an origin of run " + std::to_string(origin.run) +
                                ", beyond the largest run ordinal " +
                                std::to_string(kMaxOriginRun));
  }
  return remember(key, form.data(), origin.position, static_cast<std::uint32_t>(origin.run));
}

bool BandConfirmer::remember(const BandKey& key, const std::uint8_t* form, std::uint64_t position,
                             std::uint32_t run) {
  if (!index_.try_emplace(key, static_cast<std::uint32_t>(index_.size())).second) return false;
  forms_.insert(forms_.end(), form, form + form_bytes_);
  if (positions_) {
    first_positions_.push_back(position);
    first_runs_.push_back(run);
  }
  return true;
}

FormOrigin BandConfirmer::find_origin(const BandKey& key) const noexcept {
  if (!positions_) return {};
  const auto found = index_.find(key);
  if (found == index_.end()) return {};
  return {first_runs_[found->second], first_positions_[found->second]};
}

std::uint64_t BandConfirmer::find_position(const BandKey& key) const noexcept {
  if (!positions_) return 0;
  const auto found = index_.find(key);
  return found == index_.end() ? 0 : first_positions_[found->second];
}

void BandConfirmer::decide(TwoTierSet& set, std::span<const KeyRef> wire, std::span<Verdict> out) {
  if (positions_) {
    throw std::invalid_argument("confirm: wire keys with positions are decided with answers");
  }
  decide(set, wire, out, {});
}

void BandConfirmer::decide(TwoTierSet& set, std::span<const KeyRef> wire, std::span<Verdict> out,
                           std::span<std::uint8_t> answers) {
  if (positions_ && answers.size() != wire.size() * kBandMatchBytes) {
    throw std::invalid_argument("confirm: " + std::to_string(answers.size()) +
                                " answer bytes for " + std::to_string(wire.size()) + " keys");
  }
  if (!positions_ && !answers.empty()) {
    throw std::invalid_argument("confirm: answers asked of a confirmer without positions");
  }
  if (out.size() != wire.size()) {
    throw std::invalid_argument("confirm: " + std::to_string(out.size()) + " verdicts for " +
                                std::to_string(wire.size()) + " keys");
  }
  band_keys_.clear();
  for (const KeyRef& k : wire) {
    if (k.bytes.size() != wire_bytes()) {
      throw std::invalid_argument("confirm: a key of " + std::to_string(k.bytes.size()) +
                                  " bytes, want " + std::to_string(wire_bytes()) +
                                  " (band key and its form)");
    }
    band_keys_.push_back({k.hash, k.bytes.substr(0, kBandKeyBytes)});
  }
  set.decide_batch(band_keys_, out);
  for (std::size_t i = 0; i < wire.size(); ++i) {
    BandKey key;
    std::memcpy(key.data(), wire[i].bytes.data(), kBandKeyBytes);
    const auto* form = reinterpret_cast<const std::uint8_t*>(wire[i].bytes.data()) + kBandKeyBytes;
    BandMatch match;
    if (is_kept(out[i])) {  // inserted now: this record is the key's first
      std::uint64_t position = 0;
      if (positions_) std::memcpy(&position, form + form_bytes_, sizeof position);
      remember(key, form, position, run_);
      if (positions_) put_band_match(match, answers.data() + i * kBandMatchBytes);
      continue;
    }
    const auto found = index_.find(key);
    if (found == index_.end()) {
      throw std::logic_error("confirm: a band key in tier 2 without its confirmation form");
    }
    const std::uint32_t m =
        bbit_matches(form_of(found->second), {form, form_bytes_}, values_, bits_);
    if (positions_) {
      match = {first_positions_[found->second], m, first_runs_[found->second]};
      put_band_match(match, answers.data() + i * kBandMatchBytes);
    }
    if (bbit_estimate(m, values_, bits_) >= threshold_) {
      ++counters_.confirmed;
    } else {
      out[i] = Verdict::kUnconfirmedHit;
      ++counters_.unconfirmed;
    }
  }
}

namespace {

// Key `i` of `slice` as a band key; throws for another length.
BandKey band_key_at(const SliceBaseView& slice, std::size_t i) {
  const std::string_view bytes = slice.key(i);
  if (bytes.size() != kBandKeyBytes) {
    throw std::invalid_argument("confirm: tier-2 key " + std::to_string(i) + " has " +
                                std::to_string(bytes.size()) + " bytes, a band key " +
                                std::to_string(kBandKeyBytes));
  }
  BandKey key;
  std::memcpy(key.data(), bytes.data(), kBandKeyBytes);
  return key;
}

}  // namespace

std::vector<std::uint8_t> slice_form_stream(const BandConfirmer& confirmer,
                                            const SliceBaseView& slice) {
  std::vector<std::uint8_t> stream;
  stream.reserve(slice.size() * confirmer.form_bytes());
  for (std::size_t i = 0; i < slice.size(); ++i) {
    const std::span<const std::uint8_t> form = confirmer.find_form(band_key_at(slice, i));
    if (form.empty()) {
      throw std::logic_error("confirm: tier-2 key " + std::to_string(i) +
                             " of the slice has no confirmation form");
    }
    stream.insert(stream.end(), form.begin(), form.end());
  }
  return stream;
}

std::vector<std::uint8_t> slice_origin_stream(const BandConfirmer& confirmer,
                                              const SliceBaseView& slice) {
  if (!confirmer.keeps_positions()) {
    throw std::logic_error("confirm: origins asked of a confirmer without positions");
  }
  std::vector<std::uint8_t> stream(slice.size() * kFormOriginBytes);
  for (std::size_t i = 0; i < slice.size(); ++i) {
    const BandKey key = band_key_at(slice, i);
    if (confirmer.find_form(key).empty()) {
      throw std::logic_error("confirm: tier-2 key " + std::to_string(i) +
                             " of the slice has no confirmation form");
    }
    const FormOrigin o = confirmer.find_origin(key);
    std::memcpy(stream.data() + i * kFormOriginBytes, &o.run, sizeof o.run);
    std::memcpy(stream.data() + i * kFormOriginBytes + 8, &o.position, sizeof o.position);
  }
  return stream;
}

std::size_t adopt_slice_form_stream(BandConfirmer& confirmer, const SliceBaseView& slice,
                                    std::span<const std::uint8_t> stream,
                                    std::span<const std::uint8_t> origins) {
  if (!confirmer.keeps_positions()) {
    throw std::invalid_argument("confirm: origins given to a confirmer without positions");
  }
  const std::size_t form_bytes = confirmer.form_bytes();
  if (stream.size() != slice.size() * form_bytes ||
      origins.size() != slice.size() * kFormOriginBytes) {
    throw std::invalid_argument("confirm: a form stream of " + std::to_string(stream.size()) +
                                " bytes and an origin stream of " + std::to_string(origins.size()) +
                                " bytes for " + std::to_string(slice.size()) + " keys of " +
                                std::to_string(form_bytes) + "-byte forms");
  }
  std::size_t taken = 0;
  for (std::size_t i = 0; i < slice.size(); ++i) {
    FormOrigin o;
    std::memcpy(&o.run, origins.data() + i * kFormOriginBytes, sizeof o.run);
    std::memcpy(&o.position, origins.data() + i * kFormOriginBytes + 8, sizeof o.position);
    taken +=
        confirmer.adopt_form(band_key_at(slice, i), stream.subspan(i * form_bytes, form_bytes), o)
            ? 1U
            : 0U;
  }
  return taken;
}

std::size_t adopt_slice_form_stream(BandConfirmer& confirmer, const SliceBaseView& slice,
                                    std::span<const std::uint8_t> stream) {
  const std::size_t form_bytes = confirmer.form_bytes();
  if (stream.size() != slice.size() * form_bytes) {
    throw std::invalid_argument("confirm: a form stream of " + std::to_string(stream.size()) +
                                " bytes for " + std::to_string(slice.size()) + " keys of " +
                                std::to_string(form_bytes) + "-byte forms");
  }
  std::size_t taken = 0;
  for (std::size_t i = 0; i < slice.size(); ++i) {
    const BandKey key = band_key_at(slice, i);
    taken += confirmer.adopt_form(key, stream.subspan(i * form_bytes, form_bytes)) ? 1U : 0U;
  }
  return taken;
}

std::size_t BandConfirmer::forget_forms(std::span<const BandKey> keys) {
  std::size_t forgotten = 0;
  for (const BandKey& k : keys) forgotten += index_.erase(k);
  if (forgotten == 0) return 0;
  // Form numbers must stay 0..forms()-1 (a new key takes number forms()):
  // the live forms are renumbered in place, in their old order.
  std::vector<std::uint32_t*> by_number(forms_.size() / form_bytes_, nullptr);
  for (auto& entry : index_) by_number[entry.second] = &entry.second;
  std::uint32_t next = 0;
  for (std::size_t old = 0; old < by_number.size(); ++old) {
    if (by_number[old] == nullptr) continue;  // forgotten
    if (old != next) {
      std::memmove(forms_.data() + std::size_t{next} * form_bytes_,
                   forms_.data() + old * form_bytes_, form_bytes_);
      if (positions_) {  // origins follow their forms
        first_positions_[next] = first_positions_[old];
        first_runs_[next] = first_runs_[old];
      }
    }
    *by_number[old] = next++;
  }
  forms_.resize(std::size_t{next} * form_bytes_);
  if (positions_) {
    first_positions_.resize(next);
    first_runs_.resize(next);
  }
  return forgotten;
}

}  // namespace bloomshard::core
