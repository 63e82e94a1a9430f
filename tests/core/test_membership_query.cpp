// Read-only membership: every inserted key is a hit, no absent key is one
// even when the Bloom filter is saturated (every probe a false positive),
// the set is not changed by queries, the counters add up, and a foreign
// slice is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/membership_query.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

constexpr std::uint32_t kP = 16;

ScalableBloomParams query_params(std::uint64_t capacity) {
  ScalableBloomParams p;
  p.initial_capacity = capacity;
  p.fpr_target = 0.01;
  p.num_slices = kP;
  return p;
}

std::vector<KeyRef> refs(const std::vector<std::string>& keys) {
  std::vector<KeyRef> r;
  for (const auto& k : keys) r.push_back({hash_key(k), k});
  return r;
}

// Inserts keys "in-0" .. "in-(n-1)" and returns the set.
TwoTierSet filled(std::uint64_t capacity, int n, std::vector<std::string>& inserted) {
  TwoTierSet set(query_params(capacity), SliceRange{0, kP});
  for (int i = 0; i < n; ++i) inserted.push_back(numbered("in-", i));
  const std::vector<KeyRef> keys = refs(inserted);
  std::vector<Verdict> v(keys.size());
  set.decide_batch(keys, v);
  return set;
}

TEST(MembershipQuery, HitsExactlyTheInsertedKeys) {
  std::vector<std::string> inserted;
  TwoTierSet set = filled(100'000, 5000, inserted);
  std::vector<std::string> probe = inserted;
  for (int i = 0; i < 5000; ++i) probe.push_back(numbered("out-", i));
  const std::vector<KeyRef> keys = refs(probe);
  std::vector<std::uint8_t> hit(keys.size());
  QueryCounters c;
  const std::uint64_t size_before = set.exact().size();
  query_batch(set, keys, hit, c);
  for (std::size_t i = 0; i < probe.size(); ++i) {
    EXPECT_EQ(hit[i], i < 5000 ? 1 : 0) << probe[i];
  }
  EXPECT_EQ(set.exact().size(), size_before) << "a query must not insert";
  EXPECT_EQ(c.queried, 10'000U);
  EXPECT_EQ(c.hits, 5000U);
  EXPECT_EQ(c.queried, c.tier1_absent + c.tier1_maybe);
  EXPECT_EQ(c.tier1_maybe, c.tier2_lookups);
  EXPECT_EQ(c.tier2_lookups, c.hits + c.false_positives);
  // Asking twice gives the same answers (nothing was inserted).
  std::vector<std::uint8_t> again(keys.size());
  QueryCounters c2;
  query_batch(set, keys, again, c2);
  EXPECT_EQ(hit, again);
  EXPECT_EQ(c2.hits, c.hits);
}

TEST(MembershipQuery, SaturatedFilterStillExact) {
  // Capacity 16 with 20000 keys: the one layer (auto-grow off) is nearly all
  // ones, so almost every absent key is a Bloom "maybe" that tier 2 answers.
  TwoTierSet set(query_params(16), SliceRange{0, kP});
  set.bloom().set_auto_grow(false);
  std::vector<std::string> inserted;
  for (int i = 0; i < 20'000; ++i) inserted.push_back(numbered("in-", i));
  const std::vector<KeyRef> in = refs(inserted);
  std::vector<Verdict> v(in.size());
  set.decide_batch(in, v);
  std::vector<std::string> absent;
  for (int i = 0; i < 2000; ++i) absent.push_back(numbered("absent-", i));
  const std::vector<KeyRef> keys = refs(absent);
  std::vector<std::uint8_t> hit(keys.size(), 7);
  QueryCounters c;
  query_batch(set, keys, hit, c);
  for (const std::uint8_t h : hit) ASSERT_EQ(h, 0);
  EXPECT_GT(c.false_positives, 1000U) << "the filter should be saturated";
  EXPECT_EQ(c.hits, 0U);
}

TEST(MembershipQuery, RefusesForeignSliceAndBadSizes) {
  TwoTierSet set(query_params(1000), SliceRange{0, 1});
  std::vector<std::string> probe;
  for (int i = 0; i < 200; ++i) probe.push_back(numbered("k-", i));
  const std::vector<KeyRef> keys = refs(probe);
  std::vector<std::uint8_t> hit(keys.size());
  QueryCounters c;
  EXPECT_THROW(query_batch(set, keys, hit, c), std::invalid_argument);
  std::vector<std::uint8_t> short_out(1);
  EXPECT_THROW(query_batch(set, keys, short_out, c), std::invalid_argument);
}

}  // namespace
}  // namespace bloomshard::core
