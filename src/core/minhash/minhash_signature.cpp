// MinHash kernels (minhash_signature.hpp). Loop order: for each block of
// permutations (8 for AVX2, 16 for AVX-512) the multipliers, offsets and
// minima stay in registers while the batch of shingle hashes streams by, so
// a batch costs one load and one store of the accumulator per block.
#include "core/minhash/minhash_signature.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BLOOMSHARD_HAVE_X86 1
#include <immintrin.h>
#else
#define BLOOMSHARD_HAVE_X86 0
#endif

namespace bloomshard::core {
namespace {

constexpr std::size_t kPadTo = 16;

std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void update_scalar(const PermutationFamily& f, std::span<const std::uint64_t> hashes,
                   std::uint64_t* acc) noexcept {
  const auto a = f.multipliers();
  const auto b = f.offsets();
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::uint64_t m = acc[i];
    for (const std::uint64_t x : hashes)
      m = std::min<std::uint64_t>(m, permuted_hash(a[i], b[i], x));
    acc[i] = m;
  }
}

#if BLOOMSHARD_HAVE_X86
// AVX2 has no 64x64 multiply: a*x mod 2^64 = lo(a)lo(x) + ((hi(a)lo(x) +
// lo(a)hi(x)) << 32). The top 32 bits land in the low half of each lane,
// with zero above, so a 32-bit unsigned min is the 64-bit one.
[[gnu::target("avx2")]] inline __m256i permute4(__m256i a, __m256i a_hi, __m256i b, __m256i x_lo,
                                                __m256i x_hi) noexcept {
  const __m256i low = _mm256_mul_epu32(a, x_lo);
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(a_hi, x_lo), _mm256_mul_epu32(a, x_hi));
  const __m256i sum = _mm256_add_epi64(_mm256_add_epi64(low, _mm256_slli_epi64(cross, 32)), b);
  return _mm256_srli_epi64(sum, 32);
}

[[gnu::target("avx2")]] inline __m256i load(const std::uint64_t* q) noexcept {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
}

[[gnu::target("avx2")]] void update_avx2(const PermutationFamily& f,
                                         std::span<const std::uint64_t> hashes,
                                         std::uint64_t* acc) noexcept {
  const std::uint64_t* a = f.multipliers().data();
  const std::uint64_t* b = f.offsets().data();
  for (std::size_t p = 0; p < f.padded_count(); p += 8) {
    const __m256i a0 = load(a + p);
    const __m256i a1 = load(a + p + 4);
    const __m256i a0_hi = _mm256_srli_epi64(a0, 32);
    const __m256i a1_hi = _mm256_srli_epi64(a1, 32);
    const __m256i b0 = load(b + p);
    const __m256i b1 = load(b + p + 4);
    __m256i m0 = load(acc + p);
    __m256i m1 = load(acc + p + 4);
    for (const std::uint64_t x : hashes) {
      const __m256i x_lo = _mm256_set1_epi64x(static_cast<long long>(x));
      const __m256i x_hi = _mm256_set1_epi64x(static_cast<long long>(x >> 32));
      m0 = _mm256_min_epu32(m0, permute4(a0, a0_hi, b0, x_lo, x_hi));
      m1 = _mm256_min_epu32(m1, permute4(a1, a1_hi, b1, x_lo, x_hi));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + p), m0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + p + 4), m1);
  }
}

// GCC 12's AVX-512 headers self-initialize an "undefined" vector inside
// several intrinsics, which -Wmaybe-uninitialized flags wherever they are
// inlined; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
[[gnu::target("avx512f,avx512dq")]] void update_avx512(const PermutationFamily& f,
                                                       std::span<const std::uint64_t> hashes,
                                                       std::uint64_t* acc) noexcept {
  const std::uint64_t* a = f.multipliers().data();
  const std::uint64_t* b = f.offsets().data();
  for (std::size_t p = 0; p < f.padded_count(); p += 16) {
    const __m512i a0 = _mm512_loadu_si512(a + p);
    const __m512i a1 = _mm512_loadu_si512(a + p + 8);
    const __m512i b0 = _mm512_loadu_si512(b + p);
    const __m512i b1 = _mm512_loadu_si512(b + p + 8);
    __m512i m0 = _mm512_loadu_si512(acc + p);
    __m512i m1 = _mm512_loadu_si512(acc + p + 8);
    for (const std::uint64_t x : hashes) {
      const __m512i xv = _mm512_set1_epi64(static_cast<long long>(x));
      const __m512i v0 = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mullo_epi64(a0, xv), b0), 32);
      const __m512i v1 = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mullo_epi64(a1, xv), b1), 32);
      m0 = _mm512_min_epu64(m0, v0);
      m1 = _mm512_min_epu64(m1, v1);
    }
    _mm512_storeu_si512(acc + p, m0);
    _mm512_storeu_si512(acc + p + 8, m1);
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

SignatureIsa widest_signature_isa() noexcept {
  if (signature_isa_supported(SignatureIsa::kAvx512)) return SignatureIsa::kAvx512;
  return signature_isa_supported(SignatureIsa::kAvx2) ? SignatureIsa::kAvx2 : SignatureIsa::kScalar;
}

}  // namespace

PermutationFamily::PermutationFamily(std::uint32_t count) : count_(count) {
  if (count < 1 || count > kMaxSignatureValues) {
    throw std::invalid_argument("MinHash signature of " + std::to_string(count) +
                                " values outside 1.." + std::to_string(kMaxSignatureValues));
  }
  const std::size_t padded = (count + kPadTo - 1) / kPadTo * kPadTo;
  a_.resize(padded);
  b_.resize(padded);
  std::uint64_t state = kMinHashFamilySeed;
  for (std::size_t i = 0; i < padded; ++i) {
    a_[i] = splitmix64(state) | 1U;
    b_[i] = splitmix64(state);
  }
}

bool signature_isa_supported(SignatureIsa isa) noexcept {
#if BLOOMSHARD_HAVE_X86
  // Asked once per batch of shingles: the CPU's answer is read once.
  static const bool avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
  static const bool avx512 = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f") != 0 &&
                                                        __builtin_cpu_supports("avx512dq") != 0);
  switch (isa) {
    case SignatureIsa::kScalar:
      return true;
    case SignatureIsa::kAvx2:
      return avx2;
    case SignatureIsa::kAvx512:
      return avx512;
  }
  return false;
#else
  return isa == SignatureIsa::kScalar;
#endif
}

SignatureIsa signature_isa() noexcept {
  static const SignatureIsa isa = widest_signature_isa();
  return isa;
}

std::string_view signature_isa_name(SignatureIsa isa) noexcept {
  switch (isa) {
    case SignatureIsa::kScalar:
      return "scalar";
    case SignatureIsa::kAvx2:
      return "avx2";
    case SignatureIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

void minhash_update(SignatureIsa isa, const PermutationFamily& family,
                    std::span<const std::uint64_t> hashes, std::uint64_t* acc) noexcept {
#if BLOOMSHARD_HAVE_X86
  if (isa == SignatureIsa::kAvx512 && signature_isa_supported(isa)) {
    update_avx512(family, hashes, acc);
    return;
  }
  if (isa == SignatureIsa::kAvx2 && signature_isa_supported(isa)) {
    update_avx2(family, hashes, acc);
    return;
  }
#endif
  update_scalar(family, hashes, acc);
}

MinHashSignatureBuilder::MinHashSignatureBuilder(const PermutationFamily& family, SignatureIsa isa)
    : family_(&family), isa_(isa), acc_(family.padded_count(), kEmptySignatureValue) {}

void MinHashSignatureBuilder::reset() noexcept {
  std::fill(acc_.begin(), acc_.end(), kEmptySignatureValue);
}

void MinHashSignatureBuilder::add(std::span<const std::uint64_t> hashes) {
  minhash_update(isa_, *family_, hashes, acc_.data());
}

void MinHashSignatureBuilder::values(std::vector<std::uint32_t>& out) const {
  out.resize(family_->count());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint32_t>(acc_[i]);
}

}  // namespace bloomshard::core
