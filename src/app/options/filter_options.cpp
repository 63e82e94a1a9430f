#include "app/options/filter_options.hpp"

#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

void add_filter_options(po::options_description& pool, FilterOptions& f) {
  // clang-format off
  pool.add_options()
    // Set only when given: unset means "estimate it".
    ("capacity",
     po::value<std::uint64_t>()->notifier([&f](std::uint64_t given) { f.capacity = given; }),
     "expected distinct keys (first layer); the filter grows by layers past it. "
     "Default: estimated from the input bytes")
    ("fpr", po::value(&f.fpr)->default_value(f.fpr), "compound Bloom false-positive target")
    ("slices", po::value(&f.slices)->default_value(f.slices),
     "virtual slices P, fixed for the filter's life, >= ranks (0: a power of two >= 4096, "
     "128 x ranks and capacity/65536)");
  // clang-format on
}

std::string filter_problem(const FilterOptions& f) {
  if (!(f.fpr > 0.0 && f.fpr <= 0.5)) return "--fpr must be in (0, 0.5]";
  if (f.slices > core::kMaxSlices) {
    return "--slices must be 0 (automatic) or in [1, " + std::to_string(core::kMaxSlices) + "]";
  }
  if (f.capacity && *f.capacity == 0) return "--capacity must be >= 1";
  return {};
}

}  // namespace bloomshard::app
