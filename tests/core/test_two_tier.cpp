// The two-tier decision: no false negatives (every inserted key comes back as
// a duplicate, whatever its bytes), no record ever dropped for a Bloom false
// positive (forced with a saturated filter), in-batch repeats are duplicates,
// batch and single-key decisions agree, and the counters add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

using namespace std::string_literals;

constexpr std::uint32_t kP = 64;

ScalableBloomParams two_tier_params(std::uint64_t capacity, double fpr = 0.01) {
  ScalableBloomParams p;
  p.initial_capacity = capacity;
  p.fpr_target = fpr;
  p.num_slices = kP;
  return p;
}

std::vector<KeyRef> two_tier_refs(const std::vector<std::string>& keys) {
  std::vector<KeyRef> r;
  r.reserve(keys.size());
  for (const auto& k : keys) r.push_back({hash_key(k), k});
  return r;
}

std::vector<Verdict> decide_all(TwoTierSet& set, const std::vector<std::string>& keys) {
  const auto r = two_tier_refs(keys);
  std::vector<Verdict> out(r.size());
  set.decide_batch(r, out);
  return out;
}

void expect_consistent(const DecisionCounters& c) {
  EXPECT_EQ(c.decided, c.tier1_absent + c.tier1_maybe);
  EXPECT_EQ(c.tier1_maybe, c.tier2_lookups);
  EXPECT_EQ(c.tier2_lookups, c.duplicates + c.false_positives);
}

std::vector<std::string> special_keys() {
  std::string big(1U << 20, 'B');
  big[777] = '\0';
  return {""s,
          "\0"s,
          "a\0b"s,
          "a\0c"s,
          "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"s,
          "\xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"s,
          "\xFF\xFE not utf-8"s,
          std::string(5000, 'x'),
          big};
}

TEST(TwoTier, NoFalseNegatives) {
  TwoTierSet set(two_tier_params(5000), {0, kP});
  std::vector<std::string> keys = special_keys();
  for (int i = 0; i < 20000; ++i) keys.push_back(numbered("doc-", i));
  const auto first = decide_all(set, keys);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(is_kept(first[i])) << "first copy of key " << i << " dropped";
  }
  const auto again = decide_all(set, keys);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(again[i], Verdict::kDuplicate) << "false negative for key " << i;
  }
  EXPECT_GT(set.bloom().num_layers(), 1U);  // capacity 5000: the filter grew
  const DecisionCounters& c = set.counters();
  expect_consistent(c);
  EXPECT_EQ(c.decided, 2 * keys.size());
  EXPECT_EQ(c.duplicates, keys.size());
  EXPECT_EQ(set.exact().size(), keys.size());
  // The exact tier did the confirming: each duplicate was one tier-2 lookup.
  EXPECT_EQ(c.tier1_absent + c.false_positives, keys.size());
}

TEST(TwoTier, SaturatedFilterNeverDropsARecord) {
  // One 512-bit block per slice, k ~ 7 and no growth: after a few thousand
  // keys every Bloom answer is "maybe", so nearly every new key is a tier-1
  // false positive.
  TwoTierSet set(two_tier_params(1, 0.01), {0, kP});
  set.bloom().set_auto_grow(false);
  std::vector<std::string> keys;
  for (int i = 0; i < 40000; ++i) keys.push_back(numbered("fp-", i));
  const auto v = decide_all(set, keys);
  std::uint64_t after_fp = 0;
  std::uint64_t late_fp = 0;  // second half: filter full
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_NE(v[i], Verdict::kDuplicate) << "record " << i << " dropped for a false positive";
    const std::uint64_t is_fp = v[i] == Verdict::kNewAfterFalsePositive ? 1U : 0U;
    after_fp += is_fp;
    late_fp += i >= keys.size() / 2 ? is_fp : 0U;
  }
  EXPECT_EQ(set.bloom().num_layers(), 1U);
  const DecisionCounters& c = set.counters();
  expect_consistent(c);
  EXPECT_EQ(c.false_positives, after_fp);
  EXPECT_EQ(c.duplicates, 0U);
  EXPECT_GT(late_fp, keys.size() / 2 * 9 / 10) << "filter was not saturated";
  // Repeats are still exact duplicates; new keys still new.
  std::vector<std::string> mixed;
  for (int i = 0; i < 20000; i += 2) mixed.push_back(numbered("fp-", i));
  for (int i = 40000; i < 41000; ++i) mixed.push_back(numbered("fp-", i));
  const auto w = decide_all(set, mixed);
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    if (i < 10000) {
      EXPECT_EQ(w[i], Verdict::kDuplicate) << i;
    } else {
      EXPECT_TRUE(is_kept(w[i])) << i;
    }
  }
  expect_consistent(set.counters());
}

TEST(TwoTier, RepeatsInsideOneBatchAreDuplicates) {
  TwoTierSet set(two_tier_params(100000), {0, kP});
  // Repeats closer than, equal to and farther than the prefetch distance.
  std::vector<std::string> keys = {"a", "b", "a", "c", "b", "a"};
  for (int i = 0; i < 40; ++i) keys.push_back(numbered("k", i));
  for (const std::size_t distance : {1U, 15U, 16U, 17U, 40U}) {
    const std::string repeat = keys[keys.size() - distance];  // copy: push_back may reallocate
    keys.push_back(repeat);
  }
  keys.push_back("");
  keys.push_back("");
  const auto v = decide_all(set, keys);
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const bool repeat = std::find(seen.begin(), seen.end(), keys[i]) != seen.end();
    if (repeat) {
      EXPECT_EQ(v[i], Verdict::kDuplicate) << i << " " << keys[i];
    } else {
      EXPECT_TRUE(is_kept(v[i])) << i << " " << keys[i];
      seen.push_back(keys[i]);
    }
  }
  EXPECT_EQ(set.counters().duplicates, keys.size() - seen.size());
  expect_consistent(set.counters());
}

TEST(TwoTier, BatchAndSingleDecisionsAgree) {
  std::vector<std::string> keys;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 30000; ++i) keys.push_back(numbered("r", rng() % 20000));
  TwoTierSet batched(two_tier_params(2000, 0.05), {0, kP});
  TwoTierSet single(two_tier_params(2000, 0.05), {0, kP});
  std::vector<Verdict> vb;
  const auto r = two_tier_refs(keys);
  for (std::size_t at = 0; at < r.size(); at += 777) {  // batches of odd size
    const std::size_t n = std::min<std::size_t>(777, r.size() - at);
    std::vector<Verdict> out(n);
    batched.decide_batch(std::span(r).subspan(at, n), out);
    vb.insert(vb.end(), out.begin(), out.end());
  }
  for (std::size_t i = 0; i < r.size(); ++i) ASSERT_EQ(single.decide(r[i]), vb[i]) << i;
  const DecisionCounters& a = batched.counters();
  const DecisionCounters& b = single.counters();
  EXPECT_EQ(a.decided, b.decided);
  EXPECT_EQ(a.tier1_absent, b.tier1_absent);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.false_positives, b.false_positives);
  expect_consistent(a);
  DecisionCounters sum = a;
  sum += b;
  EXPECT_EQ(sum.decided, 2 * keys.size());
  EXPECT_EQ(sum.tier1_maybe, a.tier1_maybe + b.tier1_maybe);
  EXPECT_EQ(sum.tier2_lookups, 2 * a.tier2_lookups);
  EXPECT_EQ(sum.duplicates, 2 * a.duplicates);
  expect_consistent(sum);
}

TEST(TwoTier, NormalizedSpellingsAreOneKey) {
  const std::vector<std::string> raw = {"Cafe\xCC\x81"s, "Caf\xC3\xA9"s, "CAF\xC3\x89"s,
                                        "caf\xC3\xA9"s};
  auto run = [&](NormalizePolicy policy) {
    TwoTierSet set(two_tier_params(1000), {0, kP});
    std::vector<std::string> keys;
    std::string buf;
    for (const auto& k : raw) keys.emplace_back(normalize_key(policy, k, buf));
    return decide_all(set, keys);
  };
  using V = std::vector<Verdict>;
  const auto none = run(NormalizePolicy::kNone);
  const auto nfc = run(NormalizePolicy::kNfc);
  const auto fold = run(NormalizePolicy::kNfcCasefold);
  for (const Verdict v : none) EXPECT_TRUE(is_kept(v));
  EXPECT_TRUE(is_kept(nfc[0]));
  EXPECT_EQ(nfc[1], Verdict::kDuplicate);  // NFD "Cafe+acute" == NFC "Café"
  EXPECT_TRUE(is_kept(nfc[2]));            // upper case is another key under nfc
  EXPECT_TRUE(is_kept(nfc[3]));
  EXPECT_EQ(fold, (V{fold[0], Verdict::kDuplicate, Verdict::kDuplicate, Verdict::kDuplicate}));
  EXPECT_TRUE(is_kept(fold[0]));
}

TEST(TwoTier, RefusesForeignKeysAndSizeMismatch) {
  const SliceRange mine = slices_of_rank(1, 3, kP);
  TwoTierSet set(two_tier_params(1000), mine);
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 50; ++i) {
    std::string k = numbered("own-", i);
    if (mine.contains(slice_of(hash_key(k), kP))) keys.push_back(std::move(k));
  }
  std::string foreign;
  for (int i = 0; foreign.empty(); ++i) {
    std::string k = numbered("foreign-", i);
    if (!mine.contains(slice_of(hash_key(k), kP))) foreign = k;
  }
  keys.insert(keys.begin() + 20, foreign);
  const auto r = two_tier_refs(keys);
  std::vector<Verdict> out(r.size());
  EXPECT_THROW(set.decide_batch(r, out), std::invalid_argument);
  EXPECT_EQ(set.counters().decided, 20U);  // the keys before it were decided, in order
  std::vector<Verdict> short_out(r.size() - 1);
  EXPECT_THROW(set.decide_batch(r, short_out), std::invalid_argument);
  EXPECT_THROW((void)set.decide(r[20]), std::invalid_argument);
  EXPECT_EQ(set.decide(r[0]), Verdict::kDuplicate);
  expect_consistent(set.counters());
}

}  // namespace
}  // namespace bloomshard::core
