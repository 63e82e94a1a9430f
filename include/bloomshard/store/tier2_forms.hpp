// Slice views over the confirmation forms beside a run's tier 2
// (`--confirm-jaccard` states, docs/checkpoint-format.md "Confirmation
// forms"): one
// u8 dataset /tier2/forms of N x F bytes (N keys of the run, F bytes a
// form), laid out as the keys are, slice after slice, each slice's forms
// in its stored key order; slice s starts at byte key_start(s) x F. Its
// per-slice check is the XXH3-64 (seed 0) of the slice's form bytes
// against /tier2/form_checksums. Used in place in a read-only mapping, as
// Tier2Slices uses the keys; written by io::write_checkpoint.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/file_mapping.hpp"
#include "bloomshard/store/file_source.hpp"

namespace bloomshard::store {

/// XXH3-64 (seed 0) of one slice's form stream.
[[nodiscard]] std::uint64_t tier2_forms_checksum(std::span<const std::uint8_t> forms) noexcept;

class Tier2Forms {
 public:
  Tier2Forms() = default;
  /// Locates /tier2/forms in `src` (1-D of index.keys x `form_bytes`
  /// bytes, contiguous, allocated when not empty) and keeps `mapping` (the
  /// same file, mapped) and the slice layout of `index`. Throws
  /// CheckpointError "dataset /tier2/forms <what is wrong>" (missing,
  /// another size, not contiguous, no address).
  Tier2Forms(const FileSource& src, std::shared_ptr<const FileMapping> mapping,
             const Tier2Index& index, std::uint64_t form_bytes);

  [[nodiscard]] std::uint64_t form_bytes() const noexcept { return form_bytes_; }

  /// The form stream of slice `s`: slice_keys(s) x form_bytes() bytes.
  /// Throws CheckpointError naming the dataset when it lies beyond the
  /// file's end (a truncated file).
  [[nodiscard]] std::span<const std::uint8_t> view(std::uint32_t s) const;

  /// "" or what is wrong with slice `s` of the file named `where`
  /// ("<where> forms of tier-2 slice <s>: ..."): out of the file, or its
  /// XXH3 checksum differs from `stored`.
  [[nodiscard]] std::string check(std::uint32_t s, std::uint64_t stored,
                                  const std::string& where) const;

 private:
  std::vector<std::uint64_t> slice_keys_, key_start_;
  std::uint64_t form_bytes_ = 0;
  std::uint64_t at_ = 0;  // file address of /tier2/forms
  std::shared_ptr<const FileMapping> mapping_;
};

}  // namespace bloomshard::store
