// Confirmation: the Jaccard estimate from full and b-bit signatures lies
// within 3 sigma of the true similarity of generated pairs; the b-bit
// packing layout; the S-curve helper.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/minhash/minhash_jaccard.hpp"
#include "core/minhash/minhash_s_curve.hpp"
#include "core/minhash/minhash_signature.hpp"
#include "core/minhash/shingle.hpp"

namespace bloomshard::core {
namespace {

std::vector<std::uint32_t> jaccard_signature(const PermutationFamily& f,
                                             std::span<const std::uint64_t> x) {
  MinHashSignatureBuilder b(f);
  b.add(x);
  std::vector<std::uint32_t> out;
  b.values(out);
  return out;
}

TEST(MinHashJaccard, FullSignatureIsTheFractionOfEqualValues) {
  const std::vector<std::uint32_t> a = {1, 2, 3, 4};
  const std::vector<std::uint32_t> b = {1, 9, 3, 9};
  EXPECT_DOUBLE_EQ(estimate_jaccard(a, b), 0.5);
  EXPECT_THROW((void)estimate_jaccard(a, std::span<const std::uint32_t>(b).first(3)),
               std::invalid_argument);
}

TEST(MinHashJaccard, BbitPackingLayout) {
  const std::vector<std::uint32_t> v = {0x12345678U, 0xFFFFFFFEU, 0x3U, 0x80000001U};
  EXPECT_EQ(pack_bbit(v, 8).packed, (std::vector<std::uint8_t>{0x78, 0xFE, 0x03, 0x01}));
  EXPECT_EQ(pack_bbit(v, 1).packed, (std::vector<std::uint8_t>{0b1100}));
  EXPECT_EQ(pack_bbit(v, 2).packed, (std::vector<std::uint8_t>{0b01111000}));
  EXPECT_EQ(pack_bbit(v, 4).packed, (std::vector<std::uint8_t>{0xE8, 0x13}));
  EXPECT_EQ(pack_bbit(v, 16).packed,
            (std::vector<std::uint8_t>{0x78, 0x56, 0xFE, 0xFF, 0x03, 0, 0x01, 0}));
  EXPECT_EQ(pack_bbit(v, 32).packed.size(), 16U);
  EXPECT_THROW((void)pack_bbit(v, 3), std::invalid_argument);
  EXPECT_THROW((void)bbit_match_fraction(pack_bbit(v, 8), pack_bbit(v, 4)), std::invalid_argument);
  for (const std::uint32_t bits : {1U, 2U, 4U, 8U, 16U, 32U}) {
    EXPECT_DOUBLE_EQ(estimate_jaccard_bbit(pack_bbit(v, bits), pack_bbit(v, bits)), 1.0) << bits;
  }
}

// Sets of `size` random hashes sharing `common`: J = common / (2 size - common).
struct Pair {
  std::vector<std::uint64_t> a, b;
  double jaccard;
};

Pair make_pair(std::mt19937_64& rng, std::size_t size, double target) {
  const auto common = static_cast<std::size_t>(
      std::lround(2.0 * static_cast<double>(size) * target / (1.0 + target)));
  std::vector<std::uint64_t> u(2 * size - common);
  for (auto& v : u) v = rng();
  Pair p;
  p.a.assign(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(size));
  p.b.assign(u.end() - static_cast<std::ptrdiff_t>(size), u.end());
  p.jaccard = static_cast<double>(common) / static_cast<double>(2 * size - common);
  return p;
}

TEST(MinHashJaccard, EstimatesLieWithinThreeSigmaOfTheTrueJaccard) {
  const PermutationFamily f(14 * 8);
  std::mt19937_64 rng(33);
  for (const double target : {0.2, 0.5, 0.8, 0.95}) {
    std::vector<Pair> pairs;
    std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> sigs;
    for (int i = 0; i < 100; ++i) {
      pairs.push_back(make_pair(rng, 1000, target));
      sigs.emplace_back(jaccard_signature(f, pairs.back().a), jaccard_signature(f, pairs.back().b));
    }
    for (const std::uint32_t bits : {32U, 8U, 4U, 1U}) {
      int inside = 0;
      double sum_error = 0;
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        const double j = pairs[i].jaccard;
        const double est = bits == 32 ? estimate_jaccard(sigs[i].first, sigs[i].second)
                                      : estimate_jaccard_bbit(pack_bbit(sigs[i].first, bits),
                                                              pack_bbit(sigs[i].second, bits));
        const double sigma = jaccard_estimate_sigma(j, 112, bits);
        inside += std::abs(est - j) <= 3 * sigma ? 1 : 0;
        sum_error += est - j;
      }
      // 3 sigma holds for 99.7% of a normal estimate; the count is binomial
      // over K = 112 values, so allow 3 of 100 outside. The mean of 100
      // estimates is within 3 sigma / 10 of the truth (no bias).
      EXPECT_GE(inside, 97) << "J " << target << " b " << bits;
      EXPECT_LE(std::abs(sum_error / 100.0), 3 * jaccard_estimate_sigma(target, 112, bits) / 10.0)
          << "J " << target << " b " << bits;
    }
  }
}

TEST(MinHashJaccard, EditedTextsEstimateTheirShingleJaccard) {
  std::mt19937_64 rng(5);
  std::vector<std::string> words;
  for (int i = 0; i < 3000; ++i) words.push_back("w" + std::to_string(rng() % 5000));
  const auto join = [](const std::vector<std::string>& w) {
    std::string s;
    for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
    return s;
  };
  const std::string base = join(words);
  const PermutationFamily f(112);
  int inside = 0;
  for (int trial = 0; trial < 50; ++trial) {
    auto changed = words;  // about 1 word in 20 changed
    for (auto& w : changed) {
      if (rng() % 20 == 0) w += "x";
    }
    const std::string edited = join(changed);
    const auto ha = shingle_hashes({}, base);
    const auto hb = shingle_hashes({}, edited);
    const std::set<std::uint64_t> sa(ha.begin(), ha.end());
    const std::set<std::uint64_t> sb(hb.begin(), hb.end());
    std::size_t common = 0;
    for (const auto v : sa) common += sb.count(v);
    const double j =
        static_cast<double>(common) / static_cast<double>(sa.size() + sb.size() - common);
    const double est = estimate_jaccard(jaccard_signature(f, ha), jaccard_signature(f, hb));
    inside += std::abs(est - j) <= 3 * jaccard_estimate_sigma(j, 112, 32) ? 1 : 0;
  }
  EXPECT_GE(inside, 48);
}

TEST(MinHashSCurve, ProbabilityAndThreshold) {
  EXPECT_NEAR(band_hit_probability(0.8, 14, 8), 1.0 - std::pow(1.0 - std::pow(0.8, 8), 14), 1e-15);
  EXPECT_DOUBLE_EQ(band_hit_probability(0.0, 14, 8), 0.0);
  EXPECT_DOUBLE_EQ(band_hit_probability(1.0, 14, 8), 1.0);
  EXPECT_NEAR(s_curve_threshold(14, 8), 0.7190, 1e-4);
  EXPECT_NEAR(s_curve_threshold(20, 13), 0.7942, 1e-4);
}

TEST(MinHashJaccard, Tier2BytesPerRecordWithAndWithoutConfirmation) {
  // docs/near-duplicates.md, "Bytes per record": 16-byte band keys, and
  // beside each the b-bit form of the whole signature.
  EXPECT_EQ(minhash_tier2_payload_per_record(14, 8, 0), 224U);
  EXPECT_EQ(minhash_tier2_payload_per_record(14, 8, 1), 14U * (16 + 14));
  EXPECT_EQ(minhash_tier2_payload_per_record(14, 8, 4), 1008U);
  EXPECT_EQ(minhash_tier2_payload_per_record(14, 8, 8), 14U * (16 + 112));
  EXPECT_EQ(minhash_tier2_payload_per_record(14, 8, 32), 14U * (16 + 448));
  EXPECT_EQ(minhash_tier2_payload_per_record(20, 13, 4), 20U * (16 + 130));
  // The packed form is exactly what is counted, odd sizes rounded up.
  for (const std::uint32_t values : {1U, 3U, 112U, 260U}) {
    for (const std::uint32_t bits : {1U, 2U, 4U, 8U, 32U}) {
      const std::vector<std::uint32_t> sig(values, 0x12345678U);
      EXPECT_EQ(pack_bbit(sig, bits).packed.size(), bbit_bytes(values, bits))
          << values << " x " << bits;
    }
  }
}

}  // namespace
}  // namespace bloomshard::core
