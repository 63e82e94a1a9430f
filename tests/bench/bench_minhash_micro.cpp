// Google Benchmark micro benchmarks of the near-duplicate sketch: the
// signature kernel alone per ISA (ns per shingle for 14x8 and 20x13), and
// whole texts (normalize + shingle + signature + band keys) per ISA and
// shingle kind, in bytes of input per second on one core; and the signature
// step alone over a real text's shingles (MB/s of that text, shingles/s).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/minhash/minhash_sketch.hpp"

namespace {

namespace core = bloomshard::core;

core::SignatureIsa isa_of(const benchmark::State& state) {
  return static_cast<core::SignatureIsa>(state.range(0));
}

bool skip_unsupported(benchmark::State& state) {
  if (core::signature_isa_supported(isa_of(state))) return false;
  state.SkipWithError("ISA not on this CPU");
  return true;
}

void BM_SignatureKernel(benchmark::State& state) {
  if (skip_unsupported(state)) return;
  const core::PermutationFamily family(static_cast<std::uint32_t>(state.range(1)));
  std::vector<std::uint64_t> hashes(core::kShingleBatch);
  std::mt19937_64 rng(1);
  for (auto& h : hashes) h = rng();
  core::MinHashSignatureBuilder builder(family, isa_of(state));
  for (auto _ : state) {
    builder.add(hashes);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(hashes.size()));
  state.SetLabel(std::string(core::signature_isa_name(isa_of(state))) + " " +
                 std::to_string(state.range(1)) + " values");
}
BENCHMARK(BM_SignatureKernel)->ArgsProduct({{0, 1, 2}, {112, 260}});

// About 1 MB of English-like ASCII text with some accented words.
std::string make_text() {
  static const char* const words[] = {
      "the", "of",   "and",   "to",   "in",        "is",        "for",        "that",    "with",
      "as",  "data", "model", "near", "duplicate", "caf\u00e9", "na\u00efve", "Record,", "filter."};
  std::mt19937_64 rng(7);
  std::string text;
  while (text.size() < (1U << 20)) {
    text += words[rng() % std::size(words)];
    text += (rng() % 12 == 0) ? "\n" : " ";
  }
  return text;
}

void BM_SketchText(benchmark::State& state) {
  if (skip_unsupported(state)) return;
  const std::string text = make_text();
  const core::ShingleSpec spec{static_cast<core::ShingleKind>(state.range(1)), 5};
  core::MinHashSketcher sketcher({spec, 14, 8}, isa_of(state));
  core::MinHashSketch out;
  std::string error;
  for (auto _ : state) {
    if (!sketcher.sketch(text, out, error)) state.SkipWithError(error.c_str());
    benchmark::DoNotOptimize(out.band_keys.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(out.shingles));
  state.SetLabel(std::string(core::signature_isa_name(isa_of(state))) + " " +
                 core::shingle_spec_name(spec) + " 14x8");
}
BENCHMARK(BM_SketchText)->ArgsProduct({{0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);

// The signature step alone over a real text: the text's word:5 shingle
// hashes computed once, then only the kernel timed over all of them, so
// the rates read as MB/s of text and shingles/s for that step.
void BM_SignatureOfText(benchmark::State& state) {
  if (skip_unsupported(state)) return;
  const std::string text = make_text();
  const std::string normalized = core::normalize_minhash_text(text).value();
  const std::vector<std::uint64_t> hashes = core::shingle_hashes({}, normalized);
  const core::PermutationFamily family(112);
  core::MinHashSignatureBuilder builder(family, isa_of(state));
  for (auto _ : state) {
    builder.reset();
    for (std::size_t i = 0; i < hashes.size(); i += core::kShingleBatch) {
      builder.add(std::span<const std::uint64_t>(hashes).subspan(
          i, std::min(core::kShingleBatch, hashes.size() - i)));
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(hashes.size()));
  state.SetLabel(std::string(core::signature_isa_name(isa_of(state))) + " word:5 14x8, " +
                 std::to_string(hashes.size()) + " shingles of " + std::to_string(text.size()) +
                 " bytes");
}
BENCHMARK(BM_SignatureOfText)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
