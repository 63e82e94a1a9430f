// The key order of `dedup --unit minhash --confirm-jaccard T`: batch order
// (keys travel as they are, the owner decides each sub-round in (source
// rank, position) order), with the owner's decision confirmed
// (core/minhash/band_confirmation.hpp): the routed keys are wire keys, each
// a band key followed by its record's b-bit signature form, and a band hit
// below T comes back as Verdict::kUnconfirmedHit. The router's combining
// stays correct: two copies of a band key in one batch combine only when
// their forms are equal too, and then the later one's estimate is 1.
// In annotate mode (`positions`) each wire key ends in its record's
// position too, and every key's verdict comes back with a core::BandMatch
// (the router's answers: kBandMatchBytes a key), from which the sender
// writes the estimate and the record matched; copies never combine then,
// the owner decides the later one against the first.
#pragma once

#include <cstdint>
#include <memory>

#include "app/round/key_order.hpp"
#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {

/// The confirming batch order: threshold T, forms of `values` values of
/// `bits` bits each; `positions`: wire keys carry positions and each key
/// is answered (annotate mode). Throws std::invalid_argument as
/// core::BandConfirmer.
[[nodiscard]] std::unique_ptr<KeyOrder> make_confirmed_band_order(double threshold,
                                                                  std::uint32_t values,
                                                                  std::uint32_t bits,
                                                                  bool positions = false);

/// The forms of `order` when it is the confirming order (what a checkpoint
/// writes beside tier 2's keys), else nullptr. Valid while `order` lives.
[[nodiscard]] core::BandConfirmer* band_confirmer_of(KeyOrder& order) noexcept;

/// Makes `loaded` (the forms a state's owned slices held, read by
/// io::load_checkpoint) the forms of the confirming `order`, before its
/// first round. Throws std::logic_error when `order` does not confirm or
/// `loaded` has another threshold or form size (the scheme guard refuses
/// such a state before any load).
void adopt_loaded_forms(KeyOrder& order, std::unique_ptr<core::BandConfirmer> loaded);

}  // namespace bloomshard::app
