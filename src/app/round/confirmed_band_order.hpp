// The key order of `dedup --unit minhash --confirm-jaccard T`: batch order
// (keys travel as they are, the owner decides each sub-round in (source
// rank, position) order), with the owner's decision confirmed
// (core/minhash/band_confirmation.hpp): the routed keys are wire keys, each
// a band key followed by its record's b-bit signature form, and a band hit
// below T comes back as Verdict::kUnconfirmedHit. The router's combining
// stays correct: two copies of a band key in one batch combine only when
// their forms are equal too, and then the later one's estimate is 1.
#pragma once

#include <cstdint>
#include <memory>

#include "app/round/key_order.hpp"

namespace bloomshard::app {

/// The confirming batch order: threshold T, forms of `values` values of
/// `bits` bits each. Throws std::invalid_argument as core::BandConfirmer.
[[nodiscard]] std::unique_ptr<KeyOrder> make_confirmed_band_order(double threshold,
                                                                  std::uint32_t values,
                                                                  std::uint32_t bits);

}  // namespace bloomshard::app
