// Tier-1 Bloom kernel (FastLocalBloom style, after RocksDB util/bloom_impl.h):
// every key lives in ONE 512-bit block (8 x uint64, one 64-byte cache line)
// and sets or tests k bits inside it, so a query costs one cache miss. Pure,
// allocation-free inline functions over raw words; the FPR math is in
// bloom_math.hpp, the layering over slices in scalable_bloom.hpp.
//
// Saved layout "block512-k/v1" (kBloomLayoutVersion 1; changing anything
// below changes every checkpoint's bits, so bump the version):
//   - block of a key in a layer holding B blocks per slice:
//       (slice - first_owned_slice) * B + fastrange64(layer_block_hash(lo, i), B)
//     with slice = fastrange64(hi, P) (slice_map.hpp) and i the layer index;
//   - bit j (j < k) of the key inside its block:
//       (uint32(probe_bits(h) * kProbeSalts[j])) >> 23   (9 bits: 0..511)
//     bit b lives in word b >> 6 of the block, at bit position b & 63.
// The k bit positions come from independent multiplies of the same 32 probe
// bits: they run in parallel (a serial multiply chain was measured as the
// bottleneck at ~17 ns/query), and they are the TOP of the LOW 32 bits of
// each product (the top of a 64-bit product of two 32-bit values is biased:
// a 38% FPR was measured). Two probes of one key may hit the same bit; the
// FPR model (bloom_math) treats probes as drawn with replacement, which
// matches.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "bloomshard/core/fastrange.hpp"
#include "bloomshard/core/huge_page_allocator.hpp"
#include "bloomshard/core/key_hash.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bloomshard::core {

/// Version and name of the bit layout above, stored in every checkpoint.
inline constexpr std::uint32_t kBloomLayoutVersion = 1;
inline constexpr std::string_view kBloomLayoutName = "block512-k/v1";

inline constexpr std::size_t kBlockBits = 512;
inline constexpr std::size_t kBlockWords = kBlockBits / 64;  ///< 8 words per block
inline constexpr std::size_t kBlockBytes = kBlockBits / 8;   ///< one cache line
/// Probes per key: k in [kMinProbes, kMaxProbes].
inline constexpr std::uint32_t kMinProbes = 1;
inline constexpr std::uint32_t kMaxProbes = 16;
/// How many keys ahead the batch paths prefetch: enough lines in flight to
/// cover ~250 ns of DRAM latency at ~10 ns per key. 32 measured better than
/// 16 and 64 at 50M keys (docs/performance.md). A power of two.
inline constexpr std::size_t kPrefetchDistance = 32;

/// One fixed odd salt per probe (part of layout v1; never change).
inline constexpr std::array<std::uint32_t, kMaxProbes> kProbeSalts = {
    0x453daa45U, 0xa01649afU, 0xcad7d321U, 0x9bffc3f3U, 0x47934bcbU, 0xa37990f5U,
    0x1aa5dc15U, 0xd261a485U, 0x18d6e89bU, 0x95138ce3U, 0x6b66a1dbU, 0x5223865bU,
    0x5dccd6d9U, 0xf396d327U, 0x95855c2dU, 0x0caa3f5dU};

/// Bit (0..511) of probe `i` (< kMaxProbes) inside the block.
[[nodiscard]] constexpr std::uint32_t probe_bit(std::uint32_t probe_bits,
                                                std::uint32_t i) noexcept {
  return (probe_bits * kProbeSalts[i]) >> 23;
}

/// The 64-bit value whose top bits pick the block of layer `layer`. Layer 0
/// uses lo as is; later layers remix it with one xor, one xor-shift and one
/// odd multiply (a bijection per layer), so two keys sharing a block in one
/// layer do not share a block in the next.
[[nodiscard]] constexpr std::uint64_t layer_block_hash(std::uint64_t lo,
                                                       std::uint32_t layer) noexcept {
  if (layer == 0) {
    return lo;
  }
  std::uint64_t x = lo ^ (std::uint64_t{layer} * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 32;
  return x * 0xD6E8FEB86659FD93ULL;
}

/// Hints the CPU to fetch the block's cache line; never changes results.
inline void prefetch_block(const std::uint64_t* block) noexcept { __builtin_prefetch(block, 0, 3); }
/// Same, announcing a write (insert paths).
inline void prefetch_block_for_write(std::uint64_t* block) noexcept {
  __builtin_prefetch(block, 1, 3);
}

/// Sets the key's k bits (k in [1, 16]) in `block` (8 words). Returns true
/// if any bit was newly set.
inline bool block_add(std::uint64_t* block, std::uint32_t probe_bits, std::uint32_t k) noexcept {
  std::uint64_t fresh = 0;
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = probe_bit(probe_bits, i);
    const std::uint64_t mask = std::uint64_t{1} << (b & 63U);
    fresh |= ~block[b >> 6] & mask;
    block[b >> 6] |= mask;
  }
  return fresh != 0;
}

/// True if all k bits of the key are set in `block` ("maybe present").
/// Branch-free over the probes: the outcome of a probe is data-dependent
/// and unpredictable, a branch per probe would mispredict often.
[[nodiscard]] inline bool block_probe(const std::uint64_t* block, std::uint32_t probe_bits,
                                      std::uint32_t k) noexcept {
  std::uint64_t acc = 1;
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t b = probe_bit(probe_bits, i);
    acc &= block[b >> 6] >> (b & 63U);
  }
  return (acc & 1U) != 0;
}

/// The key's k bits as a mask over the 8 words of a block (the same bits
/// block_add sets), so that a probe is 8 word tests and an insert 8 word
/// ORs, and the probe and the insert of one key share the bit arithmetic
/// (the two-tier decision probes, then inserts, nearly every key).
struct BlockMask {
  std::array<std::uint64_t, kBlockWords> words{};
};

/// The mask of the key's K probe bits, unrolled (K is a constant here: a
/// loop over a run-time k compiled to ~3x the instructions).
template <std::uint32_t K>
[[nodiscard]] inline BlockMask block_mask_k(std::uint32_t probe_bits) noexcept {
  BlockMask m;
  [&]<std::uint32_t... I>(std::integer_sequence<std::uint32_t, I...>) {
    ((m.words[probe_bit(probe_bits, I) >> 6] |= std::uint64_t{1}
                                                << (probe_bit(probe_bits, I) & 63U)),
     ...);
  }
  (std::make_integer_sequence<std::uint32_t, K>{});
  return m;
}

/// The mask of the key's k (in [1, 16]) probe bits.
[[nodiscard]] inline BlockMask block_mask(std::uint32_t probe_bits, std::uint32_t k) noexcept {
  switch (k) {
    case 1:
      return block_mask_k<1>(probe_bits);
    case 2:
      return block_mask_k<2>(probe_bits);
    case 3:
      return block_mask_k<3>(probe_bits);
    case 4:
      return block_mask_k<4>(probe_bits);
    case 5:
      return block_mask_k<5>(probe_bits);
    case 6:
      return block_mask_k<6>(probe_bits);
    case 7:
      return block_mask_k<7>(probe_bits);
    case 8:
      return block_mask_k<8>(probe_bits);
    case 9:
      return block_mask_k<9>(probe_bits);
    case 10:
      return block_mask_k<10>(probe_bits);
    case 11:
      return block_mask_k<11>(probe_bits);
    case 12:
      return block_mask_k<12>(probe_bits);
    case 13:
      return block_mask_k<13>(probe_bits);
    case 14:
      return block_mask_k<14>(probe_bits);
    case 15:
      return block_mask_k<15>(probe_bits);
    default:
      return block_mask_k<16>(probe_bits);
  }
}

/// True if every bit of `m` is set in `block` (block_probe's answer).
[[nodiscard]] inline bool block_has(const std::uint64_t* block, const BlockMask& m) noexcept {
#if defined(__SSE2__)
  __m128i missing = _mm_setzero_si128();
  for (std::size_t w = 0; w < kBlockWords; w += 2) {
    const __m128i want = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m.words.data() + w));
    const __m128i have = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + w));
    missing = _mm_or_si128(missing, _mm_andnot_si128(have, want));
  }
  return _mm_movemask_epi8(_mm_cmpeq_epi8(missing, _mm_setzero_si128())) == 0xFFFF;
#else
  std::uint64_t missing = 0;
  for (std::size_t w = 0; w < kBlockWords; ++w) missing |= m.words[w] & ~block[w];
  return missing == 0;
#endif
}

/// Sets the bits of `m` in `block`; true if any was newly set (block_add's answer).
inline bool block_set(std::uint64_t* block, const BlockMask& m) noexcept {
#if defined(__SSE2__)
  __m128i fresh = _mm_setzero_si128();
  for (std::size_t w = 0; w < kBlockWords; w += 2) {
    const __m128i want = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m.words.data() + w));
    auto* at = reinterpret_cast<__m128i*>(block + w);
    const __m128i have = _mm_loadu_si128(at);
    fresh = _mm_or_si128(fresh, _mm_andnot_si128(have, want));
    _mm_storeu_si128(at, _mm_or_si128(have, want));
  }
  return _mm_movemask_epi8(_mm_cmpeq_epi8(fresh, _mm_setzero_si128())) != 0xFFFF;
#else
  std::uint64_t fresh = 0;
  for (std::size_t w = 0; w < kBlockWords; ++w) {
    fresh |= m.words[w] & ~block[w];
    block[w] |= m.words[w];
  }
  return fresh != 0;
#endif
}

/// Where a layer's keys go: the blocks of the owned slices [first_slice,
/// first_slice + owned count) of a filter of num_slices slices,
/// blocks_per_slice each; `layer` picks the remix, k the probes. A flat
/// filter (no slices) is num_slices = 1.
struct LayerLayout {
  std::uint64_t blocks_per_slice = 1;
  std::uint32_t num_slices = 1;
  std::uint32_t first_slice = 0;
  std::uint32_t layer = 0;
  std::uint32_t k = 1;
};

/// Word offset of the key's block in the layer's words (layout v1, see the
/// top of this file). The key's slice must be one the layout holds.
[[nodiscard]] inline std::uint64_t block_word_offset(const LayerLayout& l,
                                                     const KeyHash& h) noexcept {
  const std::uint64_t slice = fastrange64(h.hi, l.num_slices) - l.first_slice;
  const std::uint64_t bps = l.blocks_per_slice;
  return (slice * bps + fastrange64(layer_block_hash(h.lo, l.layer), bps)) * kBlockWords;
}

/// Batched query of one layer's `words`: each block is located once,
/// prefetched kPrefetchDistance keys ahead and probed when its turn comes.
/// Writes out[i] = 1 (maybe) or 0, or with `accumulate` ORs the answer into
/// out[i] (one pass per layer gives the any-layer answer). Uses the
/// widest probe the CPU has (ProbeIsa; the tests check every one against
/// block_probe).
/// Requires out.size() >= hashes.size() and every key's slice held.
void query_layer_batch(const std::uint64_t* words, const LayerLayout& layout,
                       std::span<const KeyHash> hashes, std::span<std::uint8_t> out,
                       bool accumulate = false) noexcept;

/// Batched insert into one layer's `words` with the same prefetching.
/// Returns how many keys set at least one new bit.
std::size_t insert_layer_batch(std::uint64_t* words, const LayerLayout& layout,
                               std::span<const KeyHash> hashes) noexcept;

/// Instruction sets of the batch probe. All give identical answers.
enum class ProbeIsa : std::uint8_t { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

/// True if this CPU (and build) can run `isa`.
[[nodiscard]] bool probe_isa_supported(ProbeIsa isa) noexcept;
/// The ISA query_layer_batch uses: the widest supported one.
[[nodiscard]] ProbeIsa probe_isa() noexcept;
/// "scalar", "avx2" or "avx512".
[[nodiscard]] std::string_view probe_isa_name(ProbeIsa isa) noexcept;

/// query_layer_batch forced to one ISA (for tests and benches); an
/// unsupported ISA falls back to scalar.
void query_layer_batch_isa(ProbeIsa isa, const std::uint64_t* words, const LayerLayout& layout,
                           std::span<const KeyHash> hashes, std::span<std::uint8_t> out,
                           bool accumulate = false) noexcept;

/// Word storage of Bloom blocks (zero-initialized by the vector): 64-byte
/// aligned, so every 512-bit block is exactly one cache line (a misaligned
/// block would cost two misses), and on huge pages from 4 MiB on: random
/// block reads over a large filter otherwise miss the TLB on nearly every
/// key, which measured ~2x slower at 50M keys.
using BlockWords = std::vector<std::uint64_t, HugePageAllocator<std::uint64_t>>;

}  // namespace bloomshard::core
