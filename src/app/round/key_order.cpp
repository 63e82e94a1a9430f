#include "app/round/key_order.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "app/feed/minhash_records.hpp"
#include "app/round/confirmed_band_order.hpp"
#include "app/split/file_order_rebuild.hpp"
#include "app/split/order_tag_wire.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "core/order/file_order.hpp"

namespace bloomshard::app {
namespace {

class BatchOrder final : public KeyOrder {
 public:
  std::span<const core::KeyRef> keys_to_route(const RoundBatch& batch, InputFeed&) override {
    return batch.keys();
  }
  std::span<core::Verdict> route_verdicts(std::span<core::Verdict> batch_verdicts) override {
    return batch_verdicts;
  }
  void decide(core::TwoTierSet& set, std::span<const core::KeyRef> keys,
              std::span<core::Verdict> verdicts) override {
    set.decide_batch(keys, verdicts);
  }
  void settle(std::span<core::Verdict>, InputFeed&) override {}
  std::uint64_t remember_committed(comm::KeyRouter&, const RunManifest&, InputFeed&,
                                   const std::filesystem::path&, std::uint64_t) override {
    return 0;
  }
  bool in_file_order() const noexcept override { return false; }
};

// Within one input (split inputs) or across all inputs: the same steps;
// across inputs the owner also decides each sub-round in tag order and
// forgets what the watermark makes final.
class FileOrderKeys final : public KeyOrder {
 public:
  FileOrderKeys(core::OrderScope scope, std::size_t reserve) : order_(scope) {
    order_.reserve(reserve);
  }

  // Later copies of a key in the batch stay home; the others go with tags.
  std::span<const core::KeyRef> keys_to_route(const RoundBatch& batch, InputFeed& feed) override {
    feed.count_combined(combine_in_file_order(batch.keys(), batch.tags(), scratch_, routed_index_));
    routed_keys_.clear();
    routed_tags_.clear();
    for (const std::uint32_t i : routed_index_) {
      routed_keys_.push_back(batch.keys()[i]);
      routed_tags_.push_back(batch.tags()[i]);
    }
    append_order_tags(routed_keys_, routed_tags_, wire_bytes_, wire_keys_);
    return wire_keys_;
  }
  std::span<core::Verdict> route_verdicts(std::span<core::Verdict>) override {
    routed_verdicts_.resize(wire_keys_.size());
    return routed_verdicts_;
  }
  void decide(core::TwoTierSet& set, std::span<const core::KeyRef> keys,
              std::span<core::Verdict> verdicts) override {
    split_order_tags(keys, untagged_keys_, owned_tags_);
    if (!across()) {
      set.decide_batch(untagged_keys_, verdicts);
      order_.settle(untagged_keys_, owned_tags_, verdicts, retracted_round_);
      return;
    }
    // In tag order, the earliest of the copies arriving together is kept
    // first: no retraction for them.
    core::order_by_tag(owned_tags_, sorted_);
    if (without_table_) {  // plan_subrounds(): nothing to remember or retract
      sorted_keys_.clear();
      for (const std::uint32_t i : sorted_) sorted_keys_.push_back(untagged_keys_[i]);
      sorted_verdicts_.resize(sorted_.size());
      set.decide_batch(sorted_keys_, sorted_verdicts_);
      for (std::size_t j = 0; j < sorted_.size(); ++j) verdicts[sorted_[j]] = sorted_verdicts_[j];
      return;
    }
    sorted_keys_.clear();
    sorted_tags_.clear();
    for (const std::uint32_t i : sorted_) {
      sorted_keys_.push_back(untagged_keys_[i]);
      sorted_tags_.push_back(owned_tags_[i]);
    }
    sorted_verdicts_.resize(sorted_.size());
    set.decide_batch(sorted_keys_, sorted_verdicts_);
    order_.settle(sorted_keys_, sorted_tags_, sorted_verdicts_, retracted_round_, &other_inputs_);
    for (std::size_t j = 0; j < sorted_.size(); ++j) verdicts[sorted_[j]] = sorted_verdicts_[j];
  }
  // Keys that stayed home are the batch's later copies: duplicates.
  void settle(std::span<core::Verdict> batch_verdicts, InputFeed& feed) override {
    std::fill(batch_verdicts.begin(), batch_verdicts.end(), core::Verdict::kDuplicate);
    for (std::size_t j = 0; j < routed_index_.size(); ++j) {
      batch_verdicts[routed_index_[j]] = routed_verdicts_[j];
    }
    feed.note_retracted(retracted_round_);
    retracted_round_.clear();
  }
  std::uint64_t remember_committed(comm::KeyRouter& router, const RunManifest& m, InputFeed& feed,
                                   const std::filesystem::path& output_dir,
                                   std::uint64_t budget) override {
    return rebuild_file_order(router, m, feed, output_dir, budget, order_);
  }
  bool in_file_order() const noexcept override { return !across(); }
  bool in_input_order() const noexcept override { return across(); }

  // Collective: the watermark is the first record some rank has not read.
  // Kept copies are forgotten when it enters a new input (a pass over the
  // table, at most once per input).
  void after_round(const comm::Communicator& world, const InputFeed& feed) override {
    if (!across()) return;
    const std::uint64_t watermark = ~world.allreduce_max(~feed.unread_position());
    // In lockstep every round's copies become final together: a pass over
    // a table sized for one round. Else once per input (the table holds
    // the inputs being read).
    if (lockstep_ || core::order_input(watermark) != core::order_input(order_.watermark())) {
      order_.forget_before(watermark);
    }
  }
  // In lockstep a round decided in one sub-round needs no table. Proof: at
  // the start of round i the watermark stands at block iP, the first block
  // of the round (after round i - 1 every rank with blocks left stands at
  // its next one, iP + r), and forget_before() left the table empty (every
  // copy of rounds < i lies before it). In one sub-round every copy of a
  // key read in round i reaches the key's owner in that sub-round, and is
  // decided in tag order, so the first of them in the one order is decided
  // first; every other copy of the key lies in this round (decided after it
  // here) or in a later round (blocks from (i + 1)P on, after every record
  // of this round). So no copy decided later can precede a kept copy of
  // this round: remembering it serves nothing, and no duplicate of this
  // round has a remembered copy to retract (the table is empty). With
  // several sub-rounds a later sub-round may bring an earlier copy (a lower
  // rank's block's tail), so the table is used as in every other round.
  void plan_subrounds(std::uint64_t subrounds) override {
    without_table_ = lockstep_ && subrounds == 1;
    if (without_table_) ++rounds_without_table_;
  }
  std::uint64_t rounds_without_table() const noexcept override { return rounds_without_table_; }

  void read_in_lockstep() override {
    if (!across()) return;
    order_.set_inputs_read_by_many();
    lockstep_ = true;
  }
  bool reads_in_lockstep() const noexcept override { return lockstep_; }
  std::span<const core::CrossInputRetraction> cross_input_retractions() const override {
    return other_inputs_;
  }
  std::optional<InputOrderProgress> input_order_cut(const comm::Communicator&) const override {
    if (!across()) return std::nullopt;
    // The retractions are not gathered: each rank writes its own as rows of
    // the generation (cross_input_retractions(), Checkpointer).
    InputOrderProgress p;
    p.watermark = order_.watermark();
    return p;
  }
  std::vector<core::CrossInputRetraction> remembered_copies() const override {
    return across() ? order_.remembered() : std::vector<core::CrossInputRetraction>{};
  }
  void restore_input_order(const InputOrderProgress& p, const comm::KeyRouter& router,
                           int rank) override {
    if (!across()) return;
    order_.forget_before(p.watermark);
    for (const core::CrossInputRetraction& e : p.kept) {
      if (router.owner_of(e.hash) == static_cast<std::uint32_t>(rank)) order_.restore(e);
    }
    // Each retraction on the owner of its key's slice, as the rounds leave
    // them (a version-3 state gives each rank only its own already; the
    // lists of older states are the same on every rank). The end pass
    // gathers them from every rank.
    other_inputs_.clear();
    for (const core::CrossInputRetraction& e : p.retracted) {
      if (router.owner_of(e.hash) == static_cast<std::uint32_t>(rank)) other_inputs_.push_back(e);
    }
  }

 private:
  [[nodiscard]] bool across() const noexcept {
    return order_.scope() == core::OrderScope::kAcrossInputs;
  }

  core::FileOrder order_;                        // the owner's kept copies that may be retracted
  CombineScratch scratch_;                       // combine_in_file_order()'s
  std::vector<std::uint32_t> routed_index_;      // batch index of each key routed
  std::vector<core::KeyRef> routed_keys_;        // those keys
  std::vector<core::OrderTag> routed_tags_;      // and their tags
  std::vector<core::Verdict> routed_verdicts_;   // and their verdicts
  std::vector<char> wire_bytes_;                 // this round's keys with their tags
  std::vector<core::KeyRef> wire_keys_;          // views into wire_bytes_
  std::vector<core::KeyRef> untagged_keys_;      // an owner's keys without their tags
  std::vector<core::OrderTag> owned_tags_;       // and the tags
  std::vector<core::OrderTag> retracted_round_;  // this round's retractions
  // Across inputs: a sub-round in tag order, and the retracted copies of
  // other inputs, kept for the run's end (leave_out_retracted_copies()).
  std::vector<std::uint32_t> sorted_;
  std::vector<core::KeyRef> sorted_keys_;
  std::vector<core::OrderTag> sorted_tags_;
  std::vector<core::Verdict> sorted_verdicts_;
  std::vector<core::CrossInputRetraction> other_inputs_;
  bool lockstep_ = false;       // read_in_lockstep()
  bool without_table_ = false;  // this round: plan_subrounds() found one sub-round in lockstep
  std::uint64_t rounds_without_table_ = 0;
};

}  // namespace

bool keeps_file_order(const DedupConfig& config, const RunManifest& m) {
  return config.annotate.mode == RunMode::kFilter && config.key.unit == core::KeyUnit::kRecord &&
         config.window.window == 0 &&
         std::any_of(m.inputs.begin(), m.inputs.end(),
                     [](const InputProgress& p) { return !p.ranges.empty() && !p.done; });
}

std::size_t file_order_reserve(const RunManifest& m, std::uint32_t ranks) {
  std::uint64_t bytes = 0;
  for (const InputProgress& p : m.inputs) {
    if (p.done) continue;
    for (std::size_t k = 1; k < p.ranges.size(); ++k) bytes += p.ranges[k].end - p.ranges[k].begin;
  }
  return static_cast<std::size_t>(std::min<std::uint64_t>(bytes / 128 / ranks, 1U << 20));
}

std::unique_ptr<KeyOrder> make_batch_order() { return std::make_unique<BatchOrder>(); }

std::unique_ptr<KeyOrder> make_file_order(std::size_t reserve) {
  return std::make_unique<FileOrderKeys>(core::OrderScope::kWithinInput, reserve);
}

std::unique_ptr<KeyOrder> make_input_order(std::size_t reserve) {
  return std::make_unique<FileOrderKeys>(core::OrderScope::kAcrossInputs, reserve);
}

bool keeps_input_order(const DedupConfig& config) {
  return config.kept_copy == KeptCopy::kFirstInInputOrder && input_order_limit(config).empty();
}

std::size_t input_order_reserve(const RunManifest& m, std::uint32_t ranks) {
  std::uint64_t bytes = 0;
  for (const InputProgress& p : m.inputs) bytes += p.file.size;
  return static_cast<std::size_t>(std::min<std::uint64_t>(
      bytes / core::kInputOrderReserveBytesPerKey / ranks, core::kInputOrderMaxReserveKeys));
}

std::unique_ptr<KeyOrder> make_key_order(const DedupConfig& config, const RunManifest& m,
                                         std::uint32_t ranks, InputFeed& feed,
                                         std::uint64_t lockstep_round_bytes) {
  if (config.key.unit == core::KeyUnit::kMinHash && config.key.confirm_jaccard > 0.0) {
    return make_confirmed_band_order(
        config.key.confirm_jaccard, config.key.bands * config.key.rows, core::kDefaultConfirmBits,
        wire_keys_carry_positions(config.key, config.annotate.mode == RunMode::kAnnotate));
  }
  if (keeps_input_order(config)) {
    feed.tag_keys_in_input_order();
    if (lockstep_round_bytes == 0) return make_input_order(input_order_reserve(m, ranks));
    // One round's keys, spread over the owners.
    std::unique_ptr<KeyOrder> order = make_input_order(static_cast<std::size_t>(
        std::min(lockstep_round_bytes / core::kInputOrderReserveBytesPerKey / ranks,
                 core::kInputOrderMaxReserveKeys)));
    order->read_in_lockstep();
    return order;
  }
  if (!keeps_file_order(config, m)) return make_batch_order();
  feed.tag_keys_in_file_order();
  return make_file_order(file_order_reserve(m, ranks));
}

}  // namespace bloomshard::app
