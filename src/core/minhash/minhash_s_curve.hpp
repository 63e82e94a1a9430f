// The banding S-curve: with B bands of R rows, two texts of Jaccard
// similarity s share at least one band key with probability
//   1 - (1 - s^R)^B,
// which rises steeply around s ~ (1/B)^(1/R). For `plan` and the docs.
#pragma once

#include <cstdint>

namespace bloomshard::core {

/// Probability that two texts of similarity `s` (0..1) share a band key.
[[nodiscard]] double band_hit_probability(double s, std::uint32_t bands,
                                          std::uint32_t rows) noexcept;

/// (1/B)^(1/R): the similarity near the curve's steepest point.
[[nodiscard]] double s_curve_threshold(std::uint32_t bands, std::uint32_t rows) noexcept;

}  // namespace bloomshard::core
