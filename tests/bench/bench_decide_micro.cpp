// Google Benchmark of the owner's decide phase as the dedup job drives it:
// one rank's TwoTierSet (half of P = 4096 slices, capacity 10M, p = 0.1%)
// deciding 5M URL-like keys of the synth corpus's shape (30% repeats) in
// batches of 24k and 48k keys (4 and 8 MiB rounds of ~175-byte records;
// measured the same here: the batch size matters to the job through its
// round buffers, not to this loop, which reads keys from one big array).
// Reports ns per decided key, the figure the speed target names (<= 80 ns). Keys
// are made and hashed before the timed loop; a fresh set per iteration.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace {

namespace core = bloomshard::core;

constexpr std::uint32_t kSlices = 4096;
constexpr std::size_t kBatchKeys = 48 * 1024;

struct OwnedKeys {
  std::string bytes;               // back to back, as in the router's receive buffer
  std::vector<core::KeyRef> refs;  // the keys this rank owns, in arrival order
};

// `total` keys of which a share `dup_rate` repeat an earlier one; only the
// keys whose slice lies in the lower half are kept (what one of two ranks
// receives).
const OwnedKeys& job_keys(std::size_t total, double dup_rate) {
  static OwnedKeys keys = [&] {
    OwnedKeys k;
    const auto unique = static_cast<std::size_t>(static_cast<double>(total) * (1.0 - dup_rate));
    std::vector<std::string> all;
    all.reserve(total);
    char buf[96];
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (std::size_t i = 0; i < total; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      if (i < unique) {
        std::snprintf(buf, sizeof buf, "https://www.example.co.uk/article/%011llx/%zu-%zu",
                      static_cast<unsigned long long>(x & 0xFFFFFFFFFFFULL), i % 8, i);
        all.emplace_back(buf);
      } else {
        all.push_back(all[x % unique]);  // a repeat of an earlier key
      }
    }
    // Interleave repeats among the originals as a corpus does (a
    // deterministic shuffle that keeps each repeat after some copy).
    for (std::size_t i = all.size() - 1; i > 0; --i)
      std::swap(all[i], all[(x = x * 6364136223846793005ULL + 1) % (i + 1)]);
    const core::SliceRange lower{0, kSlices / 2};
    std::vector<std::size_t> ends;
    for (const std::string& s : all) {
      if (!lower.contains(core::slice_of(core::hash_key(s, 0), kSlices))) continue;
      k.bytes += s;
      ends.push_back(k.bytes.size());
    }
    std::size_t begin = 0;
    for (const std::size_t end : ends) {
      const std::string_view key(k.bytes.data() + begin, end - begin);
      k.refs.push_back({core::hash_key(key, 0), key});
      begin = end;
    }
    return k;
  }();
  return keys;
}

void BM_DecideJobLike(benchmark::State& state) {
  const OwnedKeys& keys = job_keys(10'000'000, 0.3);
  const auto batch_keys = static_cast<std::size_t>(state.range(0));
  std::vector<core::Verdict> verdicts(batch_keys);
  core::ScalableBloomParams params;
  params.initial_capacity = 10'000'000;
  params.fpr_target = 0.001;
  params.num_slices = kSlices;
  std::uint64_t duplicates = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto set = std::make_unique<core::TwoTierSet>(params, core::SliceRange{0, kSlices / 2});
    state.ResumeTiming();
    const std::span<const core::KeyRef> all(keys.refs);
    for (std::size_t i = 0; i < all.size(); i += batch_keys) {
      const std::size_t n = std::min(batch_keys, all.size() - i);
      set->decide_batch(all.subspan(i, n), std::span(verdicts).first(n));
    }
    duplicates = set->counters().duplicates;
    state.PauseTiming();
    set.reset();
    state.ResumeTiming();
  }
  state.counters["keys"] = static_cast<double>(keys.refs.size());
  state.counters["duplicates"] = static_cast<double>(duplicates);
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(keys.refs.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DecideJobLike)
    ->Arg(kBatchKeys / 2)
    ->Arg(kBatchKeys)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->Repetitions(3);

}  // namespace
