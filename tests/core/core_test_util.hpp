// Small helpers shared by the core tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core::test {

/// prefix followed by the decimal text of n ("key-" + 42 -> "key-42").
template <class T>
std::string numbered(std::string_view prefix, T n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

/// Flushes the set's delta into a run tagged with the current slot, as a
/// checkpoint does (at a slot boundary too), without compaction.
inline void flush_delta_into_run(TwoTierSet& set, std::uint64_t id) {
  ExactShard& shard = set.exact();
  auto data = std::make_shared<std::vector<SliceBaseData>>();
  std::vector<SliceBaseView> views;
  for (std::uint32_t s = shard.owned().first; s < shard.owned().last; ++s) {
    data->push_back(shard.merged_slice(s, 0));
  }
  for (const SliceBaseData& d : *data) views.push_back(d.view());
  shard.replace_newest_runs(0, {id, 0, set.bloom().current_slot()}, std::move(views), data);
  shard.clear_delta();
}

}  // namespace bloomshard::core::test
