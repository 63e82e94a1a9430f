// The one order inside a window of one slot a run (--kept-copy first
// --window N, docs/inputs.md "Which copy of a duplicate is kept"): a
// windowed TwoTierSet decides, a FileOrder across inputs retracts, the
// copies arriving in any order. Within a run (one slot) a record is a
// duplicate when its key occurred in one of the N slots before or earlier
// in input order in this run; the kept copy of a key new to the window is
// its first copy in input order. A key that occurred in an older live slot
// is a duplicate in every copy: tier 2 says so for each (the first copy to
// arrive refreshes it into the current slot), nothing is remembered for it,
// so no copy of it is ever retracted into kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core/order/file_order.hpp"
#include "core/window/slot_window.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

struct Copy {
  std::string key;
  OrderTag tag;
};

// One run: `inputs` inputs read by one reader each, in order; keys drawn
// so that they recur within the run and across runs (some only in slots
// long expired).
std::vector<std::vector<Copy>> make_run(std::mt19937_64& rng, int run) {
  std::vector<std::vector<Copy>> inputs(2 + rng() % 4);
  for (std::size_t input = 0; input < inputs.size(); ++input) {
    std::uint64_t offset = 0;
    const int n = 40 + static_cast<int>(rng() % 120);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t u = rng() % 10;
      const std::string key =
          u < 3   ? numbered("hot", rng() % 60)
          : u < 7 ? numbered("drift", static_cast<std::uint64_t>(run) * 80 + rng() % 200)
                  : numbered("rare", rng() % 900);
      inputs[input].push_back(
          {key, *order_tag_base(input, std::uint64_t{1} << 30, false) | offset});
      offset += 10 + rng() % 50;
    }
  }
  return inputs;
}

TEST(WindowInputOrder, KeepsTheFirstCopyOfKeysNewToTheWindowAndNeverRetractsAnOlderSlotsKey) {
  constexpr std::uint32_t kWindow = 2;
  constexpr int kRuns = 8;
  ScalableBloomParams p;
  p.initial_capacity = 400;
  p.fpr_target = 0.05;  // false positives: tier 2 must catch them
  p.num_slices = 16;
  TwoTierSet set(p, {0, 16});
  const std::vector<std::uint64_t> first_slot{0};
  set.bloom().start_window(kWindow, 0, first_slot);
  std::mt19937_64 rng(29);
  std::vector<std::set<std::string>> slot_keys;  // oracle: the keys each run's slot holds
  std::uint64_t run_id = 1;
  std::size_t retractions = 0;
  std::size_t older_slot_copies_out_of_order = 0;
  for (int run = 0; run < kRuns; ++run) {
    if (run > 0) set.open_slot(static_cast<std::uint64_t>(run));
    std::set<std::string> window;  // keys of the kWindow slots before this one
    for (int s = std::max(0, run - static_cast<int>(kWindow)); s < run; ++s) {
      const std::set<std::string>& live = slot_keys[static_cast<std::size_t>(s)];
      window.insert(live.begin(), live.end());
    }
    std::vector<std::vector<Copy>> inputs = make_run(rng, run);
    // The oracle: the first copy in input order of every key new to the window.
    std::set<OrderTag> want;
    std::set<std::string> keys_of_run;
    std::map<OrderTag, std::string> key_of;
    for (const auto& in : inputs) {
      for (const Copy& c : in) {
        key_of[c.tag] = c.key;
        if (!window.count(c.key) && keys_of_run.insert(c.key).second) want.insert(c.tag);
        keys_of_run.insert(c.key);
      }
    }
    // Arrival: readers hand over batches at random, later inputs often first.
    FileOrder order(OrderScope::kAcrossInputs);  // a run's table starts empty
    std::vector<std::size_t> next(inputs.size(), 0);
    std::set<OrderTag> kept;
    std::map<std::string, OrderTag> first_arrived;  // the first copy of a key to arrive
    for (;;) {
      std::vector<Copy> round;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (next[i] >= inputs[i].size() || rng() % 2 == 0) continue;
        const std::size_t take = 1 + rng() % 30;
        for (std::size_t j = 0; j < take && next[i] < inputs[i].size(); ++j) {
          round.push_back(inputs[i][next[i]++]);
        }
      }
      if (round.empty()) {
        bool done = true;
        for (std::size_t i = 0; i < inputs.size(); ++i) done = done && next[i] >= inputs[i].size();
        if (done) break;
        continue;
      }
      std::vector<OrderTag> tags;
      for (const Copy& c : round) tags.push_back(c.tag);
      std::vector<std::uint32_t> at;
      order_by_tag(tags, at);  // the owner decides a sub-round in tag order
      std::vector<KeyRef> keys;
      std::vector<OrderTag> sorted_tags;
      std::vector<Verdict> verdicts;
      for (const std::uint32_t i : at) {
        keys.push_back({hash_key(round[i].key), round[i].key});
        sorted_tags.push_back(round[i].tag);
      }
      for (const KeyRef& k : keys) {
        verdicts.push_back(set.decide(k));
        if (set.bloom().layer_full(set.bloom().newest_layer_inserted())) set.bloom().add_layer();
      }
      std::vector<OrderTag> same_input;
      std::vector<CrossInputRetraction> other_inputs;
      const std::vector<Verdict> tier2 = verdicts;
      order.settle(keys, sorted_tags, verdicts, same_input, &other_inputs);
      ASSERT_TRUE(same_input.empty()) << "whole inputs: no range to join";
      for (std::size_t j = 0; j < keys.size(); ++j) {
        const std::string key(keys[j].bytes);
        const bool out_of_order = first_arrived.emplace(key, sorted_tags[j]).second
                                      ? false
                                      : sorted_tags[j] < first_arrived[key];
        if (window.count(key)) {
          // Occurred in an older live slot: a duplicate, whatever arrived first.
          ASSERT_EQ(tier2[j], Verdict::kDuplicate) << key;
          ASSERT_EQ(verdicts[j], Verdict::kDuplicate) << key << " retracted into kept";
          older_slot_copies_out_of_order += out_of_order;
        }
        if (is_kept(verdicts[j])) kept.insert(sorted_tags[j]);
      }
      for (const CrossInputRetraction& r : other_inputs) {
        ASSERT_EQ(window.count(key_of.at(r.tag)), 0u) << "a key of an older slot was retracted";
        ASSERT_EQ(r.hash, hash_key(key_of.at(r.tag)));
        ASSERT_EQ(kept.erase(r.tag), 1u) << "retracted a copy that was not kept";
        ++retractions;
      }
      // The watermark: the first record no reader has handed over yet.
      std::uint64_t w = ~std::uint64_t{0};
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (next[i] < inputs[i].size()) w = std::min(w, order_position(inputs[i][next[i]].tag));
      }
      order.forget_before(w);
    }
    ASSERT_EQ(kept, want) << "run " << run;
    EXPECT_EQ(order.size(), 0u) << "everything read: nothing left to retract";
    // The slot holds every key that occurred in the run, once, whichever
    // copy was kept (refreshed keys included).
    EXPECT_EQ(set.exact().delta_keys(), keys_of_run.size()) << "run " << run;
    slot_keys.push_back(keys_of_run);
    test::flush_delta_into_run(set, run_id++);
  }
  EXPECT_GT(retractions, 30u) << "the arrival order must retract kept copies";
  EXPECT_GT(older_slot_copies_out_of_order, 20u)
      << "older slots' keys must arrive out of order, or the case tests nothing";
  EXPECT_GT(set.counters().refreshed, 0u);
}

}  // namespace
}  // namespace bloomshard::core
