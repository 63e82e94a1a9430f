// Slice views over the tier-2 datasets of one file (a run file, or a
// format-1 generation), used in place in a read-only mapping of the file:
// the three per-key datasets located through a FileSource, each slice's
// fingerprints, offsets and key bytes cut out of the mapping with range
// checks, and the per-slice check (in range, XXH3 checksum, key order).
// The one copy of this code: the collective loader and verify (io) and the
// Python module read tier 2 through it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/sorted_run.hpp"
#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/file_mapping.hpp"
#include "bloomshard/store/file_source.hpp"

namespace bloomshard::store {

class Tier2Slices {
 public:
  Tier2Slices() = default;
  /// Locates /tier2/fingerprints, /tier2/offsets and /tier2/bytes in `src`
  /// (each must be contiguous, allocated when not empty, 8-byte aligned)
  /// and keeps `mapping` (the same file, mapped) and `index`. Throws
  /// CheckpointError "dataset <name> <what is wrong>".
  Tier2Slices(const FileSource& src, std::shared_ptr<const FileMapping> mapping, Tier2Index index);

  /// Slice `s` as a view into the mapping. Throws CheckpointError naming
  /// the dataset if a range lies beyond the file's end (a truncated file).
  /// Not checked otherwise: see check().
  [[nodiscard]] core::SliceBaseView view(std::uint32_t s) const;

  /// "" or what is wrong with slice `s` of the file named `where`
  /// ("<where> tier-2 slice <s>: ..."). Without `full` only the offsets
  /// (monotonic, spanning the key bytes: what lookups need to stay inside
  /// the mapping), with it the XXH3 checksum against `stored` and the key
  /// order too (reads the whole slice: ~(16 + key length) bytes per key).
  [[nodiscard]] std::string check(std::uint32_t s, std::uint64_t stored, bool full,
                                  const std::string& where) const;

  [[nodiscard]] const Tier2Index& index() const noexcept { return index_; }
  [[nodiscard]] const std::shared_ptr<const FileMapping>& mapping() const noexcept {
    return mapping_;
  }
  /// Reads in the three per-key datasets' extents of slices `owned` only:
  /// on R ranks a rank's share is about 1/R of the file.
  void advise_willneed(core::SliceRange owned) const noexcept;

 private:
  Tier2Index index_;
  std::uint64_t fps_ = 0, offs_ = 0, bytes_ = 0;  // file addresses of the datasets
  std::shared_ptr<const FileMapping> mapping_;
};

}  // namespace bloomshard::store
