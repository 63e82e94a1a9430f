#include "core/tier2/run_compaction.hpp"

#include <algorithm>
#include <stdexcept>

namespace bloomshard::core {

CompactionPlan plan_compaction(std::span<const std::uint32_t> levels,
                               const CompactionPolicy& policy) {
  if (policy.fanout < 2) throw std::invalid_argument("compaction fanout must be >= 2");
  if (policy.max_runs < 1) throw std::invalid_argument("compaction max_runs must be >= 1");
  const std::size_t n = levels.size();
  // level of the i-th newest run (0 = newest)
  const auto newest = [&](std::size_t i) { return levels[n - 1 - i]; };
  CompactionPlan plan;
  if (std::find(levels.begin(), levels.end(), kLegacyRunLevel) != levels.end()) {
    return {n, kBaseRunLevel};  // a format-1 history: one rewrite into format 2
  }
  while (!policy.cap_only) {
    std::size_t same = 0;
    while (plan.merge_runs + same < n && newest(plan.merge_runs + same) == plan.level) ++same;
    if (same + 1 < policy.fanout) break;
    plan.merge_runs += same;
    ++plan.level;
  }
  // Over the cap: absorb the newest whole level early and go above it (a
  // run that absorbed only part of a level would be absorbed again soon).
  while (n - plan.merge_runs + 1 > policy.max_runs) {
    const std::uint32_t level = newest(plan.merge_runs);
    while (plan.merge_runs < n && newest(plan.merge_runs) == level) ++plan.merge_runs;
    plan.level = std::max(plan.level, level + 1);
  }
  return plan;
}

}  // namespace bloomshard::core
