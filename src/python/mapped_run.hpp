// One tier-2 sorted run of a saved state, mapped read-only from its file (a
// format-2 run file run-<g>-<tag>.h5, or a format-1 generation, whose own
// /tier2 datasets are its one run): the per-slice index read with serial
// HDF5 at open, the per-key datasets used in place through the mapping.
// A slice's offsets are checked (monotonic, spanning the slice's bytes) on
// its first lookup, so a damaged file gives a StateError, never a read
// outside the mapping. Layout: docs/checkpoint-format.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/io/checkpoint_mapping.hpp"
#include "bloomshard/io/checkpoint_store.hpp"

namespace bloomshard::python {

class MappedRun {
 public:
  /// Opens and maps `path`, the file of run `ref` of a generation of `p`
  /// slices. A run file must say it is that run (content "tier2-run",
  /// format_version 2, tier2_run id, num_slices); `format1_generation`
  /// skips those checks (the generation file itself holds tier 2). The
  /// key and byte totals must equal the generation's listing. Not
  /// thread-safe (serial HDF5). Throws StateError naming the file.
  [[nodiscard]] static MappedRun open(const std::filesystem::path& path,
                                      const io::CheckpointRunRef& ref, std::uint32_t p,
                                      bool format1_generation);

  /// Exact membership of `key` (hash fingerprint `fp`) in slice `s`: a
  /// binary search of the slice's fingerprints, then a byte compare.
  /// Thread-safe. Throws StateError if the slice's offsets are damaged.
  [[nodiscard]] bool contains(std::uint32_t s, std::uint64_t fp, std::string_view key) const;

  /// Recomputes every slice's XXH3 checksum and checks the key order;
  /// appends one line per failing slice to `problems`. Reads the whole run.
  void verify(std::vector<std::string>& problems) const;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  MappedRun() = default;
  [[nodiscard]] core::SliceBaseView view(std::uint32_t s) const;
  [[nodiscard]] core::SliceBaseView checked_view(std::uint32_t s) const;

  std::filesystem::path path_;
  std::shared_ptr<const io::FileMapping> mapping_;
  std::uint64_t fps_ = 0, offs_ = 0, bytes_ = 0;  // file addresses of the datasets
  // Per slice: keys, bytes, their exclusive prefix sums (P + 1), checksums.
  std::vector<std::uint64_t> slice_keys_, slice_bytes_, key_start_, byte_start_, checksums_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> checked_;  // SliceCheck per slice
};

}  // namespace bloomshard::python
