// A quick end-to-end check of the core on this machine (hashing, slicing,
// both tiers, counters, FPR), for `bloomshard self-check` and smoke tests.
// No MPI, no files; ~200k synthetic keys, well under a second in Release.
#pragma once

#include <string>

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

}  // namespace bloomshard::core
