#include "core/minhash/minhash_s_curve.hpp"

#include <cmath>

namespace bloomshard::core {

double band_hit_probability(double s, std::uint32_t bands, std::uint32_t rows) noexcept {
  return 1.0 - std::pow(1.0 - std::pow(s, static_cast<double>(rows)), static_cast<double>(bands));
}

double s_curve_threshold(std::uint32_t bands, std::uint32_t rows) noexcept {
  return std::pow(1.0 / static_cast<double>(bands), 1.0 / static_cast<double>(rows));
}

}  // namespace bloomshard::core
