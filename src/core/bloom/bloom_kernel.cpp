#include "bloomshard/core/bloom_kernel.hpp"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BLOOMSHARD_HAVE_X86 1
#endif

namespace bloomshard::core {
namespace {

constexpr std::size_t kRingMask = kPrefetchDistance - 1;
static_assert((kPrefetchDistance & kRingMask) == 0, "the ring index is a mask");

struct ScalarProbe {
  bool operator()(const std::uint64_t* block, std::uint32_t bits, std::uint32_t k) const noexcept {
    return block_probe(block, bits, k);
  }
};

// The ring: each block is located once, prefetched kPrefetchDistance keys
// ahead, probed when its turn comes. Forced inline so the AVX2 entry point
// below gets its own copy compiled for AVX2 with the probe inlined.
template <class Probe>
[[gnu::always_inline]] inline void ring_query(const std::uint64_t* words, const LayerLayout& v,
                                              std::span<const KeyHash> hashes,
                                              std::span<std::uint8_t> out, bool accumulate,
                                              Probe probe) noexcept {
  std::array<const std::uint64_t*, kPrefetchDistance> ring{};
  const std::size_t n = hashes.size();
  const std::size_t head = std::min(n, kPrefetchDistance);
  for (std::size_t i = 0; i < head; ++i) {
    ring[i] = words + block_word_offset(v, hashes[i]);
    prefetch_block(ring[i]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* block = ring[i & kRingMask];
    if (i + kPrefetchDistance < n) {
      const std::uint64_t* ahead = words + block_word_offset(v, hashes[i + kPrefetchDistance]);
      prefetch_block(ahead);
      ring[i & kRingMask] = ahead;
    }
    const auto maybe = static_cast<std::uint8_t>(probe(block, probe_bits(hashes[i]), v.k));
    out[i] = accumulate ? static_cast<std::uint8_t>(out[i] | maybe) : maybe;
  }
}

#if BLOOMSHARD_HAVE_X86
// AVX2 probe, bit-identical to block_probe: the block is read as sixteen
// 32-bit words (little-endian, so bit b is bit b & 31 of 32-bit word b >> 5,
// the same bit as in the 64-bit view). Eight probes per vector: one
// multiply, a shift, two in-register permutes to fetch the probed words,
// and a test against the probe masks; lanes >= k are masked off.
[[gnu::always_inline, gnu::target("avx2")]] inline int probe_eight(__m256i half0, __m256i half1,
                                                                   __m256i key,
                                                                   const std::uint32_t* salts,
                                                                   __m256i live) noexcept {
  const __m256i salt = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(salts));
  const __m256i b = _mm256_srli_epi32(_mm256_mullo_epi32(key, salt), 23);
  const __m256i word_index = _mm256_srli_epi32(b, 5);
  const __m256i from0 = _mm256_permutevar8x32_epi32(half0, word_index);
  const __m256i from1 = _mm256_permutevar8x32_epi32(half1, word_index);
  // Bit 3 of the word index picks the half; moved to the sign bit for blendv.
  const __m256 pick1 = _mm256_castsi256_ps(_mm256_slli_epi32(word_index, 28));
  const __m256i word = _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(from0), _mm256_castsi256_ps(from1), pick1));
  const __m256i bit =
      _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_and_si256(b, _mm256_set1_epi32(31)));
  return _mm256_testc_si256(word, _mm256_and_si256(bit, live));  // 1: all masked bits set
}

struct Avx2Probe {
  [[gnu::target("avx2")]] inline bool operator()(const std::uint64_t* block, std::uint32_t bits,
                                                 std::uint32_t k) const noexcept {
    const __m256i half0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(block));
    const __m256i half1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(block + 4));
    const __m256i key = _mm256_set1_epi32(static_cast<int>(bits));
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i kk = _mm256_set1_epi32(static_cast<int>(k));
    const __m256i live0 = _mm256_cmpgt_epi32(kk, lane);
    const __m256i live1 = _mm256_cmpgt_epi32(kk, _mm256_add_epi32(lane, _mm256_set1_epi32(8)));
    return (probe_eight(half0, half1, key, kProbeSalts.data(), live0) &
            probe_eight(half0, half1, key, kProbeSalts.data() + 8, live1)) != 0;
  }
};

// GCC 12's AVX-512 headers self-initialize an "undefined" vector inside
// several intrinsics, which -Wmaybe-uninitialized flags wherever they are
// inlined; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such warning group
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// AVX-512F probe: the whole block is one register of sixteen 32-bit words,
// one lane per probe; lanes >= k are masked off.
struct Avx512Probe {
  [[gnu::target("avx512f")]] inline bool operator()(const std::uint64_t* block, std::uint32_t bits,
                                                    std::uint32_t k) const noexcept {
    const __m512i words = _mm512_load_si512(block);
    const __m512i salts = _mm512_loadu_si512(kProbeSalts.data());
    const __m512i key = _mm512_set1_epi32(static_cast<int>(bits));
    const __m512i b = _mm512_srli_epi32(_mm512_mullo_epi32(key, salts), 23);
    const __m512i word = _mm512_permutexvar_epi32(_mm512_srli_epi32(b, 5), words);
    const __m512i bit =
        _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_and_si512(b, _mm512_set1_epi32(31)));
    const auto live = static_cast<__mmask16>((1U << k) - 1U);
    return _mm512_mask_testn_epi32_mask(live, word, bit) == 0;  // no live probe hit a 0
  }
};

// flatten: a target-specific probe can only be inlined once the ring is
// inside a function of that target, so inline the whole call tree here.
[[gnu::target("avx2"), gnu::flatten]] void query_layer_batch_avx2(const std::uint64_t* words,
                                                                  const LayerLayout& v,
                                                                  std::span<const KeyHash> hashes,
                                                                  std::span<std::uint8_t> out,
                                                                  bool accumulate) noexcept {
  ring_query(words, v, hashes, out, accumulate, Avx2Probe{});
}

[[gnu::target("avx512f"), gnu::flatten]] void query_layer_batch_avx512(
    const std::uint64_t* words, const LayerLayout& v, std::span<const KeyHash> hashes,
    std::span<std::uint8_t> out, bool accumulate) noexcept {
  ring_query(words, v, hashes, out, accumulate, Avx512Probe{});
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

bool cpu_supports(ProbeIsa isa) noexcept {
  __builtin_cpu_init();
  switch (isa) {
    case ProbeIsa::kScalar:
      return true;
    case ProbeIsa::kAvx2:
      return __builtin_cpu_supports("avx2") != 0;
    case ProbeIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") != 0;
  }
  return false;
}
#else
bool cpu_supports(ProbeIsa isa) noexcept { return isa == ProbeIsa::kScalar; }
#endif

ProbeIsa widest_probe_isa() noexcept {
  if (cpu_supports(ProbeIsa::kAvx512)) {
    return ProbeIsa::kAvx512;
  }
  return cpu_supports(ProbeIsa::kAvx2) ? ProbeIsa::kAvx2 : ProbeIsa::kScalar;
}

}  // namespace

bool probe_isa_supported(ProbeIsa isa) noexcept { return cpu_supports(isa); }

ProbeIsa probe_isa() noexcept {
  static const ProbeIsa isa = widest_probe_isa();
  return isa;
}

std::string_view probe_isa_name(ProbeIsa isa) noexcept {
  switch (isa) {
    case ProbeIsa::kScalar:
      return "scalar";
    case ProbeIsa::kAvx2:
      return "avx2";
    case ProbeIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

void query_layer_batch_isa(ProbeIsa isa, const std::uint64_t* words, const LayerLayout& layout,
                           std::span<const KeyHash> hashes, std::span<std::uint8_t> out,
                           bool accumulate) noexcept {
#if BLOOMSHARD_HAVE_X86
  if (isa == ProbeIsa::kAvx512 && cpu_supports(isa)) {
    query_layer_batch_avx512(words, layout, hashes, out, accumulate);
    return;
  }
  if (isa == ProbeIsa::kAvx2 && cpu_supports(isa)) {
    query_layer_batch_avx2(words, layout, hashes, out, accumulate);
    return;
  }
#endif
  ring_query(words, layout, hashes, out, accumulate, ScalarProbe{});
}

void query_layer_batch(const std::uint64_t* words, const LayerLayout& layout,
                       std::span<const KeyHash> hashes, std::span<std::uint8_t> out,
                       bool accumulate) noexcept {
  query_layer_batch_isa(probe_isa(), words, layout, hashes, out, accumulate);
}

std::size_t insert_layer_batch(std::uint64_t* words, const LayerLayout& v,
                               std::span<const KeyHash> hashes) noexcept {
  std::array<std::uint64_t*, kPrefetchDistance> ring{};
  const std::size_t n = hashes.size();
  const std::size_t head = std::min(n, kPrefetchDistance);
  for (std::size_t i = 0; i < head; ++i) {
    ring[i] = words + block_word_offset(v, hashes[i]);
    prefetch_block_for_write(ring[i]);
  }
  std::size_t changed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t* block = ring[i & kRingMask];
    if (i + kPrefetchDistance < n) {
      std::uint64_t* ahead = words + block_word_offset(v, hashes[i + kPrefetchDistance]);
      prefetch_block_for_write(ahead);
      ring[i & kRingMask] = ahead;
    }
    changed += block_add(block, probe_bits(hashes[i]), v.k) ? 1U : 0U;
  }
  return changed;
}

}  // namespace bloomshard::core
