// The batch decision's two passes (Bloom for the whole batch, then tier 2)
// give what the one-key decision gives key by key: the same verdicts, the
// same counters, the same Bloom bits and the same tier-2 contents, on
// batches built to trip them: repeats inside a batch, a saturated filter
// (false positives every few keys), repeats of keys only an older layer
// holds (the Bloom pass must stop there), auto-grown layers, windowed
// refreshes, foreign keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

constexpr std::uint32_t kP = 16;

ScalableBloomParams decide_params(std::uint64_t capacity, double fpr) {
  ScalableBloomParams p;
  p.initial_capacity = capacity;
  p.fpr_target = fpr;
  p.num_slices = kP;
  return p;
}

// Two sets fed the same keys, one by decide_batch, one by decide().
struct Twins {
  TwoTierSet batched;
  TwoTierSet single;
  Twins(const ScalableBloomParams& p, SliceRange owned) : batched(p, owned), single(p, owned) {}

  void decide(const std::vector<std::string>& keys) {
    std::vector<KeyRef> refs;
    for (const std::string& k : keys) refs.push_back({hash_key(k), k});
    std::vector<Verdict> out(refs.size());
    batched.decide_batch(refs, out);
    for (std::size_t i = 0; i < refs.size(); ++i) {
      ASSERT_EQ(single.decide(refs[i]), out[i]) << "key " << i << " " << keys[i];
    }
  }

  void expect_same() const {
    const DecisionCounters& a = batched.counters();
    const DecisionCounters& b = single.counters();
    EXPECT_EQ(a.decided, b.decided);
    EXPECT_EQ(a.tier1_absent, b.tier1_absent);
    EXPECT_EQ(a.tier1_maybe, b.tier1_maybe);
    EXPECT_EQ(a.tier2_lookups, b.tier2_lookups);
    EXPECT_EQ(a.duplicates, b.duplicates);
    EXPECT_EQ(a.false_positives, b.false_positives);
    EXPECT_EQ(a.refreshed, b.refreshed);
    ASSERT_EQ(batched.bloom().num_layers(), single.bloom().num_layers());
    for (std::size_t l = 0; l < batched.bloom().num_layers(); ++l) {
      EXPECT_EQ(batched.bloom().layer_inserted(l), single.bloom().layer_inserted(l)) << l;
      for (std::uint32_t s = batched.owned().first; s < batched.owned().last; ++s) {
        const auto x = batched.bloom().slice_words(l, s);
        const auto y = single.bloom().slice_words(l, s);
        ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << l << " " << s;
      }
    }
    // The delta as a checkpoint writes it (depth 0: a windowed delta may
    // repeat a run's key, so it is never merged with the runs here).
    EXPECT_EQ(batched.exact().runs(), single.exact().runs());
    for (std::uint32_t s = batched.owned().first; s < batched.owned().last; ++s) {
      const SliceBaseData x = batched.exact().merged_slice(s, 0);
      const SliceBaseData y = single.exact().merged_slice(s, 0);
      EXPECT_EQ(x.fingerprints, y.fingerprints) << s;
      EXPECT_EQ(x.offsets, y.offsets) << s;
      EXPECT_EQ(x.bytes, y.bytes) << s;
    }
  }
};

std::vector<std::string> draw(std::mt19937_64& rng, std::size_t n, std::uint64_t range,
                              const char* prefix = "k") {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < n; ++i) keys.push_back(numbered(prefix, rng() % range));
  return keys;
}

TEST(DecidePasses, RepeatsAndFalsePositivesInOneLayer) {
  // 40x over capacity at p = 0.2: the one layer saturates, so false
  // positives (a maybe, then a Bloom insert) come every few keys.
  ScalableBloomParams p = decide_params(100, 0.2);
  Twins t(p, {0, kP});
  t.batched.bloom().set_auto_grow(false);
  t.single.bloom().set_auto_grow(false);
  std::mt19937_64 rng(1);
  for (int b = 0; b < 10; ++b) t.decide(draw(rng, 1000, 4000));
  EXPECT_GT(t.batched.counters().false_positives, 100U);
  EXPECT_GT(t.batched.counters().duplicates, 1000U);
  t.expect_same();
}

TEST(DecidePasses, RepeatsOfOlderLayersStopTheBloomPass) {
  // Layers added between batches as a job does; later batches repeat keys
  // only older layers hold, and with p = 0.2 some of their maybes are
  // false positives whose insert sets newest-layer bits.
  Twins t(decide_params(300, 0.2), {0, kP});
  for (TwoTierSet* s : {&t.batched, &t.single}) s->bloom().set_auto_grow(false);
  std::mt19937_64 rng(2);
  for (int b = 0; b < 12; ++b) {
    t.decide(draw(rng, 700, 3000 + 500 * static_cast<std::uint64_t>(b)));
    if (b % 3 == 2) {
      t.batched.bloom().add_layer();
      t.single.bloom().add_layer();
    }
  }
  EXPECT_GE(t.batched.bloom().num_layers(), 4U);
  t.expect_same();
}

TEST(DecidePasses, AutoGrownLayersInsideBatches) {
  Twins t(decide_params(500, 0.05), {0, kP});
  std::mt19937_64 rng(3);
  for (int b = 0; b < 8; ++b) t.decide(draw(rng, 1500, 6000));
  EXPECT_GE(t.batched.bloom().num_layers(), 3U);
  t.expect_same();
}

TEST(DecidePasses, WindowedRefreshes) {
  Twins t(decide_params(200, 0.1), {0, kP});
  const std::vector<std::uint64_t> first{0};
  for (TwoTierSet* s : {&t.batched, &t.single}) {
    s->bloom().set_auto_grow(false);
    s->bloom().start_window(3, 0, first);
  }
  std::mt19937_64 rng(4);
  std::uint64_t id = 1;
  for (std::uint64_t slot = 0; slot < 8; ++slot) {
    for (TwoTierSet* s : {&t.batched, &t.single}) {
      if (slot > 0) s->open_slot(slot);
    }
    for (int b = 0; b < 3; ++b) {
      t.decide(draw(rng, 300, 700));
      if (b == 1) {  // a growth layer inside the slot
        t.batched.bloom().add_layer();
        t.single.bloom().add_layer();
      }
    }
    t.expect_same();
    test::flush_delta_into_run(t.batched, id);
    test::flush_delta_into_run(t.single, id);
    ++id;
  }
  EXPECT_GT(t.batched.counters().refreshed, 0U);
  t.expect_same();
}

TEST(DecidePasses, ForeignKeyAfterASegment) {
  const SliceRange mine = slices_of_rank(0, 2, kP);
  TwoTierSet set(decide_params(1000, 0.01), mine);
  set.bloom().set_auto_grow(false);
  set.bloom().add_layer();  // two layers: the general pass meets the foreign key
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 300; ++i) {
    std::string k = numbered("own-", i % 150);  // the second half repeats the first
    if (mine.contains(slice_of(hash_key(k), kP))) keys.push_back(std::move(k));
  }
  std::string foreign;
  for (int i = 0; foreign.empty(); ++i) {
    std::string k = numbered("foreign-", i);
    if (!mine.contains(slice_of(hash_key(k), kP))) foreign = k;
  }
  keys.insert(keys.begin() + 200, foreign);
  std::vector<KeyRef> refs;
  for (const std::string& k : keys) refs.push_back({hash_key(k), k});
  std::vector<Verdict> out(refs.size());
  EXPECT_THROW(set.decide_batch(refs, out), std::invalid_argument);
  EXPECT_EQ(set.counters().decided, 200U);  // the keys before it, in order
  EXPECT_EQ(set.exact().delta_keys(), set.counters().tier1_absent + set.counters().false_positives);
}

TEST(DecidePasses, BloomPassMatchesOneKeyInserts) {
  ScalableBloom a(decide_params(2000, 0.05), {0, kP});
  ScalableBloom b(decide_params(2000, 0.05), {0, kP});
  std::mt19937_64 rng(5);
  std::vector<KeyHash> hashes;
  for (int i = 0; i < 1500; ++i) hashes.push_back(hash_key(numbered("h", rng() % 1000)));
  std::vector<std::uint8_t> absent(hashes.size());
  ASSERT_EQ(a.insert_if_absent_batch(hashes, absent), hashes.size());
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    ASSERT_EQ(b.insert_if_absent(hashes[i]), absent[i] != 0) << i;
  }
  EXPECT_EQ(a.layer_inserted(0), b.layer_inserted(0));
  for (std::uint32_t s = 0; s < kP; ++s) {
    const auto x = a.slice_words(0, s);
    const auto y = b.slice_words(0, s);
    ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << s;
  }
  // Auto-grow on and not room for every key: the pass leaves the batch alone.
  std::vector<KeyHash> more(5000, hashes[0]);
  std::vector<std::uint8_t> answers(more.size());
  EXPECT_EQ(a.insert_if_absent_batch(more, answers), 0U);
  EXPECT_THROW((void)a.insert_if_absent_batch(more, std::span(answers).first(10)),
               std::invalid_argument);
  // A maybe only an older layer gives stops the pass before that key.
  a.set_auto_grow(false);
  a.add_layer();
  const std::vector<KeyHash> again{hash_key("fresh-1"), hashes[0], hash_key("fresh-2")};
  std::vector<std::uint8_t> three(3);
  EXPECT_EQ(a.insert_if_absent_batch(again, three), 1U);
  EXPECT_EQ(three[0], 1U);
}

}  // namespace
}  // namespace bloomshard::core
