#include "app/state/query_confirmation.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace bloomshard::app {

QueryConfirmation::QueryConfirmation(const core::BandConfirmer& forms, QueryFormScheme scheme)
    : forms_(forms), scheme_(scheme) {}

void QueryConfirmation::answer(const core::TwoTierSet& set, std::span<const core::KeyRef> wire,
                               std::span<core::Verdict> out, core::QueryCounters& keys) {
  if (out.size() != wire.size()) {
    throw std::invalid_argument("query confirmation: " + std::to_string(out.size()) +
                                " answer slots for " + std::to_string(wire.size()) + " keys");
  }
  const std::size_t wire_bytes = core::kBandKeyBytes + forms_.form_bytes();
  band_keys_.resize(wire.size());
  for (std::size_t i = 0; i < wire.size(); ++i) {
    if (wire[i].bytes.size() != wire_bytes) {
      throw std::invalid_argument("query confirmation: a key of " +
                                  std::to_string(wire[i].bytes.size()) + " bytes, want " +
                                  std::to_string(wire_bytes) + " (band key and form)");
    }
    band_keys_[i] = {wire[i].hash, wire[i].bytes.substr(0, core::kBandKeyBytes)};
  }
  hits_.resize(wire.size());
  core::query_batch(set, band_keys_, hits_, keys);
  for (std::size_t i = 0; i < wire.size(); ++i) {
    if (hits_[i] == 0) {
      out[i] = core::Verdict::kNew;
      continue;
    }
    core::BandKey key;
    std::memcpy(key.data(), band_keys_[i].bytes.data(), key.size());
    const std::span<const std::uint8_t> kept = forms_.find_form(key);
    if (kept.empty()) {
      throw std::logic_error("query confirmation: a band key of the state has no form");
    }
    const std::span<const std::uint8_t> mine(
        reinterpret_cast<const std::uint8_t*>(wire[i].bytes.data()) + core::kBandKeyBytes,
        forms_.form_bytes());
    const double estimate = core::bbit_estimate(
        core::bbit_matches(kept, mine, scheme_.values, scheme_.bits), scheme_.values, scheme_.bits);
    const bool confirmed = estimate >= scheme_.threshold;
    out[i] = confirmed ? core::Verdict::kDuplicate : core::Verdict::kUnconfirmedHit;
    ++(confirmed ? counters_.confirmed : counters_.unconfirmed);
  }
}

}  // namespace bloomshard::app
