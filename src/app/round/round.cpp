#include "app/round/round.hpp"

#include <algorithm>

#include "app/report/resource_usage.hpp"
#include "app/round/phase_timer.hpp"
#include "app/round/read_step.hpp"
#include "app/run/stop_signal.hpp"
#include "app/run/watchdog.hpp"
#include "comm/heartbeat.hpp"

namespace bloomshard::app {

void Round::read() {
  // --- watchdog: one beat per round, and what the round is doing.
  comm::heartbeat();
  set_activity("reading inputs", number_ + 1);
  const PhaseTimer reading;
  read_round(p_.feed, batch_, input_error_);
  // The lockstep layout tags its keys only for a round that needs it
  // (route(): more than one sub-round).
  untagged_ = p_.lockstep != nullptr && p_.order.reads_in_lockstep();
  keys_ = untagged_ ? batch_.keys() : p_.order.keys_to_route(batch_, p_.feed);
  key_groups_.clear();
  if (p_.record_keys_together) {  // batch order: keys_ are the batch's keys
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      key_groups_.insert(key_groups_.end(), batch_.key_count(i), static_cast<std::uint32_t>(i));
    }
  }
  reading.add_to(phases_.wall.read, phases_.system.read);
}

void Round::route() {
  const PhaseTimer routing;
  set_activity("exchanging keys and deciding", number_ + 1);
  PhaseTotals round;  // this round's decide (and route) times
  if (untagged_ && !route_untagged(round)) {
    keys_ = p_.order.keys_to_route(batch_, p_.feed);  // several sub-rounds: with tags
    untagged_ = false;
  }
  if (!untagged_) route_by_order(round);
  routing.add_to(round.wall.route, round.system.route);
  if (!untagged_) p_.order.settle(verdicts_, p_.feed);
  phases_.wall.decide += round.wall.decide;
  phases_.system.decide += round.system.decide;
  phases_.wall.route += round.wall.route - round.wall.decide;
  phases_.system.route += round.system.route - round.system.decide;
}

// A lockstep round of one sub-round decided without tags. Proof that it
// keeps the first copy in the one order: the batch of rank r is block
// iP + r whole (one block a round), so its keys in batch order are in the
// one order, and the router sends a key's first copy in the batch (the
// earliest in the block) and drops the later ones as duplicates. An owner
// receives in one sub-round every rank's keys it owns, rank 0's first,
// each rank's in its batch order (MPI_Alltoallv and the node-aware
// exchange alike place them by source rank: comm/router.hpp "Decision
// order at an owner"), so in the one order; deciding them in that order
// keeps the earliest copy of each key of the round, and no copy of an
// earlier round is later, no copy of a later round earlier (the proof in
// key_order.cpp of a round without the owners' table). So the verdicts are
// the tagged path's, without the tags on the wire, the in-batch pass that
// keeps tagged copies apart, the sort at the owner and the table.
bool Round::route_untagged(PhaseTotals& round) {
  verdicts_.resize(batch_.keys().size());
  comm::RouteOptions options = route_options();
  options.only_in_one_subround = true;
  return p_.router.route(
      keys_,
      [&](std::span<const core::KeyRef> owned_keys, std::span<core::Verdict> verdicts) {
        const PhaseTimer deciding;
        p_.set.decide_batch(owned_keys, verdicts);
        deciding.add_to(round.wall.decide, round.system.decide);
      },
      verdicts_, options);
}

void Round::route_by_order(PhaseTotals& round) {
  verdicts_.resize(batch_.keys().size());
  // Annotate mode with confirmation: each key's match comes back beside
  // its verdict (the confirming order routes the batch's keys as they are).
  const std::size_t answer_bytes = p_.order.answer_bytes();
  answers_.resize(answer_bytes * keys_.size());
  comm::RouteOptions options = route_options();
  options.key_groups = key_groups_;
  options.answer_bytes = answer_bytes;
  options.answer = [&](std::span<std::uint8_t> out) { p_.order.take_answers(out); };
  options.answers = answers_;
  p_.router.route(
      keys_,
      [&](std::span<const core::KeyRef> owned_keys, std::span<core::Verdict> verdicts) {
        const PhaseTimer deciding;
        decide(owned_keys, verdicts);
        deciding.add_to(round.wall.decide, round.system.decide);
      },
      p_.order.route_verdicts(verdicts_), options);
}

// Both ways: the sub-round budget, the newest layer's room, and the hooks
// that open layers and tell the order how many sub-rounds the round takes.
comm::RouteOptions Round::route_options() {
  return {.budget = p_.max_exchange_bytes,
          .max_keys = p_.growth.max_keys(p_.set),
          .before_subround =
              [this](std::uint64_t upcoming) { p_.growth.before_subround(p_.set, upcoming); },
          .before_first_subround =
              [this](std::uint64_t subrounds) { p_.order.plan_subrounds(subrounds); }};
}

void Round::decide(std::span<const core::KeyRef> keys, std::span<core::Verdict> verdicts) {
  p_.order.decide(p_.set, keys, verdicts);
}

void Round::write(const std::function<void()>& fence) {
  const PhaseTimer writing;
  set_activity("writing outputs", number_ + 1);
  fence();
  p_.feed.write_kept(batch_, verdicts_, answers_);
  if (p_.lockstep != nullptr) {
    p_.feed.write_staged(p_.lockstep->place(p_.world, p_.feed.staged()), batch_);
  }
  writing.add_to(phases_.wall.write, phases_.system.write);
  ++number_;
  sample_rss_anon();
}

void Round::sample_rss_anon() {
  // Mapped checkpoint pages are page cache, not counted.
  peak_rss_anon_ = std::max(peak_rss_anon_, rss_anon_bytes());
}

RoundAgreement Round::agree(bool checkpoint_due, std::uint64_t max_delta_bytes) {
  const PhaseTimer agreeing;
  set_activity("agreeing on the round's end", number_);
  const FeedCounters& c = p_.feed.counters();
  RoundAgreement mine;
  mine.ranks_reading = p_.feed.exhausted() ? 0U : 1U;
  mine.input_errors = input_error_.empty() ? 0U : 1U;
  mine.newest_inserted = p_.set.bloom().newest_layer_inserted();
  mine.records = c.records;
  mine.dropped = c.dropped;
  mine.rejected = c.rejected;
  mine.input_bytes_done = c.input_bytes_done;
  mine.stop_requests = stop_requested() ? 1U : 0U;
  mine.delta_over_budget = p_.set.exact().delta_bytes() > max_delta_bytes ? 1U : 0U;
  mine.checkpoint_due = checkpoint_due ? 1U : 0U;
  mine.broken_inputs = p_.feed.skip_pending() ? 1U : 0U;
  const RoundAgreement all = app::agree(p_.world, mine);
  p_.order.after_round(p_.world, p_.feed);
  agreeing.add_to(phases_.wall.route, phases_.system.route);
  p_.growth.after_round(p_.set, all.newest_inserted);
  return all;
}

}  // namespace bloomshard::app
