// `bloomshard bench filter`: measures the tier-1 Bloom filter against the
// machine's memory floor (a prefetched random cache-line read over a buffer
// of the filter's size), plus bits per key and the measured FPR.
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// Runs the benchmark with `args` (the words after `bench filter`):
///   --keys N (default 1000000) --fpr P (default 0.001) --repeat R (3)
///   --slices S (4096) --json
/// Prints a table, or one JSON object with --json, to stdout. Returns an exit
/// code (exit_codes.hpp). Needs ~ 2 * N * 16 bytes of hashes plus twice the
/// filter's size (filter + floor buffer): ~1.8 GB at N = 50M, p = 0.1%.
int run_bench_filter(const std::vector<std::string>& args);

}  // namespace bloomshard::app
