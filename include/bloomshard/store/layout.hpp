// Names and version of the checkpoint file layout (docs/checkpoint-format.md
// describes each object). Shared by the writer, the readers and the tests;
// changing any name or meaning means bumping kCheckpointFormatVersion.
#pragma once

#include <cstdint>

namespace bloomshard::store {

/// Version written into every checkpoint (generation and run files);
/// readers refuse newer versions, naming both.
inline constexpr std::uint32_t kCheckpointFormatVersion = 2;
/// Oldest version this build still reads (format 1: tier 2 inside the
/// generation file, one run).
inline constexpr std::uint32_t kOldestReadableFormatVersion = 1;

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
// Optional: written only for a key scheme the builds before it
// could not express; absent means one field, missing rejected, text
// none/v1, digest none/v1 (core/key_scheme.hpp, docs/checkpoint-format.md).
inline constexpr const char* kKeyScheme = "key_scheme";
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
// Optional (rolling windows; core/window/slot_window.hpp): present only in
// a windowed state, which also marks its normalization text with
// kWindowNormalizationMark so that builds before it refuse the state.
inline constexpr const char* kWindow = "window";           ///< core::window_attribute text
inline constexpr const char* kWindowSlot = "window_slot";  ///< the current slot
inline constexpr const char* kWindowSlotProgress = "window_slot_progress";  ///< records/seconds
inline constexpr const char* kSlot = "slot";  ///< attribute of each /bloom/layer_<i>: its slot
inline constexpr const char* kRunSlots = "/runs/slot";  ///< [R]: each run's slot
inline constexpr const char* kWindowNormalizationMark = " window/v1";
// A state whose manifest splits inputs into byte ranges marks its
// normalization text so that builds before it, which would ignore the
// ranges and read such an input whole, refuse the state.
inline constexpr const char* kSplitInputsNormalizationMark = " split-inputs/v1";
// The same, when ranges also list retracted records (first copy in
// file order): builds that know only v1 would join those records in.
inline constexpr const char* kSplitInputsRetractedMark = " split-inputs/v2";
// A state whose manifest holds an `input_order` object (--kept-copy first:
// the owners' remembered kept copies and pending retractions) marks its
// normalization text (after a split mark, before a window mark) so that
// builds before it, which would drop that object and never leave the
// retracted copies out, refuse the state ("normalization differs").
inline constexpr const char* kInputOrderNormalizationMark = " input-order/v1";
// The same, when the owners' kept copies are not in the manifest but in the
// generation's /input_order datasets (store/input_order_rows.hpp): builds
// that know only v1 would find no `kept` list and refuse the manifest late,
// or (a v1 reader that took a missing list as empty) keep a second copy.
inline constexpr const char* kInputOrderRowsMark = " input-order/v2";
// The same, when the retractions waiting for the end pass are rows of the
// generation too (/input_order/retracted_*): builds that know only v2 would
// find no `retracted` list and refuse the manifest late, or (a reader that
// took a missing list as empty) never leave those copies out.
inline constexpr const char* kInputOrderRetractedRowsMark = " input-order/v3";
/// Bloom layers a generation may hold: 64 (plain; growth doubles capacity,
/// so 64 is never reached), 1024 in a windowed state, where every live slot
/// restarts at layer 0 and a slot much larger than the first opens growth
/// layers of its own (33 slots x ~31 layers). Builds before windows never
/// read a windowed state, so the larger bound changes nothing for them.
inline constexpr std::uint64_t kMaxLayers = 64;
inline constexpr std::uint64_t kMaxWindowedLayers = 1024;

// Format 2: attributes of a run file (run-<g>-<tag>.h5); it also carries
// kFormatVersion, kNumSlices, kRunId, kGeneration (the one that wrote it) and
// kWrittenByRanks.
inline constexpr const char* kContent = "content";  ///< "tier2-run" in a run file
inline constexpr const char* kContentRun = "tier2-run";
inline constexpr const char* kTier2Run = "tier2_run";  ///< the run's id
inline constexpr const char* kRunLevel = "level";      ///< its compaction level
// Format 2: the checksum attribute of /manifest_json (XXH3-64, seed 0).
inline constexpr const char* kChecksum = "checksum";

// Format 2: the runs a generation consists of, oldest first, each [R].
inline constexpr const char* kRunsGroup = "/runs";
inline constexpr const char* kRunIds = "/runs/id";
inline constexpr const char* kRunLevels = "/runs/level";
inline constexpr const char* kRunKeys = "/runs/keys";
inline constexpr const char* kRunBytes = "/runs/bytes";

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
// In every run file of a `--confirm-jaccard` state, and only there
// (docs/checkpoint-format.md "Confirmation forms"): the form stream of each
// slice (its keys' b-bit signature forms in stored key order) and its
// XXH3-64 per slice. Read by Tier2Forms; the key scheme item
// confirm-jaccard=T/b4 marks the state.
inline constexpr const char* kTier2Forms = "/tier2/forms";
inline constexpr const char* kTier2FormChecksums = "/tier2/form_checksums";
// Beside the forms in every run file of a confirming state whose key
// scheme has the item confirm-origins=v1, and only there: each key's
// origin (run ordinal, position: two u64 a key) in the forms' order, and
// the XXH3-64 of each slice's origin bytes.
inline constexpr const char* kTier2FormOrigins = "/tier2/form_origins";
inline constexpr const char* kTier2FormOriginChecksums = "/tier2/form_origin_checksums";

// Attributes of each /bloom/layer_<i> (kFprTarget is shared with the root).
inline constexpr const char* kCapacity = "capacity";
inline constexpr const char* kBitsPerKey = "bits_per_key";
inline constexpr const char* kProbes = "k";
inline constexpr const char* kBlocksPerSlice = "blocks_per_slice";
inline constexpr const char* kInserted = "inserted";

}  // namespace ckpt
}  // namespace bloomshard::store
