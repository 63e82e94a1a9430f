// The filter group: the first Bloom layer's size and false-positive target
// and the virtual slice count, fixed when a filter is created. Dedup only
// (query and merge take them from the state).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace bloomshard::app {

struct FilterOptions {
  std::optional<std::uint64_t> capacity;  ///< unset: estimated from input bytes
  double fpr = 0.001;
  std::uint32_t slices = 0;  ///< 0: core::default_num_slices(ranks, capacity)
};

/// Registers --capacity, --fpr and --slices into `pool`.
void add_filter_options(boost::program_options::options_description& pool, FilterOptions& filter);

/// The first value out of range (option named), or empty.
[[nodiscard]] std::string filter_problem(const FilterOptions& filter);

}  // namespace bloomshard::app
