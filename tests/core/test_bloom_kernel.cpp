// Tests of the 512-bit block kernel: bit positions, add/probe, batch paths,
// layer remix, and the measured FPR of a flat filter sized by bloom_math.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace bloomshard::core {
namespace {

// Deterministic keys "<prefix><i>"; different prefixes give disjoint sets.
std::vector<KeyHash> make_hashes(const std::string& prefix, std::size_t n) {
  std::vector<KeyHash> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(hash_key(prefix + std::to_string(i)));
  }
  return out;
}

TEST(BloomKernel, SaltsAreOddAndDistinct) {
  const std::set<std::uint32_t> distinct(kProbeSalts.begin(), kProbeSalts.end());
  EXPECT_EQ(distinct.size(), kProbeSalts.size());
  for (const std::uint32_t s : kProbeSalts) {
    EXPECT_EQ(s & 1U, 1U);
  }
  EXPECT_EQ(kBloomLayoutVersion, 1U);
  EXPECT_EQ(kBloomLayoutName, "block512-k/v1");
}

TEST(BloomKernel, ProbeBitsAreUniformAndPairwiseIndependent) {
  // 512 * 400 samples: each position expects 400 hits per probe; a chi-square
  // over 511 degrees of freedom stays far below 700 for a uniform source.
  constexpr std::size_t kSamples = 512 * 400;
  const std::vector<KeyHash> hashes = make_hashes("uniform-", kSamples);
  for (std::uint32_t i = 0; i < kMaxProbes; ++i) {
    std::vector<double> hits(kBlockBits, 0.0);
    for (const KeyHash& h : hashes) {
      const std::uint32_t b = probe_bit(probe_bits(h), i);
      ASSERT_LT(b, kBlockBits);
      hits[b] += 1.0;
    }
    double chi2 = 0.0;
    for (const double c : hits) {
      chi2 += (c - 400.0) * (c - 400.0) / 400.0;
    }
    EXPECT_LT(chi2, 700.0) << "probe " << i;
  }
  // Two probes of one key coincide with chance 1/512 (400 of 204800).
  for (std::uint32_t i = 0; i < kMaxProbes; ++i) {
    for (std::uint32_t j = i + 1; j < kMaxProbes; ++j) {
      std::size_t same = 0;
      for (const KeyHash& h : hashes) {
        same += probe_bit(probe_bits(h), i) == probe_bit(probe_bits(h), j) ? 1U : 0U;
      }
      EXPECT_NEAR(static_cast<double>(same), 400.0, 100.0) << "probes " << i << "," << j;
    }
  }
}

TEST(BloomKernel, AddThenProbeAndIdempotence) {
  alignas(64) std::uint64_t block[kBlockWords] = {};
  const std::vector<KeyHash> hashes = make_hashes("add-", 40);
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    std::fill(std::begin(block), std::end(block), 0);
    for (const KeyHash& h : hashes) {
      block_add(block, probe_bits(h), k);
      EXPECT_TRUE(block_probe(block, probe_bits(h), k));
    }
    std::uint64_t before[kBlockWords];
    std::copy(std::begin(block), std::end(block), before);
    for (const KeyHash& h : hashes) {
      EXPECT_FALSE(block_add(block, probe_bits(h), k)) << "k " << k;
      EXPECT_TRUE(block_probe(block, probe_bits(h), k));
    }
    EXPECT_TRUE(std::equal(std::begin(block), std::end(block), before));
  }
}

TEST(BloomKernel, MaskFormAgreesWithProbeAndAdd) {
  // block_mask/block_has/block_set are the decide loop's form of
  // block_probe/block_add: the same bits and answers for every k.
  const std::vector<KeyHash> hashes = make_hashes("mask-", 300);
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    alignas(64) std::uint64_t by_add[kBlockWords] = {};
    alignas(64) std::uint64_t by_mask[kBlockWords] = {};
    for (const KeyHash& h : hashes) {
      const BlockMask m = block_mask(probe_bits(h), k);
      ASSERT_EQ(block_has(by_mask, m), block_probe(by_add, probe_bits(h), k)) << "k " << k;
      ASSERT_EQ(block_set(by_mask, m), block_add(by_add, probe_bits(h), k)) << "k " << k;
      ASSERT_TRUE(std::equal(std::begin(by_add), std::end(by_add), std::begin(by_mask)));
      ASSERT_TRUE(block_has(by_mask, m));
      ASSERT_FALSE(block_set(by_mask, m));
    }
  }
}

TEST(BloomKernel, FirstAddSetsAtMostKBits) {
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    alignas(64) std::uint64_t block[kBlockWords] = {};
    EXPECT_TRUE(block_add(block, 0xdeadbeefU, k));
    int bits = 0;
    for (const std::uint64_t w : block) {
      bits += std::popcount(w);
    }
    EXPECT_GE(bits, 1);
    EXPECT_LE(bits, static_cast<int>(k));
  }
}

TEST(BloomKernel, EmptyBlockSaysAbsentSaturatedSaysMaybe) {
  alignas(64) std::uint64_t zero[kBlockWords] = {};
  alignas(64) std::uint64_t full[kBlockWords];
  std::fill(std::begin(full), std::end(full), ~std::uint64_t{0});
  for (const KeyHash& h : make_hashes("sat-", 1000)) {
    for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
      EXPECT_FALSE(block_probe(zero, probe_bits(h), k));
      EXPECT_TRUE(block_probe(full, probe_bits(h), k));
    }
  }
}

TEST(BloomKernel, LayerBlockHashDecorrelatesLayers) {
  EXPECT_EQ(layer_block_hash(12345, 0), 12345U);
  // Keys sharing a block among 1024 in layer 0 share one in layer 1 only by
  // chance (1/1024), not systematically.
  constexpr std::uint64_t kBlocks = 1024;
  const std::vector<KeyHash> hashes = make_hashes("layer-", 200'000);
  std::size_t pairs = 0;
  std::size_t still = 0;
  std::vector<std::uint64_t> first_seen(kBlocks, ~std::uint64_t{0});
  for (const KeyHash& h : hashes) {
    const std::uint64_t b0 = fastrange64(h.lo, kBlocks);
    if (first_seen[b0] == ~std::uint64_t{0}) {
      first_seen[b0] = h.lo;
      continue;
    }
    ++pairs;
    still += fastrange64(layer_block_hash(first_seen[b0], 1), kBlocks) ==
                     fastrange64(layer_block_hash(h.lo, 1), kBlocks)
                 ? 1U
                 : 0U;
  }
  EXPECT_GT(pairs, 190'000U);
  EXPECT_LT(static_cast<double>(still), 3.0 * static_cast<double>(pairs) / kBlocks);
  // Different layers map one lo to different values.
  std::set<std::uint64_t> per_layer;
  for (std::uint32_t layer = 0; layer < 64; ++layer) {
    per_layer.insert(layer_block_hash(0x0123456789abcdefULL, layer));
  }
  EXPECT_EQ(per_layer.size(), 64U);
}

// A flat filter: one slice of `blocks` blocks.
LayerLayout flat_layout(std::uint64_t blocks, std::uint32_t k) {
  return LayerLayout{blocks, 1, 0, 0, k};
}

TEST(BloomKernel, BlockWordOffsetFollowsLayoutV1) {
  const KeyHash h{0x8000000000000000ULL, 0x4000000000000000ULL};
  // Slice = top of hi over 8 slices = 4; held slices start at 2; block in
  // slice = top of lo over 10 blocks = 2 (layer 0 uses lo as is).
  EXPECT_EQ(block_word_offset(LayerLayout{10, 8, 2, 0, 7}, h), ((4 - 2) * 10 + 2) * kBlockWords);
  const LayerLayout l1{10, 8, 2, 1, 7};
  EXPECT_EQ(block_word_offset(l1, h),
            ((4 - 2) * 10 + fastrange64(layer_block_hash(h.lo, 1), 10)) * kBlockWords);
}

TEST(BloomKernel, BatchPathsMatchSingleKeyPaths) {
  constexpr std::uint64_t kBlocks = 997;
  constexpr std::uint32_t kK = 9;
  const LayerLayout layout = flat_layout(kBlocks, kK);
  const std::vector<KeyHash> keys = make_hashes("batch-", 5000);
  const std::vector<KeyHash> probes = make_hashes("batch-probe-", 5000);
  BlockWords single(kBlocks * kBlockWords, 0);
  BlockWords batched(kBlocks * kBlockWords, 0);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(batched.data()) % 64, 0U);
  std::size_t changed_single = 0;
  for (const KeyHash& h : keys) {
    changed_single +=
        block_add(single.data() + block_word_offset(layout, h), probe_bits(h), kK) ? 1U : 0U;
  }
  const std::size_t changed_batched = insert_layer_batch(batched.data(), layout, keys);
  EXPECT_EQ(single, batched);
  EXPECT_EQ(changed_single, changed_batched);
  // Sizes around the prefetch distance exercise the ring's head and tail.
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, kPrefetchDistance - 1,
                              kPrefetchDistance, kPrefetchDistance + 1, probes.size()}) {
    std::vector<std::uint8_t> out(n, 7);
    std::vector<std::uint8_t> scalar(n, 7);
    const std::span<const KeyHash> part(probes.data(), n);
    query_layer_batch(batched.data(), layout, part, out);
    query_layer_batch_isa(ProbeIsa::kScalar, batched.data(), layout, part, scalar);
    EXPECT_EQ(out, scalar);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i] != 0, block_probe(batched.data() + block_word_offset(layout, part[i]),
                                         probe_bits(part[i]), kK));
    }
  }
  // accumulate ORs into the output instead of overwriting it.
  std::vector<std::uint8_t> ones(probes.size(), 1);
  query_layer_batch(batched.data(), layout, probes, ones, true);
  EXPECT_EQ(std::count(ones.begin(), ones.end(), 1), static_cast<std::ptrdiff_t>(probes.size()));
}

TEST(BloomKernel, VectorProbeMatchesScalarAtEveryFillAndK) {
  // Random blocks from empty to nearly full, every k: each vector probe the
  // CPU supports must give exactly block_probe's answers.
  std::printf("batch probe ISA: %s\n", std::string(probe_isa_name(probe_isa())).c_str());
  constexpr std::uint64_t kBlocks = 4096;
  BlockWords words(kBlocks * kBlockWords, 0);
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  auto next = [&state] {  // splitmix64
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  for (std::uint64_t b = 0; b < kBlocks; ++b) {
    const unsigned density = static_cast<unsigned>(b % 8);  // AND of up to 7 randoms: sparse
    for (std::size_t w = 0; w < kBlockWords; ++w) {
      std::uint64_t x = ~std::uint64_t{0};
      for (unsigned d = 0; d < density; ++d) {
        x &= next();
      }
      words[b * kBlockWords + w] = density == 0 ? ~next() | next() : x | (next() & next());
    }
  }
  const std::vector<KeyHash> probes = make_hashes("vec-", 20'000);
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    const LayerLayout layout = flat_layout(kBlocks, k);
    std::vector<std::uint8_t> scalar(probes.size());
    query_layer_batch_isa(ProbeIsa::kScalar, words.data(), layout, probes, scalar);
    for (std::size_t i = 0; i < probes.size(); ++i) {
      ASSERT_EQ(scalar[i] != 0, block_probe(words.data() + block_word_offset(layout, probes[i]),
                                            probe_bits(probes[i]), k));
    }
    for (const ProbeIsa isa : {ProbeIsa::kAvx2, ProbeIsa::kAvx512}) {
      if (!probe_isa_supported(isa)) {
        std::printf("skipping %s: not supported here\n", std::string(probe_isa_name(isa)).c_str());
        continue;
      }
      std::vector<std::uint8_t> fast(probes.size());
      query_layer_batch_isa(isa, words.data(), layout, probes, fast);
      ASSERT_EQ(fast, scalar) << probe_isa_name(isa) << " k " << k;
    }
    const auto maybes = std::count(scalar.begin(), scalar.end(), 1);
    EXPECT_GT(maybes, 0) << "k " << k;  // both answers occur, so the test has teeth
    EXPECT_LT(maybes, static_cast<std::ptrdiff_t>(probes.size())) << "k " << k;
  }
}

TEST(BloomKernel, BlockStorageIsAligned) {
  for (const std::size_t words : {std::size_t{8}, std::size_t{1} << 20}) {  // 64 B, 8 MiB
    const BlockWords a(words, 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % kBlockBytes, 0U);
    EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](std::uint64_t w) { return w == 0; }));
    BlockWords copy = a;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copy.data()) % kBlockBytes, 0U);
  }
}

// A flat filter sized exactly by choose_geometry(p) must meet p when
// measured on 1,000,000 disjoint absent keys (standard error ~3% of p at
// p = 0.1%, so the 5% model margin is what makes this hold).
void expect_measured_fpr(double p, std::size_t n_keys) {
  const BloomGeometryChoice g = choose_geometry(p);
  const auto blocks = static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(n_keys) * g.bits_per_key / static_cast<double>(kBlockBits)));
  const LayerLayout layout = flat_layout(blocks, g.k);
  BlockWords words(blocks * kBlockWords, 0);
  const std::vector<KeyHash> keys = make_hashes("fpr-in-", n_keys);
  insert_layer_batch(words.data(), layout, keys);
  for (const KeyHash& h : keys) {
    ASSERT_TRUE(block_probe(words.data() + block_word_offset(layout, h), probe_bits(h), g.k));
  }
  constexpr std::size_t kAbsent = 1'000'000;  // sample size of the measured FPR
  const std::vector<KeyHash> absent = make_hashes("fpr-out-", kAbsent);
  std::vector<std::uint8_t> out(kAbsent);
  query_layer_batch(words.data(), layout, absent, out);
  const auto positives = static_cast<double>(std::count(out.begin(), out.end(), 1));
  const double measured = positives / static_cast<double>(kAbsent);
  std::printf("p=%g bits/key=%.2f k=%u measured FPR=%.6f (%.0f of %zu)\n", p, g.bits_per_key, g.k,
              measured, positives, kAbsent);
  EXPECT_LE(measured, p);
  // The model is not wildly pessimistic either.
  EXPECT_GE(measured, 0.7 * p);
}

TEST(BloomKernel, MeasuredFprMeetsOnePercent) { expect_measured_fpr(0.01, 300'000); }
TEST(BloomKernel, MeasuredFprMeetsTenthPercent) { expect_measured_fpr(0.001, 300'000); }

}  // namespace
}  // namespace bloomshard::core
