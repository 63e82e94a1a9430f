// MinHash signatures: the family's documented constants, the kernels
// against the scalar reference (bit-identical), batch boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/minhash/minhash_signature.hpp"

namespace bloomshard::core {
namespace {

TEST(MinHashSignature, FamilyKnownAnswers) {
  // docs/near-duplicates.md: splitmix64 seeded "minhash1", a_i | 1 then b_i.
  const PermutationFamily f(4);
  ASSERT_EQ(f.padded_count(), 16U);
  EXPECT_EQ(f.multipliers()[0], 0x9597103d73c835b1ULL);
  EXPECT_EQ(f.offsets()[0], 0x2fe4bb3f6318b88fULL);
  EXPECT_EQ(f.multipliers()[1], 0x8145ef271a8e94e3ULL);
  EXPECT_EQ(f.offsets()[1], 0x949ebb15fda3efcdULL);
  EXPECT_EQ(f.multipliers()[3], 0xb1bc8581d8724845ULL);
  EXPECT_EQ(f.offsets()[3], 0xa70a34a857349d3cULL);
  // A longer family starts with the same members.
  const PermutationFamily g(260);
  EXPECT_TRUE(std::equal(f.multipliers().begin(), f.multipliers().end(), g.multipliers().begin()));
  for (const std::uint64_t a : g.multipliers()) EXPECT_EQ(a & 1U, 1U);
}

TEST(MinHashSignature, RejectsSizesOutsideTheLimits) {
  EXPECT_THROW(PermutationFamily(0), std::invalid_argument);
  EXPECT_THROW(PermutationFamily(kMaxSignatureValues + 1), std::invalid_argument);
}

std::vector<std::uint32_t> signature_of(const PermutationFamily& f, SignatureIsa isa,
                                        std::span<const std::uint64_t> hashes, std::size_t batch) {
  MinHashSignatureBuilder b(f, isa);
  for (std::size_t i = 0; i < hashes.size(); i += batch) {
    b.add(hashes.subspan(i, std::min(batch, hashes.size() - i)));
  }
  std::vector<std::uint32_t> out;
  b.values(out);
  return out;
}

TEST(MinHashSignature, ScalarIsTheMinimumOfTheDocumentedFamily) {
  const PermutationFamily f(20);
  const std::vector<std::uint64_t> x = {1, 0xFFFFFFFFFFFFFFFFULL, 0x123456789abcdef0ULL};
  const auto sig = signature_of(f, SignatureIsa::kScalar, x, 256);
  for (std::size_t i = 0; i < 20; ++i) {
    std::uint32_t m = 0xFFFFFFFFU;
    for (const auto v : x) {
      const std::uint64_t full = f.multipliers()[i] * v + f.offsets()[i];
      m = std::min(m, static_cast<std::uint32_t>(full >> 32));
    }
    EXPECT_EQ(sig[i], m) << i;
  }
  EXPECT_EQ(signature_of(f, SignatureIsa::kScalar, {}, 256),
            std::vector<std::uint32_t>(20, kEmptySignatureValue));
}

TEST(MinHashSignature, EveryKernelMatchesScalarBitForBit) {
  std::mt19937_64 rng(33);
  int compared = 0;
  for (const SignatureIsa isa : {SignatureIsa::kAvx2, SignatureIsa::kAvx512}) {
    if (!signature_isa_supported(isa)) {
      std::printf("[ SKIPPED  ] %s not on this CPU\n", signature_isa_name(isa).data());
      continue;
    }
    for (const std::uint32_t count : {1U, 8U, 16U, 112U, 260U}) {
      const PermutationFamily f(count);
      for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{255},
                                  std::size_t{256}, std::size_t{257}, std::size_t{5000}}) {
        std::vector<std::uint64_t> x(n);
        for (auto& v : x) v = rng();
        if (n > 3) x[1] = 0, x[2] = ~0ULL;  // the extremes of the input
        for (const std::size_t batch : {std::size_t{1}, std::size_t{256}}) {
          ASSERT_EQ(signature_of(f, isa, x, batch), signature_of(f, SignatureIsa::kScalar, x, 7))
              << signature_isa_name(isa) << " count " << count << " n " << n;
          ++compared;
        }
      }
    }
  }
  std::printf("kernel %s, %d comparisons\n", signature_isa_name(signature_isa()).data(), compared);
}

}  // namespace
}  // namespace bloomshard::core
