// Band keys (minhash_band_key.hpp). The hashed bytes are built in a small
// stack buffer: R is at most kMaxSignatureValues, and a band key is cut
// from one band, so 8 + 4R bytes.
#include "core/minhash/minhash_band_key.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bloomshard::core {
namespace {

void put_u32_le(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

BandKey digest(const std::uint8_t* bytes, std::size_t size) noexcept {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes, size));
  BandKey key{};
  std::memcpy(key.data(), canonical.digest, key.size());
  return key;
}

constexpr std::size_t kStackValues = 64;

}  // namespace

BandKey band_key(std::uint32_t band, std::span<const std::uint32_t> values) {
  std::uint8_t stack[8 + 4 * kStackValues];
  std::vector<std::uint8_t> heap;
  std::uint8_t* bytes = stack;
  const std::size_t size = 8 + 4 * values.size();
  if (values.size() > kStackValues) {
    heap.resize(size);  // R above 64: beyond every documented setting
    bytes = heap.data();
  }
  put_u32_le(bytes, kMinHashSchemeVersion);
  put_u32_le(bytes + 4, band);
  for (std::size_t i = 0; i < values.size(); ++i) put_u32_le(bytes + 8 + 4 * i, values[i]);
  return digest(bytes, size);
}

void band_keys(std::span<const std::uint32_t> signature, std::uint32_t bands, std::uint32_t rows,
               std::span<BandKey> out) {
  if (signature.size() != static_cast<std::size_t>(bands) * rows || out.size() != bands) {
    throw std::invalid_argument("band_keys: signature of " + std::to_string(signature.size()) +
                                " values and " + std::to_string(out.size()) + " keys for " +
                                std::to_string(bands) + " bands x " + std::to_string(rows) +
                                " rows");
  }
  for (std::uint32_t j = 0; j < bands; ++j) {
    out[j] = band_key(j, signature.subspan(static_cast<std::size_t>(j) * rows, rows));
  }
}

BandKey empty_text_band_key() noexcept {
  std::uint8_t bytes[8];
  put_u32_le(bytes, kMinHashSchemeVersion);
  put_u32_le(bytes + 4, kEmptyTextBand);
  return digest(bytes, sizeof bytes);
}

}  // namespace bloomshard::core
