// What no checksum of a checkpoint covers: the header attributes that say
// how keys are located and tested (hash_scheme, hash_seed, num_slices,
// bloom_layout, key_encoding, normalization, and each layer's k and
// blocks_per_slice). A damaged one makes every lookup answer "absent"
// without an error, so every reader (dedup resume, query, verify, info,
// the Python module) checks them here: the names against this build, the
// layer geometry against what this build computes, and a few keys stored
// in tier 2 against the seed, the slice count, the Bloom layers and the
// policy. The checks are serial and pure (no MPI, no HDF5): the caller
// finds the keys (io::stored_key_sample_problem finds them in a file).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/sorted_run.hpp"

namespace bloomshard::store {

struct CheckpointHeader;
struct CheckpointLayerInfo;

/// Stored keys sampled per run: the first key of each of its first 16
/// non-empty slices. A damaged k that adds a probe is missed by one key
/// with probability ~ the layer's fill (about 1/2), by 16 with ~2^-16; a
/// damaged seed or slice count is caught by the first key.
inline constexpr std::uint32_t kSampledKeysPerRun = 16;

/// One key as tier 2 stores it.
struct SampledKey {
  std::uint32_t slice = 0;        ///< the slice it is stored under
  std::uint64_t fingerprint = 0;  ///< its stored fingerprint
  std::string key;                ///< its bytes
  std::string where;              ///< "the first key of run-4-1a2b3c4d.h5 tier-2 slice 7"
};

/// Appends to `out` the first key of each of the first `limit` non-empty
/// slices of `views` (views[i] is slice first_slice + i of file `run_name`).
void sample_first_keys(std::span<const core::SliceBaseView> views, std::uint32_t first_slice,
                       const std::string& run_name, std::vector<SampledKey>& out,
                       std::uint32_t limit = kSampledKeysPerRun);

/// Returns "" or what differs between the header's names and this build's
/// (hash_scheme, bloom_layout, key_encoding), naming the attribute; the
/// caller adds the file.
[[nodiscard]] std::string header_names_problem(const CheckpointHeader& h);

/// Returns "" or why the normalization attribute names no policy of this
/// build (an unknown policy, another Unicode version for a policy that
/// depends on it). Not part of the store's own checks (the store keeps the
/// text the app gives it, and its tests give any text): the app's readers
/// (info, verify, query, dedup) and the Python module ask.
[[nodiscard]] std::string normalization_problem(const CheckpointHeader& h);

/// Returns "" or the first layer whose stored geometry (capacity, k,
/// blocks_per_slice) differs from what this build computes from the
/// header's parameters (initial_capacity, fpr_target, growth, tightening,
/// window), naming the layer and both values.
[[nodiscard]] std::string layer_geometry_problem(const CheckpointHeader& h,
                                                 std::span<const CheckpointLayerInfo> layers);

/// Tier 1's answer for a stored key: true if some layer says "maybe". Only
/// asked about keys of slices the caller holds.
using BloomHolds = std::function<bool(const core::KeyHash&)>;

/// Returns "" or the first inconsistency between header `h` and `keys`: a
/// key that does not hash (hash_seed) to its stored fingerprint, or
/// (num_slices) to its slice, that the Bloom layers do not hold (a layer's
/// k or blocks_per_slice), or, for ASCII keys of a state without a
/// key_scheme attribute, that the normalization policy changes. The text
/// names the attribute and the key; the caller adds the file.
[[nodiscard]] std::string key_sample_problem(const CheckpointHeader& h,
                                             std::span<const SampledKey> keys,
                                             const BloomHolds& bloom_holds);

}  // namespace bloomshard::store
