// MinHash signatures over 64-bit shingle hashes (shingle.hpp). Value i of a
// signature is the minimum over the text's shingle hashes x of
//   h_i(x) = (a_i * x + b_i) mod 2^64, shifted right by 32 (its top 32 bits),
// with a_i odd and b_i from splitmix64 seeded with kMinHashFamilySeed
// (a_0, b_0, a_1, b_1, ... in draw order, a_i | 1). This is multiply-add-
// shift hashing: cheaper than a (a x + b) mod (2^61 - 1) family (one 64-bit
// multiply, which AVX-512DQ has and AVX2 builds from three 32x32 ones) and,
// over an input that XXH3 has already mixed, as good for the estimate: the
// measured error matches the binomial model (docs/near-duplicates.md).
// A text without shingles keeps every value at 0xFFFFFFFF (its rule:
// minhash_sketch.hpp). The scalar, AVX2 and AVX-512 kernels give identical
// values; the widest the CPU has is used unless one is asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/minhash/shingle.hpp"

namespace bloomshard::core {

/// splitmix64 seed of the permutation family (ASCII "minhash1", big-endian).
inline constexpr std::uint64_t kMinHashFamilySeed = 0x6d696e6861736831ULL;

/// The value of an empty signature slot (and of every slot of a text
/// without shingles).
inline constexpr std::uint32_t kEmptySignatureValue = 0xFFFFFFFFU;

/// The largest signature (bands x rows) accepted.
inline constexpr std::uint32_t kMaxSignatureValues = 4096;

/// h_i(x): the reference every kernel must match.
[[nodiscard]] constexpr std::uint32_t permuted_hash(std::uint64_t a, std::uint64_t b,
                                                    std::uint64_t x) noexcept {
  return static_cast<std::uint32_t>((a * x + b) >> 32);
}

/// The first `count` members of the family, stored padded to a multiple of
/// 16 (the padding members are real members whose values are dropped).
class PermutationFamily {
 public:
  /// Throws std::invalid_argument unless 1 <= count <= kMaxSignatureValues.
  explicit PermutationFamily(std::uint32_t count);

  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
  [[nodiscard]] std::size_t padded_count() const noexcept { return a_.size(); }
  [[nodiscard]] std::span<const std::uint64_t> multipliers() const noexcept { return a_; }
  [[nodiscard]] std::span<const std::uint64_t> offsets() const noexcept { return b_; }

 private:
  std::uint32_t count_;
  std::vector<std::uint64_t> a_;
  std::vector<std::uint64_t> b_;
};

enum class SignatureIsa : std::uint8_t { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

/// Whether this CPU runs the kernel (AVX-512 needs F and DQ).
[[nodiscard]] bool signature_isa_supported(SignatureIsa isa) noexcept;

/// The widest kernel this CPU runs (decided once).
[[nodiscard]] SignatureIsa signature_isa() noexcept;

/// "scalar", "avx2" or "avx512".
[[nodiscard]] std::string_view signature_isa_name(SignatureIsa isa) noexcept;

/// acc[i] = min(acc[i], h_i(x)) for every x in `hashes` and every i below
/// family.padded_count(). `acc` has padded_count() entries, each below
/// 2^32. An unsupported `isa` falls back to the scalar kernel.
void minhash_update(SignatureIsa isa, const PermutationFamily& family,
                    std::span<const std::uint64_t> hashes, std::uint64_t* acc) noexcept;

/// Collects a signature from shingle hashes as they come (a ShingleHasher's
/// sink): memory is the family and one accumulator, whatever the text.
class MinHashSignatureBuilder final : public ShingleHashSink {
 public:
  MinHashSignatureBuilder(const PermutationFamily& family, SignatureIsa isa = signature_isa());

  /// Starts a new signature (every value kEmptySignatureValue).
  void reset() noexcept;

  void add(std::span<const std::uint64_t> hashes) override;

  /// Writes the family.count() values into `out` (resized).
  void values(std::vector<std::uint32_t>& out) const;

 private:
  const PermutationFamily* family_;
  SignatureIsa isa_;
  std::vector<std::uint64_t> acc_;
};

}  // namespace bloomshard::core
