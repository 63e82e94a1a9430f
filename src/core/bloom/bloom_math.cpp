#include "bloomshard/core/bloom_math.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "bloomshard/core/bloom_kernel.hpp"

namespace bloomshard::core {
namespace {

void check_probes(std::uint32_t k) {
  if (k < kMinProbes || k > kMaxProbes) {
    throw std::invalid_argument("probe count k = " + std::to_string(k) + " outside [1, 16]");
  }
}

// Grid points are integers n (bits per key = n * 0.01) so the search is
// exact and the chosen value prints without rounding noise.
double grid_bits(std::int64_t n) { return static_cast<double>(n) / 100.0; }

}  // namespace

double classic_bits_per_key(double p) {
  if (!(p > 0.0 && p < 1.0)) {
    throw std::invalid_argument("FPR " + std::to_string(p) + " outside (0, 1)");
  }
  const double ln2 = std::log(2.0);
  return -std::log(p) / (ln2 * ln2);
}

double blocked_fpr(double bits_per_key, std::uint32_t k) {
  check_probes(k);
  if (!(bits_per_key > 0.0) || !std::isfinite(bits_per_key)) {
    throw std::invalid_argument("bits per key " + std::to_string(bits_per_key) +
                                " must be positive and finite");
  }
  const double lambda = static_cast<double>(kBlockBits) / bits_per_key;
  const double log_lambda = std::log(lambda);
  // ln(1 - 1/512): the chance one throw misses a given bit, in log form.
  const double log_miss = std::log1p(-1.0 / static_cast<double>(kBlockBits));
  // Terms beyond lambda + 12 sd (+40 for small lambda) are < 1e-30.
  const auto last = static_cast<std::int64_t>(lambda + 12.0 * std::sqrt(lambda) + 40.0);
  double log_pois = -lambda;  // ln Pois(0); advanced by ln(lambda / j)
  double sum = 0.0;
  for (std::int64_t j = 0; j <= last; ++j) {
    if (j > 0) {
      log_pois += log_lambda - std::log(static_cast<double>(j));
    }
    const double throws = static_cast<double>(j) * static_cast<double>(k);
    const double fill = -std::expm1(throws * log_miss);
    sum += std::exp(log_pois) * std::pow(fill, static_cast<double>(k));
  }
  return sum;
}

namespace {
BloomGeometryChoice search_geometry(double p) {
  if (!(p > 0.0 && p <= 0.5)) {
    throw std::invalid_argument("FPR target " + std::to_string(p) + " outside (0, 0.5]");
  }
  const double goal = kFprModelMargin * p;
  const auto max_n = static_cast<std::int64_t>(std::llround(kMaxBitsPerKey * 100.0));
  BloomGeometryChoice best;
  std::int64_t best_n = std::numeric_limits<std::int64_t>::max();
  for (std::uint32_t k = kMinProbes; k <= kMaxProbes; ++k) {
    if (blocked_fpr(grid_bits(max_n), k) > goal) {
      continue;  // this k cannot reach p within the bits-per-key limit
    }
    // The model FPR falls as bits per key grow (fixed k): binary search for
    // the first grid point that meets the goal.
    std::int64_t lo = 1;
    std::int64_t hi = max_n;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (blocked_fpr(grid_bits(mid), k) <= goal) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (lo < best_n) {
      best_n = lo;
      best = {grid_bits(lo), k};
    }
  }
  if (best.k == 0) {
    // Shortest round-trip text: std::to_string's fixed 6 decimals would print
    // every target this refuses (below ~1e-20) as 0.000000.
    const auto text = [](double v) {
      char buf[32];
      return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    };
    throw std::invalid_argument("FPR target " + text(p) + " needs more than " +
                                text(kMaxBitsPerKey) + " bits per key");
  }
  return best;
}
}  // namespace

BloomGeometryChoice choose_geometry(double p) {
  // The search costs 1-3 ms (about 10^5 pow() calls) and a job asks for the
  // same few targets dozens of times (sizing plan, layers, metrics): about
  // 0.1 s of a 4 s job before the answers were remembered. Targets are few
  // (one per layer), so the cache stays tiny.
  if (!(p > 0.0 && p <= 0.5)) return search_geometry(p);  // throws; a NaN must not reach the map
  static std::mutex mutex;
  static std::map<double, BloomGeometryChoice> known;
  {
    std::lock_guard lock(mutex);
    if (const auto it = known.find(p); it != known.end()) return it->second;
  }
  const BloomGeometryChoice choice = search_geometry(p);
  std::lock_guard lock(mutex);
  known.emplace(p, choice);
  return choice;
}

double expected_fpr_from_fill(double fill, std::uint32_t k) {
  check_probes(k);
  if (!(fill >= 0.0 && fill <= 1.0)) {
    throw std::invalid_argument("fill " + std::to_string(fill) + " outside [0, 1]");
  }
  return std::pow(fill, static_cast<double>(k));
}

double fpr_from_block_words(std::span<const std::uint64_t> words, std::uint32_t k) {
  check_probes(k);
  if (words.size() % kBlockWords != 0) {
    throw std::invalid_argument("word count " + std::to_string(words.size()) +
                                " is not a whole number of 8-word blocks");
  }
  const std::size_t blocks = words.size() / kBlockWords;
  if (blocks == 0) {
    return 0.0;
  }
  // A block's FPR depends only on its popcount: tabulate the 513 values.
  std::array<double, kBlockBits + 1> by_count{};
  for (std::size_t c = 0; c <= kBlockBits; ++c) {
    by_count[c] =
        std::pow(static_cast<double>(c) / static_cast<double>(kBlockBits), static_cast<double>(k));
  }
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::size_t count = 0;
    for (std::size_t w = 0; w < kBlockWords; ++w) {
      count += static_cast<std::size_t>(std::popcount(words[b * kBlockWords + w]));
    }
    sum += by_count[count];
  }
  return sum / static_cast<double>(blocks);
}

std::uint64_t count_set_bits(std::span<const std::uint64_t> words) noexcept {
  std::uint64_t n = 0;
  for (const std::uint64_t w : words) {
    n += static_cast<std::uint64_t>(std::popcount(w));
  }
  return n;
}

double cardinality_from_fill(std::uint64_t set_bits, std::uint64_t total_bits, std::uint32_t k) {
  check_probes(k);
  if (set_bits > total_bits) {
    throw std::invalid_argument("set bits exceed total bits");
  }
  if (total_bits == 0) {
    return 0.0;
  }
  if (set_bits == total_bits) {
    return std::numeric_limits<double>::infinity();
  }
  const auto m = static_cast<double>(total_bits);
  const auto x = static_cast<double>(set_bits);
  return -(m / static_cast<double>(k)) * std::log1p(-x / m);
}

}  // namespace bloomshard::core
