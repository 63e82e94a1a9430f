// One round of a dedup job, as its named steps, in the design's data flow:
//   read   - this rank's next batch of records and keys (read_step.hpp);
//   route  - keys to the owners of their slices and verdicts back, in
//            sub-rounds under --max-exchange-bytes (comm::KeyRouter);
//   decide - at the owner, each sub-round's share (KeyOrder::decide);
//   write  - the kept records appended to the outputs;
//   agree  - one reduction of what every rank must know (round_agreement.hpp).
// The key order (batch or file order) is a strategy chosen once per run; the
// Bloom layer growth between sub-rounds is LayerGrowth's. Every step but
// read and write is collective. The round objects are reused: a Round holds
// the batch and the verdicts of the current round, and the phase times of
// all rounds so far.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/report/job_metrics.hpp"
#include "app/round/key_order.hpp"
#include "app/round/layer_growth.hpp"
#include "app/round/round_agreement.hpp"
#include "app/round/round_batch.hpp"
#include "app/split/lockstep_layout.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"

namespace bloomshard::app {

/// Seconds this rank spent in each phase, wall time and the kernel's share
/// (page faults, system calls).
struct PhaseTotals {
  PhaseSeconds wall;
  PhaseSeconds system;
};

/// What a round works on, all owned by the job and outliving the Round.
struct RoundParts {
  const comm::Communicator& world;
  comm::KeyRouter& router;
  core::TwoTierSet& set;
  InputFeed& feed;
  KeyOrder& order;
  LayerGrowth& growth;
  std::uint64_t max_exchange_bytes;  ///< --max-exchange-bytes: a sub-round's budget
  /// --unit minhash: a record's keys travel in one sub-round (RouteOptions::
  /// key_groups), so every owner ranks two records alike and a record is a
  /// near-duplicate only of one decided before it at every owner.
  bool record_keys_together = false;
  /// The lockstep layout (app/split/lockstep_layout.hpp): where each
  /// round's staged block goes; null in the tasks layout.
  LockstepOutputs* lockstep = nullptr;
};

class Round {
 public:
  explicit Round(const RoundParts& parts) : p_(parts) {}

  /// Step read: the next batch, its keys to route. A broken input is kept
  /// as input_error() for the agreement, never thrown.
  void read();

  /// Steps route and decide (collective): verdicts for every key of the
  /// batch; the decisions are timed apart from the exchange.
  void route();

  /// Step decide, at the owner: `keys` of a sub-round into `verdicts`.
  void decide(std::span<const core::KeyRef> keys, std::span<core::Verdict> verdicts);

  /// Step write: `fence()` first (a fenced-out attempt never extends an
  /// output, it throws), then the kept records. Ends the round's count.
  /// Collective in the lockstep layout (one allgather places the blocks).
  void write(const std::function<void()>& fence);

  /// Step agree (collective): this rank's facts summed over all ranks;
  /// `checkpoint_due` is rank 0's clock, `max_delta_bytes` the tier-2
  /// delta's budget. Opens the next Bloom layer when the newest is full.
  [[nodiscard]] RoundAgreement agree(bool checkpoint_due, std::uint64_t max_delta_bytes);

  /// Rounds written so far.
  [[nodiscard]] std::uint64_t number() const noexcept { return number_; }
  /// The batch and its verdicts, as the last steps left them.
  [[nodiscard]] const RoundBatch& batch() const noexcept { return batch_; }
  [[nodiscard]] std::span<const core::Verdict> verdicts() const noexcept { return verdicts_; }
  /// This rank's input error (empty: none), kept from the round it broke in.
  [[nodiscard]] const std::string& input_error() const noexcept { return input_error_; }
  [[nodiscard]] const PhaseTotals& phases() const noexcept { return phases_; }
  /// Anonymous memory (heap) at the rounds' peaks so far.
  [[nodiscard]] std::uint64_t peak_rss_anon() const noexcept { return peak_rss_anon_; }
  /// Samples the anonymous memory again (after a checkpoint).
  void sample_rss_anon();

 private:
  // route()'s two ways: the lockstep layout's round of one sub-round
  // without tags (false: it needs several, nothing was exchanged but the
  // loads), and the order's keys.
  bool route_untagged(PhaseTotals& round);
  void route_by_order(PhaseTotals& round);
  [[nodiscard]] comm::RouteOptions route_options();

  RoundParts p_;
  RoundBatch batch_;
  std::span<const core::KeyRef> keys_;     // this round's keys to route (read())
  std::vector<std::uint32_t> key_groups_;  // record_keys_together: each key's record
  std::vector<core::Verdict> verdicts_;
  std::vector<std::uint8_t> answers_;  // KeyOrder::answer_bytes() a key of the batch, or none
  bool untagged_ = false;              // this round's keys_ are the batch's, without order tags
  std::string input_error_;
  PhaseTotals phases_;
  std::uint64_t number_ = 0;
  std::uint64_t peak_rss_anon_ = 0;
};

}  // namespace bloomshard::app
