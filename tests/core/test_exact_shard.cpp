// Tier 2: exact membership, duplicates refused, 64-bit fingerprint collisions
// of different keys kept apart, merge order and validation, bases attached
// from merged data, huge keys, and the delta's memory per key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloomshard/core/exact_shard.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "core_test_util.hpp"

namespace bloomshard::core {
namespace {

using test::numbered;

using namespace std::string_literals;

constexpr std::uint32_t kP = 64;

struct Key {
  std::uint32_t slice;
  std::uint64_t fp;
  std::string bytes;
};

Key make_key(std::string bytes) {
  const KeyHash h = hash_key(bytes);
  return {slice_of(h, kP), fingerprint(h), std::move(bytes)};
}

TEST(ExactShard, InsertContainsAndDuplicates) {
  ExactShard shard({0, kP}, kP);
  std::vector<Key> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(make_key(numbered("key-", i)));
  keys.push_back(make_key(""));
  keys.push_back(make_key("a\0b"s));
  keys.push_back(make_key("\xE6\x97\xA5\xF0\x9F\x98\x80"s));
  for (const auto& k : keys) {
    EXPECT_FALSE(shard.contains(k.slice, k.fp, k.bytes));
    EXPECT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
    EXPECT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
  }
  for (const auto& k : keys) {
    EXPECT_FALSE(shard.insert(k.slice, k.fp, k.bytes)) << k.bytes;
    EXPECT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
  }
  EXPECT_EQ(shard.delta_keys(), keys.size());
  EXPECT_EQ(shard.size(), keys.size());
  EXPECT_FALSE(shard.contains(keys[0].slice, keys[0].fp, "key-0x"));
  EXPECT_FALSE(shard.contains(make_key("a").slice, make_key("a").fp, "a"));
  // Prefix / NUL-suffixed keys are different keys.
  const Key a = make_key("a");
  EXPECT_TRUE(shard.insert(a.slice, a.fp, a.bytes));
  EXPECT_FALSE(shard.contains(a.slice, a.fp, "a\0"s));
}

TEST(ExactShard, InsertNewSkipsTheLookupButStoresExactly) {
  ExactShard shard({0, kP}, kP);
  std::vector<Key> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back(make_key(numbered("new-", i)));
  for (const auto& k : keys) {
    shard.prefetch(k.fp);
    shard.insert_new(k.slice, k.fp, k.bytes);
  }
  shard.insert_new(keys[0].slice, keys[0].fp, "collides with new-0");  // same fp, other bytes
  for (const auto& k : keys) {
    EXPECT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
    EXPECT_FALSE(shard.insert(k.slice, k.fp, k.bytes));
  }
  EXPECT_TRUE(shard.contains(keys[0].slice, keys[0].fp, "collides with new-0"));
  EXPECT_EQ(shard.delta_keys(), keys.size() + 1);
  std::uint64_t total = 0;
  for (std::uint32_t s = 0; s < kP; ++s) {
    const SliceBaseData m = shard.merged_slice(s);
    ASSERT_NO_THROW(validate_base(m.view()));
    total += m.fingerprints.size();
  }
  EXPECT_EQ(total, keys.size() + 1);
  EXPECT_THROW(shard.insert_new(kP, 1, "x"), std::out_of_range);
}

TEST(ExactShard, RefusesForeignSlicesAndBadRange) {
  ExactShard shard({10, 20}, kP);
  EXPECT_THROW((void)shard.contains(9, 1, "x"), std::out_of_range);
  EXPECT_THROW((void)shard.insert(20, 1, "x"), std::out_of_range);
  EXPECT_TRUE(shard.insert(19, 1, "x"));
  EXPECT_THROW(ExactShard({0, 0}, kP), std::invalid_argument);
  EXPECT_THROW(ExactShard({0, kP + 1}, kP), std::invalid_argument);
}

TEST(ExactShard, ForcedFingerprintCollisionsStayExact) {
  ExactShard shard({0, 4}, 4);
  // Many different keys with one fingerprint, in one slice and across slices.
  const std::uint64_t fp = 0xDEADBEEFULL;
  std::vector<std::string> keys = {"", "b", "a", "aa", "a\0"s, "zzz", std::string(300, 'q')};
  for (int i = 0; i < 200; ++i) keys.push_back(numbered("c", i));
  for (const auto& k : keys) EXPECT_TRUE(shard.insert(2, fp, k)) << k;
  for (const auto& k : keys) {
    EXPECT_TRUE(shard.contains(2, fp, k));
    EXPECT_FALSE(shard.insert(2, fp, k));
    EXPECT_FALSE(shard.contains(2, fp + 1, k));
    EXPECT_FALSE(shard.contains(1, fp, k));  // membership is per slice
  }
  EXPECT_FALSE(shard.contains(2, fp, "c200"));
  const SliceBaseData merged = shard.merged_slice(2);
  EXPECT_NO_THROW(validate_base(merged.view()));
  ASSERT_EQ(merged.fingerprints.size(), keys.size());
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(merged.view().key(i), sorted[i]);

  // The same collisions found through a base.
  ExactShard other({0, 4}, 4);
  auto data = std::make_shared<SliceBaseData>(merged);
  other.attach_base(2, data->view(), data);
  for (const auto& k : keys) {
    EXPECT_TRUE(other.contains(2, fp, k));
    EXPECT_FALSE(other.insert(2, fp, k));
  }
  EXPECT_FALSE(other.contains(2, fp, "c200"));
  EXPECT_TRUE(other.insert(2, fp, "c200"));
  EXPECT_TRUE(other.contains(2, fp, "c200"));
}

TEST(ExactShard, MergedSlicesAreSortedValidAndComplete) {
  ExactShard shard({3, 9}, 16);
  std::vector<std::vector<std::pair<std::uint64_t, std::string>>> expect(16);
  for (int i = 0; i < 20000; ++i) {
    std::string k = numbered("m", i * 7919);
    const KeyHash h = hash_key(k);
    const std::uint32_t slice = 3 + static_cast<std::uint32_t>(h.hi % 6);
    ASSERT_TRUE(shard.insert(slice, h.lo, k));
    expect[slice].emplace_back(h.lo, std::move(k));
  }
  std::uint64_t total = 0;
  for (std::uint32_t s = 3; s < 9; ++s) {
    const SliceBaseData m = shard.merged_slice(s);
    ASSERT_NO_THROW(validate_base(m.view()));
    auto& e = expect[s];
    std::sort(e.begin(), e.end());
    ASSERT_EQ(m.fingerprints.size(), e.size());
    for (std::size_t i = 0; i < e.size(); ++i) {
      ASSERT_EQ(m.fingerprints[i], e[i].first);
      ASSERT_EQ(m.view().key(i), e[i].second);
    }
    total += m.fingerprints.size();
  }
  EXPECT_EQ(total, 20000U);
  EXPECT_EQ(shard.delta_keys(), 20000U);  // merging does not change the shard
}

TEST(ExactShard, AttachMergedBaseThenMoreDelta) {
  ExactShard shard({0, kP}, kP);
  std::vector<Key> first;
  std::vector<Key> second;
  for (int i = 0; i < 3000; ++i) first.push_back(make_key(numbered("first-", i)));
  for (int i = 0; i < 3000; ++i) second.push_back(make_key(numbered("second-", i)));
  for (const auto& k : first) ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));

  // What a checkpoint does: merge every slice, attach it, drop the delta.
  std::vector<std::shared_ptr<SliceBaseData>> gen1(kP);
  for (std::uint32_t s = 0; s < kP; ++s) {
    gen1[s] = std::make_shared<SliceBaseData>(shard.merged_slice(s));
  }
  for (std::uint32_t s = 0; s < kP; ++s) shard.attach_base(s, gen1[s]->view(), gen1[s]);
  // Before clear_delta the keys are in both; the merge emits them once.
  EXPECT_EQ(shard.merged_slice(first[0].slice).fingerprints.size(),
            gen1[first[0].slice]->fingerprints.size());
  shard.clear_delta();
  EXPECT_EQ(shard.delta_keys(), 0U);
  EXPECT_EQ(shard.base_keys(), first.size());

  for (const auto& k : first) {
    ASSERT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
    ASSERT_FALSE(shard.insert(k.slice, k.fp, k.bytes));
  }
  for (const auto& k : second) {
    ASSERT_FALSE(shard.contains(k.slice, k.fp, k.bytes));
    ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
  }
  EXPECT_EQ(shard.size(), first.size() + second.size());
  std::uint64_t total = 0;
  for (std::uint32_t s = 0; s < kP; ++s) {
    const SliceBaseData m = shard.merged_slice(s);
    ASSERT_NO_THROW(validate_base(m.view()));
    total += m.fingerprints.size();
  }
  EXPECT_EQ(total, first.size() + second.size());

  shard.fold_delta_into_base();
  EXPECT_EQ(shard.delta_keys(), 0U);
  EXPECT_EQ(shard.base_keys(), first.size() + second.size());
  gen1.clear();  // the shard's keepalives hold what it still uses
  for (const auto& k : first) ASSERT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
  for (const auto& k : second) ASSERT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
}

TEST(ExactShard, SizesAndInPlaceMergeMatchMergedSlice) {
  ExactShard shard({2, 10}, 12);
  std::vector<std::string> keys;
  for (int i = 0; i < 40000; ++i) keys.push_back(numbered("w", i * 31));
  keys.push_back("");
  keys.push_back(std::string(5000, 'b'));  // an arena record of its own
  for (const auto& k : keys) {
    const KeyHash h = hash_key(k);
    ASSERT_TRUE(shard.insert(2 + static_cast<std::uint32_t>(h.hi % 8), h.lo, k));
  }
  // Forced collisions inside one slice: ties ordered by bytes, also through
  // the radix buckets (this slice has thousands of keys).
  for (int i = 0; i < 300; ++i)
    ASSERT_TRUE(shard.insert(5, 0x8000000000000000ULL, numbered("t", i)));
  for (std::uint32_t s = 2; s < 10; ++s) {
    const SliceBaseData m = shard.merged_slice(s);
    ASSERT_NO_THROW(validate_base(m.view()));
    const SliceSize size = shard.merged_slice_size(s);
    EXPECT_EQ(size, (SliceSize{m.fingerprints.size(), m.bytes.size()}));
    std::vector<std::uint64_t> fps(size.keys), offs(size.keys + 1);
    std::vector<char> bytes(size.bytes);
    shard.write_merged_slice(s, fps, offs, bytes);
    EXPECT_EQ(fps, m.fingerprints);
    EXPECT_EQ(offs, m.offsets);
    EXPECT_EQ(bytes, m.bytes);
    // Spans of the wrong size are refused, not overrun.
    std::vector<char> short_bytes(size.bytes - (size.bytes > 0 ? 1 : 0));
    if (size.bytes > 0) {
      EXPECT_THROW(shard.write_merged_slice(s, fps, offs, short_bytes), std::length_error);
    }
    std::vector<std::uint64_t> long_fps(size.keys + 1);
    EXPECT_THROW(shard.write_merged_slice(s, long_fps, offs, bytes), std::length_error);
  }
  EXPECT_THROW((void)shard.merged_slice_size(10), std::out_of_range);

  // A base attached over the delta (keys in both): the size counts them once.
  auto m5 = std::make_shared<SliceBaseData>(shard.merged_slice(5));
  const SliceSize before = shard.merged_slice_size(5);
  shard.attach_base(5, m5->view(), m5);
  EXPECT_EQ(shard.merged_slice_size(5), before);
  const Key extra{5, 7, "only in the delta"};
  ASSERT_TRUE(shard.insert(extra.slice, extra.fp, extra.bytes));
  EXPECT_EQ(shard.merged_slice_size(5), (SliceSize{before.keys + 1, before.bytes + 17}));
  const SliceBaseData again = shard.merged_slice(5);
  ASSERT_NO_THROW(validate_base(again.view()));
  EXPECT_EQ(again.fingerprints.size(), before.keys + 1);
  shard.clear_delta();
  EXPECT_EQ(shard.merged_slice_size(5), before);  // the base alone
  EXPECT_EQ(shard.merged_slice_size(4), (SliceSize{0, 0}));
}

TEST(ExactShard, HugeKeys) {
  ExactShard shard({0, kP}, kP);
  std::string big(1U << 20, 'x');
  big[12345] = '\0';
  const Key k = make_key(big);
  EXPECT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
  std::string near = big;
  near.back() = 'y';
  EXPECT_FALSE(shard.contains(k.slice, k.fp, near));  // same fp forced, last byte differs
  EXPECT_TRUE(shard.insert(k.slice, k.fp, near));
  EXPECT_TRUE(shard.contains(k.slice, k.fp, big));
  EXPECT_FALSE(shard.insert(k.slice, k.fp, big));
  // Keys around the arena's own-chunk threshold (4 KiB) and varint edges.
  for (const std::size_t n : {127U, 128U, 4094U, 4095U, 4096U, 4097U, 16383U, 16384U, 70000U}) {
    const Key m = make_key(std::string(n, 'k'));
    ASSERT_TRUE(shard.insert(m.slice, m.fp, m.bytes)) << n;
    ASSERT_TRUE(shard.contains(m.slice, m.fp, m.bytes)) << n;
  }
  const SliceBaseData merged = shard.merged_slice(k.slice);
  EXPECT_NO_THROW(validate_base(merged.view()));
  EXPECT_GE(merged.bytes.size(), 2U << 20);
}

TEST(ExactShard, DeltaMemoryIsKeyBytesPlusSmallOverhead) {
  ExactShard shard({0, 4096}, 4096);
  constexpr std::size_t kKeys = 100'000;
  constexpr std::size_t kLen = 20;
  const std::uint64_t empty_bytes = shard.delta_bytes();
  EXPECT_LT(empty_bytes, 16U << 10);  // an empty delta is just its initial index
  std::uint64_t prev = empty_bytes;
  for (std::size_t i = 0; i < kKeys; ++i) {
    char buf[kLen + 1];
    std::snprintf(buf, sizeof buf, "id-%017zu", i);
    const Key k = make_key(std::string(buf, kLen));
    ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
    const std::uint64_t now = shard.delta_bytes();
    ASSERT_GE(now, prev);
    prev = now;
  }
  const double per_key = static_cast<double>(shard.delta_bytes()) / kKeys;
  RecordProperty("delta_bytes_per_key", std::to_string(per_key));
  std::printf("delta: %.1f bytes per key of %zu bytes (overhead %.1f)\n", per_key, kLen,
              per_key - kLen);
  EXPECT_GT(per_key, static_cast<double>(kLen));
  EXPECT_LT(per_key - static_cast<double>(kLen), 40.0);
  // Merging buckets the delta once (16 bytes per key, counted), then frees it on insert.
  (void)shard.merged_slice(0);
  EXPECT_GE(shard.delta_bytes(), prev + 16 * kKeys);
  const Key extra = make_key("one more");
  ASSERT_TRUE(shard.insert(extra.slice, extra.fp, extra.bytes));
  EXPECT_LE(shard.delta_bytes(), prev + (64U << 10) + (64U << 10));  // at most a new chunk + page
  shard.clear_delta();
  EXPECT_EQ(shard.delta_bytes(), empty_bytes);
}

TEST(ExactShard, ClearDeltaKeepsItsMemoryAndTheIndexGrowsPastItsReserve) {
  ExactShard shard({0, kP}, kP);
  shard.reserve_delta(2000);
  const std::uint64_t reserved = shard.delta_mapped_bytes();
  EXPECT_GE(reserved, 2000U * 8 * 4 / 3);  // 8-byte slots, load <= 3/4
  EXPECT_EQ(shard.delta_bytes(), 0U);      // reserved room is not counted as keys
  std::vector<Key> first;
  for (int i = 0; i < 20000; ++i) first.push_back(make_key(numbered("reuse-", i)));
  for (const auto& k : first) ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
  for (const auto& k : first) ASSERT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
  const std::uint64_t grown = shard.delta_mapped_bytes();
  EXPECT_GT(grown, reserved);  // past the reserve: the index rebuilt bigger

  // A checkpoint: the delta becomes a run, then the delta is cleared. Its
  // memory stays mapped for the next interval's keys.
  auto runs = std::make_shared<std::vector<SliceBaseData>>();
  std::vector<SliceBaseView> views;
  for (std::uint32_t s = 0; s < kP; ++s) runs->push_back(shard.merged_slice(s));
  for (const SliceBaseData& d : *runs) views.push_back(d.view());
  shard.replace_newest_runs(0, {1, 0, 0}, std::move(views), runs);
  shard.clear_delta();
  EXPECT_EQ(shard.delta_keys(), 0U);
  EXPECT_EQ(shard.delta_bytes(), 0U);
  EXPECT_EQ(shard.delta_mapped_bytes(), grown);
  std::vector<Key> second;
  for (int i = 0; i < 20000; ++i) second.push_back(make_key(numbered("again-", i)));
  for (const auto& k : first) ASSERT_FALSE(shard.insert(k.slice, k.fp, k.bytes));  // in the run
  for (const auto& k : second) ASSERT_TRUE(shard.insert(k.slice, k.fp, k.bytes));
  EXPECT_EQ(shard.delta_mapped_bytes(), grown);  // the same memory held them
  EXPECT_EQ(shard.delta_keys(), second.size());
  std::uint64_t total = 0;
  for (std::uint32_t s = 0; s < kP; ++s) {
    const SliceBaseData delta_only = shard.merged_slice(s, 0);
    ASSERT_NO_THROW(validate_base(delta_only.view()));
    total += delta_only.fingerprints.size();
  }
  EXPECT_EQ(total, second.size());
  EXPECT_EQ(shard.size(), first.size() + second.size());
  // Folding gives the delta's memory back: the keys now live in the run.
  shard.fold_delta_into_base();
  EXPECT_LT(shard.delta_mapped_bytes(), reserved);
  for (const auto& k : second) ASSERT_TRUE(shard.contains(k.slice, k.fp, k.bytes));
}

TEST(ExactShard, ValidateBaseNamesBrokenInvariants) {
  SliceBaseData good;
  for (const auto& [fp, k] :
       std::vector<std::pair<std::uint64_t, std::string>>{{1, "a"}, {1, "b"}, {5, ""}, {9, "zz"}}) {
    good.fingerprints.push_back(fp);
    good.bytes.insert(good.bytes.end(), k.begin(), k.end());
    good.offsets.push_back(good.bytes.size());
  }
  EXPECT_NO_THROW(validate_base(good.view()));
  EXPECT_TRUE(good.view().contains(1, "b"));
  EXPECT_TRUE(good.view().contains(5, ""));
  EXPECT_FALSE(good.view().contains(5, "a"));
  EXPECT_FALSE(good.view().contains(2, "a"));

  auto expect_bad = [](const SliceBaseData& d, const char* what) {
    try {
      validate_base(d.view());
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  SliceBaseData d = good;
  d.offsets.pop_back();
  expect_bad(d, "offsets for");
  d = good;
  d.offsets[0] = 1;
  expect_bad(d, "offsets[0]");
  d = good;
  d.bytes.push_back('x');
  expect_bad(d, "last offset");
  d = good;
  std::swap(d.offsets[1], d.offsets[2]);
  expect_bad(d, "decrease");
  d = good;
  d.fingerprints[3] = 5;  // equal fp, "zz" > "" still fine; make a true disorder
  d.fingerprints[2] = 7;
  expect_bad(d, "strictly increasing");
  d = good;
  d.fingerprints[1] = 1;
  d.bytes[1] = 'a';  // duplicate (1, "a")
  expect_bad(d, "strictly increasing");
  EXPECT_NO_THROW(validate_base(SliceBaseData{}.view()));
}

}  // namespace
}  // namespace bloomshard::core
