// Names and version of the checkpoint file layout (docs/checkpoint-format.md
// describes each object). Shared by the writer, the readers and the tests;
// changing any name or meaning means bumping kCheckpointFormatVersion.
#pragma once

#include <cstdint>

namespace bloomshard::io {

/// Version written into every checkpoint; readers refuse newer versions.
inline constexpr std::uint32_t kCheckpointFormatVersion = 1;

namespace ckpt {

// Root attributes.
inline constexpr const char* kFormatVersion = "format_version";
inline constexpr const char* kToolVersion = "tool_version";
inline constexpr const char* kHashScheme = "hash_scheme";
inline constexpr const char* kHashSeed = "hash_seed";
inline constexpr const char* kBloomLayout = "bloom_layout";
inline constexpr const char* kNormalization = "normalization";
inline constexpr const char* kKeyField = "key_field";
inline constexpr const char* kKeyEncoding = "key_encoding";
inline constexpr const char* kNumSlices = "num_slices";
inline constexpr const char* kInitialCapacity = "initial_capacity";
inline constexpr const char* kFprTarget = "fpr_target";
inline constexpr const char* kGrowth = "growth";
inline constexpr const char* kTightening = "tightening";
inline constexpr const char* kGeneration = "generation";
inline constexpr const char* kRunId = "run_id";
inline constexpr const char* kFinished = "finished";
inline constexpr const char* kWrittenByRanks = "written_by_ranks";
inline constexpr const char* kNumLayers = "num_layers";

// Datasets and groups.
inline constexpr const char* kManifestJson = "/manifest_json";
inline constexpr const char* kBloomGroup = "/bloom";
inline constexpr const char* kBloomChecksums = "/bloom/checksums";
inline constexpr const char* kTier2Group = "/tier2";
inline constexpr const char* kSliceKeys = "/tier2/slice_keys";
inline constexpr const char* kSliceBytes = "/tier2/slice_bytes";
inline constexpr const char* kFingerprints = "/tier2/fingerprints";
inline constexpr const char* kOffsets = "/tier2/offsets";
inline constexpr const char* kBytes = "/tier2/bytes";
inline constexpr const char* kTier2Checksums = "/tier2/checksums";

// Attributes of each /bloom/layer_<i> (kFprTarget is shared with the root).
inline constexpr const char* kCapacity = "capacity";
inline constexpr const char* kBitsPerKey = "bits_per_key";
inline constexpr const char* kProbes = "k";
inline constexpr const char* kBlocksPerSlice = "blocks_per_slice";
inline constexpr const char* kInserted = "inserted";

}  // namespace ckpt
}  // namespace bloomshard::io
