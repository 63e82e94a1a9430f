// A well-formed format-2 generation as an in-memory file, shared by the
// store's tests: each test damages one value of it and checks the refusal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/store/checksum.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"
#include "memory_source.hpp"

namespace bloomshard::store::testing {

inline constexpr std::uint64_t kSlices = 4;
inline const std::string kManifest = R"({"inputs":[]})";

/// 4 slices, one Bloom layer of one block per slice, two runs (11 and 12).
inline MemorySource generation() {
  MemorySource f;
  const std::string root = "/";
  f.attr(root, ckpt::kFormatVersion, std::uint64_t{2});
  f.attr(root, ckpt::kToolVersion, std::string("0.test"));
  f.attr(root, ckpt::kHashScheme, std::string("xxh3-128/v1"));
  f.attr(root, ckpt::kHashSeed, std::uint64_t{42});
  f.attr(root, ckpt::kBloomLayout, std::string("block512-k/v1"));
  f.attr(root, ckpt::kNormalization, std::string("none/v1 unicode 15.0.0"));
  f.attr(root, ckpt::kKeyField, std::string("id"));
  f.attr(root, ckpt::kKeyEncoding, std::string("bytes"));
  f.attr(root, ckpt::kNumSlices, kSlices);
  f.attr(root, ckpt::kInitialCapacity, std::uint64_t{1000});
  f.attr(root, ckpt::kFprTarget, 0.01);
  f.attr(root, ckpt::kGrowth, 2.0);
  f.attr(root, ckpt::kTightening, 0.5);
  f.attr(root, ckpt::kGeneration, std::uint64_t{7});
  f.attr(root, ckpt::kRunId, std::string("run-a"));
  f.attr(root, ckpt::kFinished, std::uint64_t{1});
  f.attr(root, ckpt::kWrittenByRanks, std::uint64_t{3});
  f.attr(root, ckpt::kNumLayers, std::uint64_t{1});
  auto& m = f.dataset(ckpt::kManifestJson);
  m.dims = {1};
  m.text = kManifest;
  f.attr(ckpt::kManifestJson, ckpt::kChecksum, manifest_checksum(kManifest));
  const std::string layer = layer_dataset(0);
  f.attr(layer, ckpt::kCapacity, std::uint64_t{1000});
  f.attr(layer, ckpt::kFprTarget, 0.01);
  f.attr(layer, ckpt::kBitsPerKey, 9.6);
  f.attr(layer, ckpt::kProbes, std::uint64_t{7});
  f.attr(layer, ckpt::kBlocksPerSlice, std::uint64_t{1});
  f.attr(layer, ckpt::kInserted, std::uint64_t{5});
  f.u64s(layer, std::vector<std::uint64_t>(kSlices * 8, 0));
  f.dataset(ckpt::kBloomChecksums).dims = {1, kSlices};
  f.group(ckpt::kRunsGroup);
  f.u64s(ckpt::kRunIds, {11, 12});
  f.u64s(ckpt::kRunLevels, {1, 0});
  f.u64s(ckpt::kRunKeys, {3, 2});
  f.u64s(ckpt::kRunBytes, {30, 20});
  return f;
}

/// The CheckpointError text of reading `f` as generation "gen.h5".
inline std::string refusal(const MemorySource& f) {
  try {
    (void)read_generation_index(f, "gen.h5");
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(read without error)";
}

/// A well-formed tier-2 run file (run 12: 2 keys of 10 bytes in slices 0
/// and 2), as a generation naming {12, 0, 2, 20, 0} expects it.
inline MemorySource run_file() {
  MemorySource run;
  run.attr("/", ckpt::kFormatVersion, std::uint64_t{2});
  run.attr("/", ckpt::kContent, std::string(ckpt::kContentRun));
  run.attr("/", ckpt::kTier2Run, std::uint64_t{12});
  run.attr("/", ckpt::kNumSlices, kSlices);
  run.u64s(ckpt::kSliceKeys, {1, 0, 1, 0});
  run.u64s(ckpt::kSliceBytes, {10, 0, 10, 0});
  run.dataset(ckpt::kTier2Checksums).dims = {kSlices};
  run.dataset(ckpt::kFingerprints).dims = {2};
  run.dataset(ckpt::kOffsets).dims = {2 + kSlices};
  run.dataset(ckpt::kBytes).dims = {20};
  return run;
}

}  // namespace bloomshard::store::testing
