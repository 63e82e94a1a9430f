// Rolling windows in core: the slot arithmetic (attribute text, durations,
// expiry prefixes, per-slot geometry) and a windowed TwoTierSet driven slot
// by slot (each slot's delta flushed into a run tagged with it, as a
// checkpoint does) against an independent oracle: a key is a duplicate iff
// it occurred in the current slot or one of the `window` slots before it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core/window/slot_window.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

TEST(SlotWindow, AttributeRoundTripAndRefusals) {
  const WindowSpec run{3, SlotRule::kPerRun, 0};
  const WindowSpec records{5, SlotRule::kRecords, 5000};
  const WindowSpec seconds{2, SlotRule::kWallSeconds, 86400};
  EXPECT_EQ(window_attribute(run), "window/v1; slots=3; slot=run");
  EXPECT_EQ(window_attribute(records), "window/v1; slots=5; slot=records:5000");
  EXPECT_EQ(window_attribute(seconds), "window/v1; slots=2; slot=seconds:86400");
  for (const WindowSpec& w : {run, records, seconds}) {
    EXPECT_EQ(parse_window_attribute(window_attribute(w)), w);
  }
  EXPECT_EQ(describe_window(records), "--window 5 --slot-records 5000");
  EXPECT_EQ(describe_window({}), "no --window");
  for (const char* bad :
       {"", "window/v2; slots=3; slot=run", "window/v1; slots=3", "window/v1; slots=0; slot=run",
        "window/v1; slots=33; slot=run", "window/v1; slots=3; slot=records:0",
        "window/v1; slots=3; slot=day", "window/v1; slots=3; slot=run; extra=1",
        "window/v1; slots=x; slot=run"}) {
    EXPECT_THROW((void)parse_window_attribute(bad), std::invalid_argument) << bad;
  }
  EXPECT_THROW(check_window({0, SlotRule::kPerRun, 0}), std::invalid_argument);
  EXPECT_THROW(check_window({3, SlotRule::kRecords, 0}), std::invalid_argument);
  EXPECT_NO_THROW(check_window({kMaxWindow, SlotRule::kPerRun, 0}));
}

TEST(SlotWindow, Durations) {
  EXPECT_EQ(parse_duration_seconds("90"), 90U);
  EXPECT_EQ(parse_duration_seconds("90s"), 90U);
  EXPECT_EQ(parse_duration_seconds("30m"), 1800U);
  EXPECT_EQ(parse_duration_seconds("24h"), 86400U);
  for (const char* bad : {"", "h", "0s", "-1h", "1d", "1.5h", "99999999999999999999h"}) {
    EXPECT_THROW((void)parse_duration_seconds(bad), std::invalid_argument) << bad;
  }
}

TEST(SlotWindow, ExpiryAndSuffixArithmetic) {
  EXPECT_EQ(first_live_slot(0, 3), 0U);
  EXPECT_EQ(first_live_slot(3, 3), 0U);
  EXPECT_EQ(first_live_slot(4, 3), 1U);
  EXPECT_EQ(slot_age(2, 7), 5U);
  const std::vector<std::uint64_t> tags{0, 0, 1, 2, 2, 2, 4};
  EXPECT_EQ(expired_prefix(tags, 4, 3), 2U);  // live: 1..4
  EXPECT_EQ(expired_prefix(tags, 5, 3), 3U);  // live: 2..5
  EXPECT_EQ(expired_prefix(tags, 3, 3), 0U);
  EXPECT_EQ(expired_prefix(tags, 100, 3), tags.size());
  EXPECT_EQ(current_slot_suffix(tags, 4), 1U);
  EXPECT_EQ(current_slot_suffix(tags, 5), 0U);
  const std::vector<std::uint64_t> three{2, 2, 2};
  EXPECT_EQ(current_slot_suffix(three, 2), 3U);
  EXPECT_EQ(check_slot_tags(tags, 4), "");
  EXPECT_NE(check_slot_tags(tags, 3), "");                              // 4 > current
  EXPECT_NE(check_slot_tags(std::vector<std::uint64_t>{1, 0}, 1), "");  // decreasing
  EXPECT_EQ(slot_local_index(tags, 0), 0U);
  EXPECT_EQ(slot_local_index(tags, 1), 1U);
  EXPECT_EQ(slot_local_index(tags, 5), 2U);
  EXPECT_EQ(slot_local_index(tags, 6), 0U);
  EXPECT_TRUE(records_slot_full(150, 100, 50));
  EXPECT_FALSE(records_slot_full(149, 100, 50));
  EXPECT_FALSE(records_slot_full(1000, 100, 0));
}

TEST(SlotWindow, BloomLayersPerSlotAndExpiry) {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.01;
  p.num_slices = 8;
  ScalableBloom bloom(p, {0, 8});
  const std::vector<std::uint64_t> slots{0};
  bloom.start_window(2, 0, slots);
  EXPECT_EQ(bloom.num_layers(), 1U);
  // Each slot's layers are sized for the target shared by window + 1 slots.
  const BloomLayerGeometry first = layer_geometry(slot_layer_params(p, 2), 0);
  EXPECT_EQ(bloom.layer_geometry(0).capacity, first.capacity);
  EXPECT_DOUBLE_EQ(bloom.layer_geometry(0).fpr_target, first.fpr_target);
  EXPECT_LT(first.fpr_target, p.fpr_target / 3 + 1e-15);
  bloom.add_layer();  // a growth layer inside slot 0: layer 1 of its slot
  EXPECT_EQ(bloom.layer_geometry(1).capacity, layer_geometry(slot_layer_params(p, 2), 1).capacity);
  const KeyHash h = hash_key("k");
  bloom.insert(h);
  bloom.open_slot(1);
  bloom.open_slot(2);
  EXPECT_TRUE(bloom.may_contain(h));  // slot 0 still live at 2 (window 2)
  EXPECT_EQ(bloom.num_layers(), 4U);
  bloom.open_slot(3);  // slot 0 (two layers) falls out
  EXPECT_EQ(bloom.num_layers(), 3U);
  EXPECT_EQ(bloom.layer_slot(0), 1U);
  EXPECT_EQ(bloom.current_slot(), 3U);
  EXPECT_FALSE(bloom.may_contain(h));
  EXPECT_THROW(bloom.open_slot(3), std::invalid_argument);
  ScalableBloom plain(p, {0, 8});
  EXPECT_THROW(plain.open_slot(1), std::logic_error);
  EXPECT_THROW(bloom.start_window(2, 1, slots), std::invalid_argument);  // newest tag != current
}

TEST(SlotWindow, TwoTierSetMatchesWindowOracle) {
  constexpr std::uint32_t kWindow = 3;
  constexpr int kSlots = 9;
  ScalableBloomParams p;
  p.initial_capacity = 200;  // small: growth layers open inside slots too
  p.fpr_target = 0.05;       // many false positives: tier 2 must catch them
  p.num_slices = 16;
  TwoTierSet set(p, {0, 16});
  const std::vector<std::uint64_t> first{0};
  set.bloom().start_window(kWindow, 0, first);
  std::mt19937_64 rng(13);
  std::map<std::string, std::vector<int>> seen_in;  // oracle: slots each key occurred in
  std::uint64_t id = 1;
  for (int slot = 0; slot < kSlots; ++slot) {
    if (slot > 0) set.open_slot(static_cast<std::uint64_t>(slot));
    for (int i = 0; i < 400; ++i) {
      const std::string key = numbered("k", rng() % 600);  // repeats within and across slots
      const auto& past = seen_in[key];
      bool dup = false;
      for (const int s : past) dup = dup || s >= slot - static_cast<int>(kWindow);
      const KeyRef ref{hash_key(key), key};
      const Verdict v = set.decide(ref);
      ASSERT_EQ(v == Verdict::kDuplicate, dup) << "slot " << slot << " key " << key;
      if (set.bloom().layer_full(set.bloom().newest_layer_inserted())) set.bloom().add_layer();
      seen_in[key].push_back(slot);
    }
    test::flush_delta_into_run(set, id++);
    // Runs only of live slots; at most one per slot here (no compaction).
    for (const RunInfo& r : set.exact().runs()) {
      EXPECT_GE(r.slot, first_live_slot(static_cast<std::uint64_t>(slot), kWindow));
    }
  }
  EXPECT_GT(set.counters().refreshed, 0U);
  EXPECT_EQ(set.exact().runs().size(), kWindow + 1);
  EXPECT_THROW(
      {
        const std::string k = "left-in-delta";
        (void)set.decide({hash_key(k), k});
        set.open_slot(kSlots);
      },
      std::logic_error);
}

}  // namespace
}  // namespace bloomshard::core
