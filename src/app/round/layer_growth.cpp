#include "app/round/layer_growth.hpp"

#include <algorithm>

namespace bloomshard::app {

std::uint64_t LayerGrowth::max_keys(const core::TwoTierSet& set) const {
  const core::ScalableBloom& bloom = set.bloom();
  const std::uint64_t capacity = bloom.layer_geometry(bloom.num_layers() - 1).capacity;
  const std::uint64_t slack = std::uint64_t{ranks_} * ranks_;
  return capacity > 2 * slack ? capacity - slack : std::max<std::uint64_t>(1, capacity / 2);
}

void LayerGrowth::before_subround(core::TwoTierSet& set, std::uint64_t upcoming) {
  core::ScalableBloom& bloom = set.bloom();
  const std::uint64_t capacity = bloom.layer_geometry(bloom.num_layers() - 1).capacity;
  if (newest_inserted_ + upcoming > capacity) {
    bloom.add_layer();
    newest_inserted_ = 0;
  }
  newest_inserted_ += upcoming;
}

void LayerGrowth::after_round(core::TwoTierSet& set, std::uint64_t agreed_inserted) {
  newest_inserted_ = agreed_inserted;
  if (set.bloom().layer_full(agreed_inserted)) {
    set.bloom().add_layer();
    newest_inserted_ = 0;
  }
}

}  // namespace bloomshard::app
