// The header check shared by every reader (checkpoint_key_sample.hpp): a
// header that agrees with its stored keys passes; each attribute that says
// how keys are located or tested, changed alone, is named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "io/checkpoint/checkpoint_key_sample.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::io {
namespace {

constexpr std::uint64_t kSeed = 12345;

CheckpointHeader header() {
  CheckpointHeader h;
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.bloom_layout = std::string(core::kBloomLayoutName);
  h.key_encoding = "bytes";
  h.normalization = "none/v1 unicode " + std::string(core::normalization_unicode_version());
  h.hash_seed = kSeed;
  h.params.initial_capacity = 1000;
  h.params.num_slices = 64;
  return h;
}

// Keys as a writer stores them: under their slice and fingerprint.
std::vector<SampledKey> stored(const CheckpointHeader& h) {
  std::vector<SampledKey> keys;
  for (const std::string k : {"Alpha", "beta", "Gamma-7"}) {
    const core::KeyHash x = core::hash_key(k, h.hash_seed);
    keys.push_back({core::slice_of(x, h.params.num_slices), core::fingerprint(x), k, "key " + k});
  }
  return keys;
}

const BloomHolds kHoldsAll = [](const core::KeyHash&) { return true; };

TEST(CheckpointKeySample, AgreeingHeaderPasses) {
  const CheckpointHeader h = header();
  EXPECT_EQ(header_names_problem(h), "");
  EXPECT_EQ(normalization_problem(h), "");
  EXPECT_EQ(key_sample_problem(h, stored(h), kHoldsAll), "");
  const std::vector<CheckpointLayerInfo> layers = {{core::layer_geometry(h.params, 0), 0, 0}};
  EXPECT_EQ(layer_geometry_problem(h, layers), "");
}

TEST(CheckpointKeySample, EachDamagedAttributeIsNamed) {
  const CheckpointHeader good = header();
  const std::vector<SampledKey> keys = stored(good);
  CheckpointHeader h = good;
  h.hash_seed = kSeed + 1;
  EXPECT_NE(key_sample_problem(h, keys, kHoldsAll).find("hash_seed 12346"), std::string::npos);
  h = good;
  h.params.num_slices = 63;
  EXPECT_NE(key_sample_problem(h, keys, kHoldsAll).find("num_slices 63"), std::string::npos);
  h = good;
  h.normalization = "nfc-casefold/v2 unicode " + std::string(core::normalization_unicode_version());
  EXPECT_NE(key_sample_problem(h, keys, kHoldsAll).find("normalization"), std::string::npos);
  EXPECT_NE(key_sample_problem(good, keys, [](const core::KeyHash&) { return false; })
                .find("the Bloom layers do not hold key Alpha"),
            std::string::npos);
  h = good;
  h.key_encoding = "utf-16";
  EXPECT_NE(header_names_problem(h).find("key_encoding"), std::string::npos);
  h = good;
  h.hash_scheme = "xxh3-128/v2";
  EXPECT_NE(header_names_problem(h).find("hash_scheme"), std::string::npos);
  h = good;
  h.normalization = "nfd/v1 unicode 15.0.0";
  EXPECT_NE(normalization_problem(h).find("normalization"), std::string::npos);

  const core::BloomLayerGeometry g = core::layer_geometry(good.params, 0);
  for (const auto& change : std::vector<void (*)(core::BloomLayerGeometry&)>{
           [](core::BloomLayerGeometry& x) { ++x.k; },
           [](core::BloomLayerGeometry& x) { x.blocks_per_slice *= 2; },
           [](core::BloomLayerGeometry& x) { x.capacity += 1; },
           [](core::BloomLayerGeometry& x) { x.fpr_target *= 2; }}) {
    std::vector<CheckpointLayerInfo> layers = {{g, 0, 0}};
    change(layers[0].geometry);
    EXPECT_NE(layer_geometry_problem(good, layers).find("/bloom/layer_0 attributes"),
              std::string::npos);
  }
  std::vector<CheckpointLayerInfo> layers = {{g, 0, 0}};
  h = good;
  h.params.tightening = 0.25;
  EXPECT_NE(layer_geometry_problem(h, layers), "");
}

TEST(CheckpointKeySample, SamplesTheFirstKeyOfTheFirstNonEmptySlices) {
  const std::vector<std::uint64_t> fps = {7}, offs = {0, 3}, none = {0};
  core::SliceBaseView empty, one;
  empty.offsets = none;
  one.fingerprints = fps;
  one.offsets = offs;
  one.bytes = std::span<const char>("abc", 3);
  const std::vector<core::SliceBaseView> views = {empty, one, empty, one, one};
  std::vector<SampledKey> out;
  sample_first_keys(views, 10, "run-1.h5", out, 2);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[0].slice, 11U);
  EXPECT_EQ(out[1].slice, 13U);
  EXPECT_EQ(out[0].key, "abc");
  EXPECT_EQ(out[0].fingerprint, 7U);
  EXPECT_EQ(out[0].where, "the first key of run-1.h5 tier-2 slice 11");
}

}  // namespace
}  // namespace bloomshard::io
