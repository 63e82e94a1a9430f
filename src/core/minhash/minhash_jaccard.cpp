// Jaccard estimators (minhash_jaccard.hpp). Confirmations run only on band
// hits, so clarity beats speed here: values are unpacked one at a time.
#include "core/minhash/minhash_jaccard.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace bloomshard::core {
namespace {

std::uint32_t field(const BbitSignature& s, std::size_t i) noexcept {
  const std::size_t first_bit = i * s.bits;
  std::uint64_t window = 0;
  const std::size_t first_byte = first_bit / 8;
  const std::size_t bytes = (s.bits + 7) / 8 + 1;
  for (std::size_t k = 0; k < bytes && first_byte + k < s.packed.size(); ++k) {
    window |= static_cast<std::uint64_t>(s.packed[first_byte + k]) << (8 * k);
  }
  const std::uint64_t mask = s.bits == 32 ? 0xFFFFFFFFULL : ((1ULL << s.bits) - 1);
  return static_cast<std::uint32_t>((window >> (first_bit % 8)) & mask);
}

double chance_match(std::uint32_t bits) noexcept {
  return std::ldexp(1.0, -static_cast<int>(bits));
}

}  // namespace

double estimate_jaccard(std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  if (a.size() != b.size() || a.empty()) {
    throw std::invalid_argument("estimate_jaccard: signatures of " + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + " values");
  }
  std::size_t equal = 0;
  for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i] ? 1U : 0U;
  return static_cast<double>(equal) / static_cast<double>(a.size());
}

bool valid_confirm_bits(std::uint32_t bits) noexcept {
  return bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32;
}

BbitSignature pack_bbit(std::span<const std::uint32_t> signature, std::uint32_t bits) {
  if (!valid_confirm_bits(bits)) {
    throw std::invalid_argument("confirmation bits " + std::to_string(bits) +
                                " (expected 1, 2, 4, 8, 16 or 32)");
  }
  BbitSignature s;
  s.bits = bits;
  s.count = static_cast<std::uint32_t>(signature.size());
  s.packed.assign(bbit_bytes(static_cast<std::uint32_t>(signature.size()), bits), 0);
  const std::uint64_t mask = bits == 32 ? 0xFFFFFFFFULL : ((1ULL << bits) - 1);
  for (std::size_t i = 0; i < signature.size(); ++i) {
    const std::uint64_t v = signature[i] & mask;
    const std::size_t bit = i * bits;
    // bits divides 8 or is a multiple of 8, so a field never straddles a
    // byte it does not fill.
    for (std::size_t k = 0; k < (bits + 7) / 8; ++k) {
      s.packed[bit / 8 + k] |= static_cast<std::uint8_t>((v >> (8 * k)) << (bit % 8));
    }
  }
  return s;
}

double bbit_match_fraction(const BbitSignature& a, const BbitSignature& b) {
  if (a.bits != b.bits || a.count != b.count || a.count == 0) {
    throw std::invalid_argument("b-bit signatures differ: " + std::to_string(a.count) + " x " +
                                std::to_string(a.bits) + " bits vs " + std::to_string(b.count) +
                                " x " + std::to_string(b.bits) + " bits");
  }
  std::size_t equal = 0;
  for (std::size_t i = 0; i < a.count; ++i) equal += field(a, i) == field(b, i) ? 1U : 0U;
  return static_cast<double>(equal) / static_cast<double>(a.count);
}

double estimate_jaccard_bbit(const BbitSignature& a, const BbitSignature& b) {
  const double p = bbit_match_fraction(a, b);
  const double c = chance_match(a.bits);
  return (p - c) / (1.0 - c);
}

std::size_t bbit_bytes(std::uint32_t values, std::uint32_t bits) noexcept {
  return (static_cast<std::size_t>(values) * bits + 7) / 8;
}

std::uint64_t minhash_tier2_payload_per_record(std::uint32_t bands, std::uint32_t rows,
                                               std::uint32_t confirm_bits) noexcept {
  constexpr std::uint64_t kBandKeyBytes = 16;
  const std::uint64_t confirm = confirm_bits == 0 ? 0 : bbit_bytes(bands * rows, confirm_bits);
  return static_cast<std::uint64_t>(bands) * (kBandKeyBytes + confirm);
}

double jaccard_estimate_sigma(double jaccard, std::uint32_t values, std::uint32_t bits) noexcept {
  const double c = chance_match(bits);
  const double p = c + (1.0 - c) * jaccard;
  return std::sqrt(p * (1.0 - p) / static_cast<double>(values)) / (1.0 - c);
}

}  // namespace bloomshard::core
