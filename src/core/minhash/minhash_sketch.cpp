#include "core/minhash/minhash_sketch.hpp"

#include <stdexcept>

#include "core/minhash/minhash_text.hpp"

namespace bloomshard::core {
namespace {

std::uint32_t checked_values(const MinHashConfig& c) {
  const std::uint64_t values = static_cast<std::uint64_t>(c.bands) * c.rows;
  if (c.bands == 0 || c.rows == 0 || values > kMaxSignatureValues) {
    throw std::invalid_argument(
        "MinHash of " + std::to_string(c.bands) + " bands x " + std::to_string(c.rows) +
        " rows (each at least 1, product at most " + std::to_string(kMaxSignatureValues) + ")");
  }
  return static_cast<std::uint32_t>(values);
}

}  // namespace

MinHashSketcher::MinHashSketcher(const MinHashConfig& config, SignatureIsa isa)
    : config_(config),
      family_(std::make_unique<PermutationFamily>(checked_values(config))),
      builder_(*family_, isa),
      shingler_(config.shingle) {}

bool MinHashSketcher::sketch(std::string_view text, MinHashSketch& out, std::string& error,
                             std::size_t chunk) {
  normalizer_.reset(text, chunk);
  if (normalizer_.error()) {
    error = *normalizer_.error();
    return false;
  }
  shingler_.reset();
  builder_.reset();
  std::string_view piece;
  while (normalizer_.next(piece)) shingler_.feed(piece, builder_);
  shingler_.finish(builder_);

  out.shingles = shingler_.shingle_count();
  out.empty = out.shingles == 0;
  builder_.values(out.signature);
  if (out.empty) {
    out.band_keys.assign(1, empty_text_band_key());
  } else {
    out.band_keys.resize(config_.bands);
    band_keys(out.signature, config_.bands, config_.rows, out.band_keys);
  }
  return true;
}

}  // namespace bloomshard::core
