// What a checkpoint says besides its bits and keys: the header (root
// attributes), each Bloom layer's geometry and insert count, and the tier-2
// runs a generation consists of. Pure data, read by store/file_index.hpp
// from any FileSource and written by the collective writer in io.
// Format: docs/checkpoint-format.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/store/layout.hpp"

namespace bloomshard::store {

/// Everything besides bits and keys. Identical on every rank when writing
/// (rank 0's copy is what is stored).
struct CheckpointHeader {
  std::uint32_t format_version = kCheckpointFormatVersion;
  std::string tool_version;
  std::string hash_scheme;  ///< core::kHashSchemeName
  std::uint64_t hash_seed = 0;
  std::string bloom_layout;   ///< core::kBloomLayoutName
  std::string normalization;  ///< policy + versions, as the app gives it
  std::string key_field;
  std::string key_encoding;  ///< "bytes"
  std::string key_scheme;    ///< optional attribute, "" = absent (core::key_scheme_attribute)
  /// Rolling window (optional attribute, "" = no window): the
  /// core::window_attribute text. `normalization` is stored with
  /// kWindowNormalizationMark appended (and read back without it).
  std::string window;
  std::uint64_t window_slot = 0;           ///< current slot (windowed states)
  std::uint64_t window_slot_progress = 0;  ///< records or seconds of the current slot at the cut
  /// The manifest holds split inputs (app/split/split_inputs.hpp):
  /// `normalization` is stored with kSplitInputsNormalizationMark appended
  /// (before a window mark) and read back without it.
  bool split_inputs = false;
  /// Its ranges also hold retracted records (core/order/file_order.hpp): the mark
  /// is kSplitInputsRetractedMark instead, which builds before it (that
  /// would join the retracted records in) do not know.
  bool retracted_records = false;
  /// The manifest keeps the first copy in input order (its `input_order`
  /// object): `normalization` is stored with kInputOrderNormalizationMark
  /// appended (after a split mark, before a window mark) and read back without it.
  bool input_order = false;
  /// With input_order: its kept copies are the generation's /input_order
  /// rows (store/input_order_rows.hpp), not a list in the manifest; the
  /// mark is kInputOrderRowsMark instead, which builds before it do not know.
  bool input_order_rows = false;
  /// With input_order_rows: its retractions waiting for the end pass are
  /// the generation's /input_order/retracted_* rows too, not a list in the
  /// manifest; the mark is kInputOrderRetractedRowsMark instead, which
  /// builds before it do not know.
  bool input_order_retracted_rows = false;
  core::ScalableBloomParams params;
  std::uint64_t generation = 0;
  std::string run_id;
  bool finished = false;      ///< run state
  std::string manifest_json;  ///< opaque to the store (inputs, cursors, outputs, counters);
                              ///< writing: only rank 0's is used and it is never broadcast
};

/// One Bloom layer: its geometry and the GLOBAL count of keys inserted.
struct CheckpointLayerInfo {
  core::BloomLayerGeometry geometry;
  std::uint64_t inserted = 0;
  std::uint64_t slot = 0;  ///< window slot tag (windowed states; 0 otherwise)
};

/// One tier-2 run a generation references (format 2: a run file; format 1:
/// the generation file's own tier 2, id 0, level core::kLegacyRunLevel).
struct CheckpointRunRef {
  std::uint64_t id = 0;
  std::uint32_t level = 0;
  std::uint64_t keys = 0;   ///< keys over all slices
  std::uint64_t bytes = 0;  ///< key bytes over all slices
  std::uint64_t slot = 0;   ///< window slot tag (windowed states; 0 otherwise)
  friend bool operator==(const CheckpointRunRef&, const CheckpointRunRef&) = default;
};

/// What a checkpoint holds, without the bits and keys.
struct CheckpointSummary {
  CheckpointHeader header;
  std::vector<CheckpointLayerInfo> layers;
  std::uint64_t tier2_keys = 0;   ///< keys over all slices and runs
  std::uint64_t tier2_bytes = 0;  ///< key bytes over all slices and runs
  std::uint32_t written_by_ranks = 0;
  std::vector<CheckpointRunRef> runs;  ///< oldest first
};

}  // namespace bloomshard::store
