// A quick end-to-end check of the core on this machine (hashing, slicing,
// both tiers, counters, FPR), for `bloomshard self-check` and smoke tests.
// No MPI, no files; ~200k synthetic keys, well under a second in Release.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::core {

/// Result of run_self_check(): ok is false on any mismatch; text holds a few
/// human-readable lines (figures, and what failed).
struct SelfCheckReport {
  bool ok = false;
  std::string text;
};

/// Decides 200k synthetic keys (150k distinct, 50k known repeats, some with
/// NUL bytes, non-ASCII and empty) through a growing TwoTierSet and checks:
/// verdicts match ground truth (no false negative, no dropped record),
/// counters add up, tier 2 holds exactly the distinct keys, and the measured
/// false-positive rate is within 1.5x the 1% target. Never throws for a
/// failed check (only std::bad_alloc).
[[nodiscard]] SelfCheckReport run_self_check();

/// What a self-check run measured, and its verdicts against the truth of
/// its stream. The rules below read only this, so that each can be tested
/// without a broken build (a correct one passes them all).
struct SelfCheckFacts {
  std::size_t keys = 0;           ///< verdicts given (the stream's length)
  std::size_t wrong_new = 0;      ///< repeats reported new (false negatives)
  std::size_t wrong_dup = 0;      ///< first copies reported duplicates
  std::uint64_t fp_verdicts = 0;  ///< kNewAfterFalsePositive verdicts
  DecisionCounters counters;      ///< the set's own counters
  std::size_t tier2_keys = 0;     ///< keys tier 2 holds at the end
  std::size_t bloom_layers = 0;   ///< Bloom layers at the end
  double fpr = 0;                 ///< false positives / distinct keys
};

/// Every rule `f` breaks, one line each, in a fixed order (empty: all
/// hold), for a stream of `distinct` keys and `repeats` repeats decided
/// against `fpr_target`: no false negative, no first copy dropped, every
/// key decided once, the counters add up, the duplicates are the repeats,
/// the false-positive counter is the verdicts', tier 2 holds the distinct
/// keys, the filter grew past its first layer, FPR within 1.5x target.
[[nodiscard]] std::vector<std::string> self_check_failures(const SelfCheckFacts& f,
                                                           std::size_t distinct,
                                                           std::size_t repeats, double fpr_target);

}  // namespace bloomshard::core
