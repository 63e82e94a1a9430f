// When the filter opens its next Bloom layer during rounds. The compound FPR
// bound holds only if no layer takes more keys than its capacity, and a
// layer must open on every rank together (ScalableBloom::add_layer is
// collective in effect). Sub-rounds are cut to fit the newest layer; before
// each, every rank opens the next layer when the newest could overflow; after
// each round the agreed insert count makes the estimate exact again.
#pragma once

#include <cstdint>

#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::app {

class LayerGrowth {
 public:
  /// `ranks`: the job's rank count; `newest_inserted`: keys in the newest
  /// layer over all ranks (an allreduce at the start).
  LayerGrowth(std::uint32_t ranks, std::uint64_t newest_inserted)
      : ranks_(ranks), newest_inserted_(newest_inserted) {}

  /// Keys one sub-round may decide (all ranks): the newest layer's
  /// capacity, less the rounding slack of route()'s cut (one key per rank
  /// pair), so that a sub-round fits into a layer opened just before it.
  [[nodiscard]] std::uint64_t max_keys(const core::TwoTierSet& set) const;

  /// Every rank before each sub-round, with the same `upcoming` (keys it
  /// will decide, an upper bound of its inserts): opens the next layer when
  /// the newest could overflow; a layer may open up to one sub-round early.
  void before_subround(core::TwoTierSet& set, std::uint64_t upcoming);

  /// Every rank after the round's agreement: `agreed_inserted` is the
  /// newest layer's exact count; a full layer is followed by a new one.
  void after_round(core::TwoTierSet& set, std::uint64_t agreed_inserted);

  /// A layer was opened elsewhere (a window slot): it is empty.
  void layer_opened() noexcept { newest_inserted_ = 0; }

 private:
  std::uint32_t ranks_;
  // Keys in the newest layer, all ranks: exact after each round's
  // agreement, an upper bound in between.
  std::uint64_t newest_inserted_;
};

}  // namespace bloomshard::app
