// The header checks against this build and the stored keys
// (store/key_sample.hpp, docs/coverage.md): a layer whose stored geometry
// is not the one the root attributes give, a window attribute that does
// not parse, a normalization of another policy or Unicode version, and a
// sampled key that the seed, the slice count, the Bloom layers or the
// normalization do not reproduce are each named with the attribute; a
// consistent header gives "". The expected geometry comes from core's
// layer_geometry, the expected hashes from core's hash_key.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/header.hpp"
#include "bloomshard/store/key_sample.hpp"
#include "core/window/slot_window.hpp"

// Its own namespace: its helpers share names with sample_generation.hpp's users (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::store::key_sample_coverage_tests {
namespace {

constexpr std::uint32_t kSlices = 4;
constexpr std::uint64_t kSeed = 42;

CheckpointHeader header() {
  CheckpointHeader h;
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.hash_seed = kSeed;
  h.normalization = "nfc-casefold/v2 unicode " + std::string(core::normalization_unicode_version());
  h.key_encoding = "bytes";
  h.params.num_slices = kSlices;
  h.params.initial_capacity = 1000;
  h.params.fpr_target = 0.01;
  return h;
}

// The layers this build computes for `h` (no window), `n` of them.
std::vector<CheckpointLayerInfo> computed_layers(const CheckpointHeader& h, std::uint32_t n) {
  std::vector<CheckpointLayerInfo> layers(n);
  for (std::uint32_t l = 0; l < n; ++l) layers[l].geometry = core::layer_geometry(h.params, l);
  return layers;
}

TEST(StoreCoverageKeySample, EachStoredLayerGeometryFieldMustBeTheComputedOne) {
  const CheckpointHeader h = header();
  std::vector<CheckpointLayerInfo> layers = computed_layers(h, 3);
  EXPECT_EQ(layer_geometry_problem(h, layers), "");
  const std::string layer_1 = "/bloom/layer_1 attributes (capacity ";
  for (int field = 0; field < 4; ++field) {
    std::vector<CheckpointLayerInfo> damaged = layers;
    core::BloomLayerGeometry& g = damaged[1].geometry;
    if (field == 0) g.capacity += 1;
    if (field == 1) g.k += 1;
    if (field == 2) g.blocks_per_slice += 1;
    if (field == 3) g.fpr_target *= 1 + 1e-6;
    const std::string problem = layer_geometry_problem(h, damaged);
    EXPECT_EQ(problem.rfind(layer_1 + std::to_string(g.capacity) + ", k " + std::to_string(g.k), 0),
              0U)
        << field << ": " << problem;
    EXPECT_NE(problem.find("): the header is damaged"), std::string::npos) << problem;
  }
  // fpr_target as an older build may have rounded its last bit: the same.
  layers[2].geometry.fpr_target *= 1 + 1e-12;
  EXPECT_EQ(layer_geometry_problem(h, layers), "");
}

TEST(StoreCoverageKeySample, AWindowedStatesLayersAreLayersOfTheirSlot) {
  CheckpointHeader h = header();
  h.window = core::window_attribute({2, core::SlotRule::kPerRun, 0});
  const core::ScalableBloomParams per_slot = core::slot_layer_params(h.params, 2);
  // Slots {3, 3, 4}: layers 0 and 1 of slot 3, layer 0 of slot 4.
  std::vector<CheckpointLayerInfo> layers(3);
  layers[0] = {core::layer_geometry(per_slot, 0), 0, 3};
  layers[1] = {core::layer_geometry(per_slot, 1), 0, 3};
  layers[2] = {core::layer_geometry(per_slot, 0), 0, 4};
  EXPECT_EQ(layer_geometry_problem(h, layers), "");
  // Read as a state without a window, layer 2 would be the third growth layer.
  CheckpointHeader plain = h;
  plain.window.clear();
  EXPECT_EQ(layer_geometry_problem(plain, layers).rfind("/bloom/layer_0 attributes", 0), 0U);
  h.window = "window/v1; slots=2";
  EXPECT_EQ(layer_geometry_problem(h, layers),
            "attribute window: window attribute lacks 'slots' or 'slot'");
}

TEST(StoreCoverageKeySample, NormalizationOfAnotherPolicyOrUnicodeIsNamed) {
  CheckpointHeader h = header();
  EXPECT_EQ(normalization_problem(h), "");
  h.normalization = "nfkc/v1 unicode 15.0.0";
  EXPECT_EQ(normalization_problem(h),
            "attribute normalization 'nfkc/v1 unicode 15.0.0' names a policy this build does not "
            "know");
  h.normalization = "nfc/v1 unicode 9.0.0 key-scheme/v1";
  EXPECT_EQ(normalization_problem(h),
            "attribute normalization 'nfc/v1 unicode 9.0.0 key-scheme/v1' needs unicode 9.0.0, "
            "this build has unicode " +
                std::string(core::normalization_unicode_version()));
  h.normalization = "none/v1 unicode 9.0.0";  // none does not depend on Unicode
  EXPECT_EQ(normalization_problem(h), "");
  h.normalization = "nfc/v1";  // no Unicode version recorded: nothing to compare
  EXPECT_EQ(normalization_problem(h), "");
}

TEST(StoreCoverageKeySample, HeaderNamesOtherThanThisBuildsAreNamed) {
  CheckpointHeader h = header();
  h.bloom_layout = "block512-k/v1";
  EXPECT_EQ(header_names_problem(h), "");
  h.key_encoding = "base64";
  EXPECT_EQ(header_names_problem(h),
            "attribute key_encoding 'base64' is not one this build reads ('bytes')");
}

SampledKey stored(const std::string& key, std::uint64_t seed = kSeed) {
  const core::KeyHash hash = core::hash_key(key, seed);
  return {core::slice_of(hash, kSlices), core::fingerprint(hash), key,
          "the first key of run-1-00000001.h5 tier-2 slice " +
              std::to_string(core::slice_of(hash, kSlices))};
}

bool holds_all(const core::KeyHash&) { return true; }

TEST(StoreCoverageKeySample, AKeyTheHeaderDoesNotReproduceIsNamedWithTheAttribute) {
  const CheckpointHeader h = header();
  const std::vector<SampledKey> good = {stored("apple"), stored("pear"), stored("x\xC3\x89")};
  EXPECT_EQ(key_sample_problem(h, good, holds_all), "");

  const std::vector<SampledKey> other_seed = {stored("apple", kSeed + 1)};
  EXPECT_EQ(key_sample_problem(h, other_seed, holds_all),
            "attribute hash_seed 42 does not reproduce the stored keys (" + other_seed[0].where +
                " hashes to another fingerprint): the header or the run is damaged");

  std::vector<SampledKey> moved = {stored("apple")};
  const std::uint32_t right = moved[0].slice;
  moved[0].slice = (right + 1) % kSlices;
  EXPECT_EQ(key_sample_problem(h, moved, holds_all),
            "attribute num_slices 4 does not reproduce the stored keys (" + moved[0].where +
                " hashes to slice " + std::to_string(right) +
                "): the header or the run is damaged");

  const std::vector<SampledKey> one = {stored("pear")};
  EXPECT_EQ(key_sample_problem(h, one, [](const core::KeyHash&) { return false; }),
            "the Bloom layers do not hold " + one[0].where +
                " (a /bloom/layer_<i> attribute k or blocks_per_slice, or the layer's words, are "
                "damaged)");
}

TEST(StoreCoverageKeySample, OnlyPlainAsciiKeysAreCheckedAgainstTheNormalization) {
  CheckpointHeader h = header();  // nfc-casefold: "Apple" is not a stored form
  const std::vector<SampledKey> upper = {stored("Apple")};
  EXPECT_EQ(key_sample_problem(h, upper, holds_all),
            "attribute normalization '" + h.normalization +
                "' does not hold for the stored keys (" + upper[0].where +
                " changes under it): the header or the run is damaged");
  // Non-ASCII keys are not checked (a policy may change them legitimately
  // between Unicode versions); nor are the keys of a key_scheme (digests).
  EXPECT_EQ(key_sample_problem(h, std::vector<SampledKey>{stored("\xC3\x89t\xC3\xA9")}, holds_all),
            "");
  h.key_scheme = "key-scheme/v1; fields=id";
  EXPECT_EQ(key_sample_problem(h, upper, holds_all), "");
  // An unknown policy is header_names_problem's to name: taken as none here.
  h.key_scheme.clear();
  h.normalization = "nfkc/v9";
  EXPECT_EQ(key_sample_problem(h, upper, holds_all), "");
  h.normalization = "none/v1";
  EXPECT_EQ(key_sample_problem(h, upper, holds_all), "");
}

}  // namespace
}  // namespace bloomshard::store::key_sample_coverage_tests
