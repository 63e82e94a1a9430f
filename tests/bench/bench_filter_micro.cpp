// Google Benchmark micro benchmarks of the tier-1 kernel: the single-block
// probe and add, and the batched (prefetched) query per probe ISA, in cache
// and out of cache, next to the floor of a prefetched random line read.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/key_hash.hpp"

namespace {

using bloomshard::core::BlockWords;
using bloomshard::core::KeyHash;
using bloomshard::core::LayerLayout;
namespace core = bloomshard::core;

std::vector<KeyHash> make_hashes(std::uint64_t seed, std::size_t n) {
  std::vector<KeyHash> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = core::hash_key(std::to_string(i), seed);
  }
  return out;
}

// A flat filter at p = 0.1% filled with `keys` keys.
struct Filter {
  LayerLayout layout;
  BlockWords words;
  explicit Filter(std::size_t keys) {
    const core::BloomGeometryChoice g = core::choose_geometry(0.001);
    const auto blocks = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(keys) * g.bits_per_key / core::kBlockBits));
    layout = LayerLayout{blocks, 1, 0, 0, g.k};
    words.assign(blocks * core::kBlockWords, 0);
    core::insert_layer_batch(words.data(), layout, make_hashes(1, keys));
  }
};

void BM_BlockProbe(benchmark::State& state) {
  alignas(64) std::uint64_t block[core::kBlockWords];
  std::fill(std::begin(block), std::end(block), 0xF0F0F0F0F0F0F0F0ULL);
  std::uint32_t bits = 12345;
  for (auto _ : state) {
    bits = bits * 0x9E3779B9U + 1U;
    benchmark::DoNotOptimize(core::block_probe(block, bits, 9));
  }
}
BENCHMARK(BM_BlockProbe);

void BM_BlockAdd(benchmark::State& state) {
  alignas(64) std::uint64_t block[core::kBlockWords] = {};
  std::uint32_t bits = 12345;
  for (auto _ : state) {
    bits = bits * 0x9E3779B9U + 1U;
    benchmark::DoNotOptimize(core::block_add(block, bits, 9));
  }
}
BENCHMARK(BM_BlockAdd);

// Arg 0: keys in the filter; arg 1: ProbeIsa. Items = queried keys.
void BM_QueryBatch(benchmark::State& state) {
  const auto keys = static_cast<std::size_t>(state.range(0));
  const auto isa = static_cast<core::ProbeIsa>(state.range(1));
  if (!core::probe_isa_supported(isa)) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  const Filter f(keys);
  const std::vector<KeyHash> probes = make_hashes(2, keys);
  std::vector<std::uint8_t> out(keys);
  for (auto _ : state) {
    core::query_layer_batch_isa(isa, f.words.data(), f.layout, probes, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys));
  state.SetLabel(std::string(core::probe_isa_name(isa)));
}
BENCHMARK(BM_QueryBatch)
    ->ArgsProduct({{1 << 14, 1 << 23}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond);

void BM_InsertBatch(benchmark::State& state) {
  const auto keys = static_cast<std::size_t>(state.range(0));
  const core::BloomGeometryChoice g = core::choose_geometry(0.001);
  const auto blocks = static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(keys) * g.bits_per_key / core::kBlockBits));
  const LayerLayout layout{blocks, 1, 0, 0, g.k};
  BlockWords words(blocks * core::kBlockWords, 0);
  const std::vector<KeyHash> hashes = make_hashes(3, keys);
  for (auto _ : state) {
    benchmark::DoNotOptimize(core::insert_layer_batch(words.data(), layout, hashes));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys));
}
BENCHMARK(BM_InsertBatch)->Arg(1 << 14)->Arg(1 << 23)->Unit(benchmark::kMillisecond);

// The floor: one word of a random line per key, same prefetch distance.
void BM_Floor(benchmark::State& state) {
  const auto keys = static_cast<std::size_t>(state.range(0));
  const Filter f(keys);
  const std::vector<KeyHash> probes = make_hashes(2, keys);
  const std::uint64_t lines = f.words.size() / core::kBlockWords;
  const std::uint64_t* base = f.words.data();
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < keys; ++i) {
      if (i + core::kPrefetchDistance < keys) {
        core::prefetch_block(base +
                             core::fastrange64(probes[i + core::kPrefetchDistance].lo, lines) * 8);
      }
      sum += base[core::fastrange64(probes[i].lo, lines) * 8];
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(keys));
}
BENCHMARK(BM_Floor)->Arg(1 << 14)->Arg(1 << 23)->Unit(benchmark::kMillisecond);

}  // namespace
