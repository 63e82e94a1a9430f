// One tier-2 sorted run of a saved state, mapped read-only from its file (a
// format-2 run file run-<g>-<tag>.h5, or a format-1 generation, whose own
// /tier2 datasets are its one run): the per-slice index read with serial
// HDF5 at open, the per-key datasets used in place through the mapping.
// Each slice is checked on its first lookup (offsets in range, its XXH3
// checksum, key order) and the verdict kept, so a damaged slice gives a
// StateError naming file and slice, never a wrong answer or a read outside
// the mapping. A run of a confirming minhash state (--confirm-jaccard) also
// holds its keys' confirmation forms: they must be there exactly then, of
// the run's size, and each slice's form stream is checked against
// /tier2/form_checksums with the slice's keys. Layout:
// docs/checkpoint-format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/store/header.hpp"
#include "bloomshard/store/tier2_forms.hpp"
#include "bloomshard/store/tier2_slices.hpp"
#include "slice_verdicts.hpp"

namespace bloomshard::python {

class MappedRun {
 public:
  /// Opens and maps `path`, the file of run `ref` of generation file
  /// `generation` of `p` slices. A run file must say it is that run
  /// (content "tier2-run", format_version 2, tier2_run id, num_slices);
  /// `format1_generation` skips those checks (the generation file itself
  /// holds tier 2). The key and byte totals must equal the generation's
  /// listing. `form_bytes` (0: none) is the size of one confirmation form
  /// of a confirming state: /tier2/forms and /tier2/form_checksums must be
  /// there exactly when it is not 0, of the run's size; `origins` (the
  /// key scheme's confirm-origins): /tier2/form_origins and
  /// /tier2/form_origin_checksums too, exactly then. Not thread-safe
  /// (serial HDF5). Throws StateError naming the file and the dataset (and
  /// the generation file where they disagree).
  [[nodiscard]] static MappedRun open(const std::filesystem::path& path,
                                      const std::filesystem::path& generation,
                                      const store::CheckpointRunRef& ref, std::uint32_t p,
                                      bool format1_generation, std::uint64_t form_bytes = 0,
                                      bool origins = false);

  /// Exact membership of `key` (hash fingerprint `fp`) in slice `s`: a
  /// binary search of the slice's fingerprints, then a byte compare.
  /// Thread-safe. The first call for a slice checks it (reads the whole
  /// slice once: ~(16 + key length) bytes per key); throws StateError if
  /// it is damaged, now and on every later call for it.
  [[nodiscard]] bool contains(std::uint32_t s, std::uint64_t fp, std::string_view key) const;

  /// Slice `s`, checked (as contains does) before it is returned.
  [[nodiscard]] core::SliceBaseView checked_slice(std::uint32_t s) const;

  /// Checks every slice not checked yet; appends one line per failing slice
  /// to `problems`. Reads the whole run.
  void verify(std::vector<std::string>& problems) const;

  /// Keys per slice (the run file's /tier2/slice_keys).
  [[nodiscard]] const std::vector<std::uint64_t>& slice_keys() const noexcept {
    return slices_.index().slice_keys;
  }
  /// The slices found good so far, and the slice checks run.
  [[nodiscard]] const SliceVerdicts& verdicts() const noexcept { return verdicts_; }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  MappedRun() = default;
  // Locates the forms of a confirming state (form_bytes != 0) and checks
  // that they are there exactly then; throws StateError naming the dataset.
  void open_forms(const store::FileSource& src, std::shared_ptr<const store::FileMapping> mapping,
                  const store::Tier2Index& index, std::uint32_t p, std::uint64_t form_bytes,
                  bool origins);
  // "" or what is wrong with slice s (its keys, then its forms), naming
  // file, slice and, for the forms, the dataset.
  [[nodiscard]] std::string check_slice(std::uint32_t s) const;

  std::filesystem::path path_;
  store::Tier2Slices slices_;                    // the run's index and views, in its mapping
  std::vector<std::uint64_t> checksums_;         // per slice, as stored
  std::optional<store::Tier2Forms> forms_;       // a confirming state's forms
  std::vector<std::uint64_t> form_checksums_;    // per slice, as stored
  std::optional<store::Tier2Forms> origins_;     // their origins (confirm-origins)
  std::vector<std::uint64_t> origin_checksums_;  // per slice, as stored
  SliceVerdicts verdicts_;
};

}  // namespace bloomshard::python
