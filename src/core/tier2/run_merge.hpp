// The merge a checkpoint writes, internal to src/core: one slice's sorted
// delta and its newest sorted runs merged into one sorted sequence, each key
// once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"
#include "core/tier2/delta_by_slice.hpp"
#include "core/tier2/key_arena.hpp"

namespace bloomshard::core::detail {

/// Calls emit(fingerprint, bytes) for `delta` (sorted_slice() order, its
/// bytes in `arena`) merged with `runs` (one slice of each), in order, each
/// key once: a key in several sources, possible only for a run attached
/// over the delta, is emitted once. A k-way pick over the heads: k <= runs
/// + 1 (about 11), and heads differ in the fingerprint nearly always, so a
/// pick is k integer compares. Delta records are read in fingerprint order,
/// i.e. at random: the one kAhead places on is prefetched.
template <class Emit>
void merge_sorted(std::span<const DeltaEntry> delta, const KeyArena& arena,
                  std::span<const SliceBaseView* const> runs, Emit&& emit) {
  constexpr std::size_t kAhead = 8;
  const std::size_t nd = delta.size();
  for (std::size_t p = 0; p < std::min(kAhead, nd); ++p) arena.prefetch(delta[p].offset, 0);
  const auto delta_key = [&](std::size_t j) {
    if (j + kAhead < nd) arena.prefetch(delta[j + kAhead].offset, 0);
    return arena.key(delta[j].offset);
  };
  if (runs.empty()) {
    for (std::size_t j = 0; j < nd; ++j) emit(delta[j].fingerprint, delta_key(j));
    return;
  }
  struct Head {
    const SliceBaseView* run;
    std::size_t i;
  };
  std::vector<Head> heads;
  heads.reserve(runs.size());
  for (const SliceBaseView* run : runs) {
    if (run->size() > 0) heads.push_back({run, 0});
  }
  std::size_t j = 0;
  std::string_view dk = nd > 0 ? delta_key(0) : std::string_view();
  while (!heads.empty() || j < nd) {
    // The smallest head key; -1 = the delta.
    std::ptrdiff_t best = -1;
    std::uint64_t bfp = j < nd ? delta[j].fingerprint : 0;
    std::string_view bkey = dk;
    for (std::size_t h = 0; h < heads.size(); ++h) {
      const std::uint64_t fp = heads[h].run->fingerprints[heads[h].i];
      if (best == -1 && j >= nd) {
        best = static_cast<std::ptrdiff_t>(h);
        bfp = fp;
        bkey = heads[h].run->key(heads[h].i);
        continue;
      }
      if (fp > bfp) continue;
      const std::string_view k = heads[h].run->key(heads[h].i);
      if (less_key(fp, k, bfp, bkey)) {
        best = static_cast<std::ptrdiff_t>(h);
        bfp = fp;
        bkey = k;
      }
    }
    emit(bfp, bkey);
    // Advance every source whose head equals the emitted key.
    if (j < nd && delta[j].fingerprint == bfp && dk == bkey) {
      if (++j < nd) dk = delta_key(j);
    }
    for (std::size_t h = 0; h < heads.size();) {
      Head& hd = heads[h];
      if (hd.run->fingerprints[hd.i] == bfp && hd.run->key(hd.i) == bkey) {
        if (++hd.i == hd.run->size()) {
          heads[h] = heads.back();
          heads.pop_back();
          continue;
        }
      }
      ++h;
    }
  }
}

}  // namespace bloomshard::core::detail
