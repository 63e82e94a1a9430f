// The dedup job's metrics: per-rank readings reduced over all ranks into one
// summary, written as JSON by rank 0 (--metrics) and printed as a short
// summary. Field names are a stable interface (scripts and the benchmark
// read them); add fields, never rename.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bloomshard/app/input_feed.hpp"
#include "bloomshard/comm/communicator.hpp"
#include "bloomshard/comm/router.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::app {

/// Seconds one rank spent in each phase of the rounds.
struct PhaseSeconds {
  double read = 0;    ///< reading, parsing, normalizing, hashing
  double route = 0;   ///< both all-to-all exchanges and the round agreement
  double decide = 0;  ///< tier 1 + tier 2 on the owner
  double write = 0;   ///< writing kept records
};

/// One layer of the filter, whole job.
struct LayerSummary {
  std::uint64_t capacity = 0;
  double fpr_target = 0;
  std::uint32_t k = 0;
  double bits_per_key = 0;
  std::uint64_t bits = 0;
  std::uint64_t inserted = 0;
  double fill_ratio = 0;
  double fpr_estimate = 0;
  double cardinality_estimate = 0;
};

struct JobSummary {
  int ranks = 0;
  std::uint64_t input_files = 0;
  std::uint64_t input_bytes = 0;
  FeedCounters feed;                  // sums
  core::DecisionCounters decisions;   // sums
  std::uint64_t bytes_exchanged = 0;  // key payload sent to other ranks (not to self)
  std::uint64_t payload_bytes = 0;    // key payload routed, self included
  std::uint64_t rounds = 0;
  PhaseSeconds phase_seconds_max;  // max over ranks
  double wall_seconds = 0;
  std::uint64_t max_rss_bytes = 0;
  std::map<std::string, std::uint64_t> rejected_by_reason;
  std::vector<LayerSummary> layers;
  std::uint64_t filter_bits = 0;
  double fpr_estimate = 0;  // compound: sum over layers
  double cardinality_estimate = 0;
  std::uint64_t tier2_keys = 0;
  double fpr_target = 0;
};

/// Collective: reduces every rank's readings into the summary (valid on
/// every rank).
[[nodiscard]] JobSummary reduce_metrics(const comm::Communicator& comm, const InputFeed& feed,
                                        const core::TwoTierSet& set,
                                        const comm::RouterStats& router, const PhaseSeconds& phases,
                                        std::uint64_t rounds, double wall_seconds);

/// The metrics document (JSON object).
[[nodiscard]] std::string metrics_json(const JobSummary& s);

/// A few human lines for the end of the log.
[[nodiscard]] std::string summary_text(const JobSummary& s);

}  // namespace bloomshard::app
