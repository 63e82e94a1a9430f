// Tests of the scalable, sliced tier-1 filter: geometry, no false negatives,
// idempotent inserts, measured compound FPR after growth, ownership split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::core {
namespace {

std::vector<KeyHash> scalable_hashes(const std::string& prefix, std::size_t n) {
  std::vector<KeyHash> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(hash_key(prefix + std::to_string(i)));
  }
  return out;
}

SliceRange all_slices(const ScalableBloomParams& p) { return {0, p.num_slices}; }

std::vector<std::uint64_t> all_words(const ScalableBloom& f) {
  std::vector<std::uint64_t> out;
  for (std::size_t layer = 0; layer < f.num_layers(); ++layer) {
    for (std::uint32_t s = f.owned().first; s < f.owned().last; ++s) {
      const auto w = f.slice_words(layer, s);
      out.insert(out.end(), w.begin(), w.end());
    }
  }
  return out;
}

double measured_fpr(const ScalableBloom& f, const std::string& prefix, std::size_t n) {
  const std::vector<KeyHash> absent = scalable_hashes(prefix, n);
  std::vector<std::uint8_t> out(n);
  f.query_batch(absent, out);
  return static_cast<double>(std::count(out.begin(), out.end(), 1)) / static_cast<double>(n);
}

TEST(ScalableBloomGeometry, LayerValues) {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.001;
  p.growth = 2.0;
  p.tightening = 0.5;
  p.num_slices = 16;
  const BloomLayerGeometry g0 = layer_geometry(p, 0);
  EXPECT_EQ(g0.capacity, 1000U);
  EXPECT_DOUBLE_EQ(g0.fpr_target, 0.0005);  // p0 = target * (1 - r)
  EXPECT_NEAR(g0.bits_per_key, 17.46, 1e-9);
  EXPECT_EQ(g0.k, 10U);
  EXPECT_EQ(g0.blocks_per_slice, 3U);  // ceil(1000 * 17.46 / (512 * 16)) = ceil(2.13)

  const BloomLayerGeometry g3 = layer_geometry(p, 3);
  EXPECT_EQ(g3.capacity, 8000U);
  EXPECT_DOUBLE_EQ(g3.fpr_target, 0.0005 / 8);
  const BloomGeometryChoice c3 = choose_geometry(0.0005 / 8);
  EXPECT_EQ(g3.bits_per_key, c3.bits_per_key);
  EXPECT_EQ(g3.k, c3.k);
  EXPECT_EQ(g3.blocks_per_slice,
            static_cast<std::uint64_t>(std::ceil(8000 * c3.bits_per_key / (512.0 * 16))));

  // Sum of p_i stays below the target for any number of layers.
  double sum = 0.0;
  for (std::uint32_t i = 0; i < 20; ++i) {
    sum += layer_geometry(p, i).fpr_target;
  }
  EXPECT_LT(sum, p.fpr_target);

  p.growth = 1.5;
  EXPECT_EQ(layer_geometry(p, 2).capacity, 2250U);
  p.num_slices = 4096;
  EXPECT_EQ(layer_geometry(p, 0).blocks_per_slice, 1U);  // never zero

  ScalableBloomParams bad = p;
  bad.tightening = 1.0;
  EXPECT_THROW((void)layer_geometry(bad, 0), std::invalid_argument);
  bad = p;
  bad.growth = 0.5;
  EXPECT_THROW((void)layer_geometry(bad, 0), std::invalid_argument);
  bad = p;
  bad.fpr_target = 0.0;
  EXPECT_THROW((void)layer_geometry(bad, 0), std::invalid_argument);
  bad = p;
  bad.initial_capacity = 0;
  EXPECT_THROW((void)layer_geometry(bad, 0), std::invalid_argument);
  EXPECT_THROW(ScalableBloom(p, SliceRange{0, 4097}), std::invalid_argument);
  EXPECT_THROW(ScalableBloom(p, SliceRange{5, 3}), std::invalid_argument);
}

TEST(ScalableBloom, StorageIsCacheLineAlignedAndSized) {
  ScalableBloomParams p;
  p.initial_capacity = 100'000;
  p.num_slices = 64;
  const ScalableBloom f(p, SliceRange{8, 24});
  const BloomLayerGeometry g = layer_geometry(p, 0);
  const auto w = f.slice_words(0, 8);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data()) % 64, 0U);
  EXPECT_EQ(w.size(), g.blocks_per_slice * kBlockWords);
  EXPECT_EQ(f.memory_bytes(), 16 * g.blocks_per_slice * kBlockBytes);
  EXPECT_THROW((void)f.slice_words(0, 7), std::out_of_range);
  EXPECT_THROW((void)f.slice_words(0, 24), std::out_of_range);
  EXPECT_THROW((void)f.slice_words(1, 8), std::out_of_range);
  EXPECT_THROW((void)f.layer_stats(1), std::out_of_range);
}

TEST(ScalableBloom, NoFalseNegativesForAnyBytes) {
  ScalableBloomParams p;
  p.initial_capacity = 50'000;
  p.num_slices = 4096;
  ScalableBloom f(p, all_slices(p));

  std::vector<std::string> keys = {
      "",                                      // the empty key
      std::string(1U << 20, 'x'),              // 1 MiB
      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",  // CJK
      "\xf0\x9f\x98\x80\xf0\x9f\x91\x8d",      // emoji
      std::string("a\0b", 3),                  // embedded NUL
      std::string(1, '\0'),
      std::string(7, '\0'),
      "\xff\xfe not utf-8",
  };
  std::string big(1U << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>(i * 131 % 251);
  }
  keys.push_back(big);
  for (std::size_t i = 0; i < 30'000; ++i) {
    std::string key = "k";  // not "k" + ...: GCC 12 -Wrestrict false positive
    key += std::to_string(i);
    keys.push_back(std::move(key));
  }
  std::vector<KeyHash> hashes;
  for (const std::string& k : keys) {
    hashes.push_back(hash_key(k));
  }
  // Half one at a time, half batched: both paths must be found by both.
  const std::size_t half = hashes.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    f.insert(hashes[i]);
  }
  f.insert_batch(std::span<const KeyHash>(hashes).subspan(half));
  EXPECT_EQ(f.newest_layer_inserted(), hashes.size());
  std::vector<std::uint8_t> out(hashes.size());
  f.query_batch(hashes, out);
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    ASSERT_TRUE(f.may_contain(hashes[i])) << "key #" << i;
    ASSERT_EQ(out[i], 1U) << "key #" << i;
  }
}

TEST(ScalableBloom, ReinsertChangesNoBit) {
  ScalableBloomParams p;
  p.initial_capacity = 2000;
  p.num_slices = 32;
  ScalableBloom f(p, all_slices(p));
  const std::vector<KeyHash> hashes = scalable_hashes("again-", 9000);  // grows to 3 layers
  f.insert_batch(hashes);
  ASSERT_EQ(f.num_layers(), 3U);
  const std::vector<std::uint64_t> before = all_words(f);
  f.set_auto_grow(false);
  // Keys of older layers are re-added to the newest one, so only keys whose
  // bits are already in the newest layer may be re-inserted bit-neutrally:
  // re-insert the newest layer's own keys (the last 9000 - 6000).
  for (std::size_t i = 6000; i < hashes.size(); ++i) {
    EXPECT_FALSE(f.insert(hashes[i])) << i;
  }
  f.insert_batch(std::span<const KeyHash>(hashes).subspan(6000));
  EXPECT_EQ(all_words(f), before);
  EXPECT_EQ(f.num_layers(), 3U);
}

TEST(ScalableBloom, SaturatedFilterSaysMaybe) {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.num_slices = 8;
  ScalableBloom f(p, all_slices(p));
  for (std::uint32_t s = 0; s < p.num_slices; ++s) {
    const auto w = f.slice_words(0, s);
    std::fill(w.begin(), w.end(), ~std::uint64_t{0});
  }
  const std::vector<KeyHash> never = scalable_hashes("never-", 1000);
  std::vector<std::uint8_t> out(never.size());
  f.query_batch(never, out);
  for (std::size_t i = 0; i < never.size(); ++i) {
    EXPECT_TRUE(f.may_contain(never[i]));
    EXPECT_EQ(out[i], 1U);
  }
  EXPECT_DOUBLE_EQ(f.layer_stats(0).fill_ratio, 1.0);
  EXPECT_DOUBLE_EQ(f.layer_stats(0).fpr_estimate, 1.0);
}

TEST(ScalableBloom, MeasuredFprOfOneFullLayer) {
  for (const double target : {0.01, 0.001}) {
    ScalableBloomParams p;
    p.initial_capacity = 200'000;
    p.fpr_target = target;
    p.num_slices = 16;  // ~280 blocks per slice: rounding adds < 0.4% bits
    ScalableBloom f(p, all_slices(p));
    f.insert_batch(scalable_hashes("one-in-", 200'000));
    ASSERT_EQ(f.num_layers(), 1U);
    constexpr std::size_t kAbsent = 1'000'000;  // sample size of the measured FPR
    const double measured = measured_fpr(f, "one-out-", kAbsent);
    const BloomLayerStats s = f.layer_stats(0);
    std::printf("target %g: layer p0=%g bits/key=%.2f k=%u measured %.6f estimate %.6f\n", target,
                s.geometry.fpr_target, s.geometry.bits_per_key, s.geometry.k, measured,
                s.fpr_estimate);
    EXPECT_LE(measured, target);
    EXPECT_LE(measured, s.geometry.fpr_target);
    EXPECT_NEAR(measured, s.fpr_estimate, 0.25 * s.fpr_estimate);
    EXPECT_EQ(s.inserted, 200'000U);
    EXPECT_NEAR(s.cardinality_estimate / 200'000.0, 1.0, 0.05);
  }
}

TEST(ScalableBloom, GrowsThousandFoldAndKeepsCompoundFpr) {
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.fpr_target = 0.001;
  p.growth = 2.0;
  p.tightening = 0.5;
  p.num_slices = 64;
  ScalableBloom single(p, all_slices(p));
  ScalableBloom batched(p, all_slices(p));
  constexpr std::size_t kKeys = 1'000'000;
  const std::vector<KeyHash> keys = scalable_hashes("grow-in-", kKeys);
  for (const KeyHash& h : keys) {
    single.insert(h);
  }
  batched.insert_batch(keys);

  // The math: layers open when the newest is full, so the count is the
  // smallest L with sum_{i<L} capacity_i >= 1,000,000 (1000 * (2^L - 1)).
  std::size_t layers = 0;
  std::uint64_t room = 0;
  while (room < kKeys) {
    room += layer_geometry(p, static_cast<std::uint32_t>(layers)).capacity;
    ++layers;
  }
  EXPECT_EQ(layers, 10U);
  EXPECT_EQ(single.num_layers(), layers);
  EXPECT_EQ(batched.num_layers(), layers);
  EXPECT_EQ(all_words(single), all_words(batched));
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < layers; ++i) {
    const BloomLayerStats s = single.layer_stats(i);
    EXPECT_EQ(s.geometry.capacity, layer_geometry(p, static_cast<std::uint32_t>(i)).capacity);
    if (i + 1 < layers) {
      EXPECT_EQ(s.inserted, s.geometry.capacity);
    }
    total += s.inserted;
  }
  EXPECT_EQ(total, kKeys);

  for (std::size_t i = 0; i < kKeys; i += 97) {
    ASSERT_TRUE(single.may_contain(keys[i]));
  }
  constexpr std::size_t kAbsent = 1'000'000;  // sample size of the measured FPR
  const double measured = measured_fpr(single, "grow-out-", kAbsent);
  std::printf("after growth to %zu layers: compound FPR %.6f (target %g, %zu samples)\n",
              single.num_layers(), measured, p.fpr_target, kAbsent);
  EXPECT_LE(measured, p.fpr_target);
}

TEST(ScalableBloom, InsertIfAbsentIsMayContainThenInsert) {
  // Through growth (layers of different k: each tightens the FPR), with
  // repeats, against the two-call form it replaces in the decide loop.
  ScalableBloomParams p;
  p.initial_capacity = 1000;
  p.num_slices = 16;
  ScalableBloom fused(p, all_slices(p));
  ScalableBloom two_calls(p, all_slices(p));
  std::vector<KeyHash> keys = scalable_hashes("fused-", 30000);
  for (std::size_t i = 0; i < keys.size(); i += 3) keys[i] = keys[i / 2];  // repeats
  std::size_t inserted = 0;
  for (const KeyHash& h : keys) {
    const bool absent = !two_calls.may_contain(h);
    if (absent) two_calls.insert(h);
    ASSERT_EQ(fused.insert_if_absent(h), absent);
    inserted += absent ? 1U : 0U;
  }
  ASSERT_GE(fused.num_layers(), 4U);
  EXPECT_EQ(fused.num_layers(), two_calls.num_layers());
  EXPECT_NE(fused.layer_geometry(0).k, fused.layer_geometry(fused.num_layers() - 1).k);
  EXPECT_EQ(all_words(fused), all_words(two_calls));
  std::uint64_t counted = 0;
  for (std::size_t l = 0; l < fused.num_layers(); ++l) counted += fused.layer_inserted(l);
  EXPECT_EQ(counted, inserted);
  for (const KeyHash& h : keys) ASSERT_TRUE(fused.may_contain(h));
}

TEST(ScalableBloom, ManualGrowthWithAutoGrowOff) {
  ScalableBloomParams p;
  p.initial_capacity = 100;
  p.num_slices = 4;
  ScalableBloom f(p, all_slices(p));
  f.set_auto_grow(false);
  const std::vector<KeyHash> keys = scalable_hashes("manual-", 250);
  f.insert_batch(keys);
  EXPECT_EQ(f.num_layers(), 1U);
  EXPECT_EQ(f.newest_layer_inserted(), 250U);
  EXPECT_FALSE(f.layer_full(99));
  EXPECT_TRUE(f.layer_full(100));
  f.add_layer();
  EXPECT_EQ(f.num_layers(), 2U);
  EXPECT_EQ(f.newest_layer_inserted(), 0U);
  EXPECT_FALSE(f.layer_full(100));
  EXPECT_TRUE(f.layer_full(200));
  f.set_layer_inserted(1, 42);
  EXPECT_EQ(f.newest_layer_inserted(), 42U);
  for (const KeyHash& h : keys) {
    EXPECT_TRUE(f.may_contain(h));
  }
}

TEST(ScalableBloom, BitsDoNotDependOnOwnership) {
  // A filter split over 3 "ranks" holds, slice by slice, the same words as
  // one filter owning every slice: the layout that lets a job resume on
  // another rank count.
  ScalableBloomParams p;
  p.initial_capacity = 5000;
  p.num_slices = 30;
  ScalableBloom whole(p, all_slices(p));
  std::vector<ScalableBloom> parts;
  for (std::uint32_t r = 0; r < 3; ++r) {
    parts.emplace_back(p, slices_of_rank(r, 3, p.num_slices));
    parts.back().set_auto_grow(false);
  }
  whole.set_auto_grow(false);
  const std::vector<KeyHash> keys = scalable_hashes("own-", 4000);
  for (const KeyHash& h : keys) {
    whole.insert(h);
    parts[owner_of_slice(slice_of(h, p.num_slices), 3, p.num_slices)].insert(h);
  }
  for (const KeyHash& h : keys) {
    EXPECT_TRUE(parts[owner_of_slice(slice_of(h, p.num_slices), 3, p.num_slices)].may_contain(h));
  }
  for (std::uint32_t s = 0; s < p.num_slices; ++s) {
    const auto a = whole.slice_words(0, s);
    const auto b = parts[owner_of_slice(s, 3, p.num_slices)].slice_words(0, s);
    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "slice " << s;
  }
}

}  // namespace
}  // namespace bloomshard::core
