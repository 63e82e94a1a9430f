// A saved bloomshard state opened read-only in one process, without MPI:
// the newest (or a chosen) generation of a --state dir, its Bloom layers and
// tier-2 runs memory-mapped from the files (format 2: ckpt-<g>.h5 + the
// run-<g>-<tag>.h5 files it lists; format 1: tier 2 inside ckpt-<g>.h5).
// Nothing of tier 2 is copied into RAM: a lookup touches one Bloom line per
// layer and, for a Bloom positive, a binary search in each run's slice
// (newest first), through the page cache. Reads are exact or raise: each
// slice (its Bloom words in every layer; its keys in each run) is checked
// against its stored XXH3 checksum the first time a lookup needs it, and
// the verdict is kept (slice_verdicts.hpp), so the cost is paid once per
// slice and a damaged slice raises StateError on every lookup that needs
// it. Serves the Python module (module.cpp); the lookups are the core's
// (query_layer_batch, SliceBaseView::contains), the file format and its
// checks the store layer's (file_index, tier2_slices, key_sample, validate),
// the same code every C++ reader runs.
//
// No MPI: the module links serial HDF5 (used only in open(), default sec2
// driver) and the MPI-free store layer, so it imports where no MPI is
// installed.
// Thread safety: every const member may be called from many threads at
// once; open() must not run concurrently with other HDF5 use in the process
// (this HDF5 build is not thread-safe; the Python module holds the GIL).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/normalize.hpp"
#include "bloomshard/store/file_mapping.hpp"
#include "bloomshard/store/header.hpp"
#include "mapped_run.hpp"
#include "slice_verdicts.hpp"
#include "state_error.hpp"

namespace bloomshard::python {

struct OpenOptions {
  /// Check every slice (both tiers, every run) at open: reads the whole
  /// state once, and lists every damaged slice. Without it each slice is
  /// checked in the same way on the first lookup that needs it.
  bool verify = false;
  /// The generation to open; default: LATEST's, else the newest file.
  std::optional<std::uint64_t> generation;
};

/// How much of the state has been checked so far.
struct CheckProgress {
  std::uint64_t bloom_slices = 0;  ///< P
  std::uint64_t bloom_good = 0;    ///< Bloom slices checked and good (all layers)
  std::uint64_t tier2_slices = 0;  ///< P x runs
  std::uint64_t tier2_good = 0;    ///< tier-2 slices of a run checked and good
  std::uint64_t checks_run = 0;    ///< slice checks computed (once per slice, barring races)
};

/// Outcome of one key of a batch.
enum class Answer : std::uint8_t { kAbsent = 0, kPresent = 1, kInvalidKey = 2 };

class ReadOnlyState {
 public:
  /// Opens `path`: a --state dir, or one generation file ckpt-<g>.h5. Throws
  /// StateError naming the file and problem (no checkpoint, not HDF5, a
  /// format/hash scheme/layout this build does not read, a missing or
  /// mismatched run file, stored keys that the header's hash seed or
  /// policy does not reproduce, a failed checksum with `verify`). Format 2: the
  /// Bloom words are faulted in (MADV_WILLNEED + populate, about 2 bytes per
  /// key of capacity); tier 2 stays on disk until lookups touch it.
  [[nodiscard]] static std::unique_ptr<ReadOnlyState> open(const std::filesystem::path& path,
                                                           const OpenOptions& options = {});
  ~ReadOnlyState();
  ReadOnlyState(const ReadOnlyState&) = delete;
  ReadOnlyState& operator=(const ReadOnlyState&) = delete;

  [[nodiscard]] const store::CheckpointSummary& summary() const noexcept { return summary_; }
  [[nodiscard]] const std::filesystem::path& generation_file() const noexcept { return file_; }
  /// The file of each run, oldest first (format 1: the generation file).
  [[nodiscard]] std::vector<std::filesystem::path> run_files() const;
  [[nodiscard]] core::NormalizePolicy policy() const noexcept { return policy_; }
  /// How a key value becomes the stored key bytes (fields, text rule, policy, digest).
  [[nodiscard]] const core::KeyScheme& key_scheme() const noexcept { return scheme_; }
  /// Bytes of one confirmation form of a confirming minhash state
  /// (--confirm-jaccard: one form per key beside tier 2, checked with each
  /// slice), else 0.
  [[nodiscard]] std::uint64_t form_bytes() const noexcept { return form_bytes_; }
  /// Whether the forms keep their origins (key scheme item confirm-origins).
  [[nodiscard]] bool origins() const noexcept { return scheme_.confirm_origins; }

  /// The key bytes the filter stores for `key` under the state's policy.
  /// Throws core::InvalidUtf8Error when the policy needs UTF-8 and `key` is not.
  [[nodiscard]] std::string normalize(std::string_view key) const;

  /// Answers keys[i] into out[i] (out.size() == keys.size()): normalized by
  /// the state's policy, hashed with its seed, tier 1 probed (batched and
  /// prefetched, one pass per layer), and with `exact` every Bloom positive
  /// confirmed in tier 2 (runs newest first). Without `exact` kPresent means
  /// "maybe" (false positives at about the filter's FPR). A key the policy
  /// refuses (invalid UTF-8) is kInvalidKey: the job rejects such records,
  /// so it is never in the state. Throws StateError naming file, slice and
  /// what failed if a slice a lookup needs is damaged (checked on first use).
  void lookup(std::span<const std::string_view> keys, std::span<Answer> out, bool exact) const;

  /// The slices checked so far (all of them after an open with `verify`).
  [[nodiscard]] CheckProgress check_progress() const noexcept;
  /// Whether the state was opened with `verify` (every slice checked).
  [[nodiscard]] bool verified_at_open() const noexcept { return verified_at_open_; }

 private:
  // One Bloom layer: its words in the mapped generation file (or a copy
  // when the file places them off a 64-byte boundary: the SIMD probes load
  // whole aligned blocks).
  struct Layer {
    core::LayerLayout layout;
    const std::uint64_t* words = nullptr;
    core::BlockWords copy;
  };
  ReadOnlyState() = default;
  void map_layers(hid_t file);
  // "" or which layers' words of slice s fail their checksum.
  [[nodiscard]] std::string check_bloom_slice(std::uint32_t s) const;
  void require_bloom_slice(std::uint32_t s) const;
  // A few keys of each run must hash, with the header's seed, to the
  // slice and fingerprint they are stored under, be held by the Bloom
  // layers and be fixed points of the policy: a damaged hash_seed, layer
  // or normalization attribute would make lookups miss without any
  // checksum failing.
  void check_key_scheme_reproduces_a_stored_key() const;
  [[nodiscard]] bool in_tier2(std::uint32_t slice, std::uint64_t fingerprint,
                              std::string_view key) const;

  std::filesystem::path file_;
  store::CheckpointSummary summary_;
  core::NormalizePolicy policy_ = core::NormalizePolicy::kNone;
  core::KeyScheme scheme_;        // fields, text rule, policy, digest (core/key_scheme.hpp)
  bool legacy_scheme_ = true;     // one field, no text rule, no digest: policy_ alone
  std::uint64_t form_bytes_ = 0;  // of a confirmation form (0: the state has none)
  std::shared_ptr<const store::FileMapping> generation_mapping_;  // the Bloom words live here
  std::vector<Layer> layers_;
  const std::uint64_t* bloom_checksums_ = nullptr;  // [L][P] in the mapped generation file
  SliceVerdicts bloom_verdicts_;                    // per slice, all layers at once
  std::vector<MappedRun> runs_;                     // oldest first
  bool verified_at_open_ = false;
};

}  // namespace bloomshard::python
