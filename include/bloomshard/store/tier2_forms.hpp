// Slice views over the confirmation forms beside a run's tier 2
// (`--confirm-jaccard` states, docs/checkpoint-format.md "Confirmation
// forms"): one
// u8 dataset /tier2/forms of N x F bytes (N keys of the run, F bytes a
// form), laid out as the keys are, slice after slice, each slice's forms
// in its stored key order; slice s starts at byte key_start(s) x F. Its
// per-slice check is the XXH3-64 (seed 0) of the slice's form bytes
// against /tier2/form_checksums. Used in place in a read-only mapping, as
// Tier2Slices uses the keys; written by io::write_checkpoint.
// The same views serve the forms' origins (/tier2/form_origins: u64, 2 x N
// values, each key's run ordinal then position, in the forms' order;
// checked against /tier2/form_origin_checksums): Tier2SideData names which.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "bloomshard/store/file_index.hpp"
#include "bloomshard/store/file_mapping.hpp"
#include "bloomshard/store/file_source.hpp"
#include "bloomshard/store/layout.hpp"

namespace bloomshard::store {

/// XXH3-64 (seed 0) of one slice's form stream.
[[nodiscard]] std::uint64_t tier2_forms_checksum(std::span<const std::uint8_t> forms) noexcept;

/// A per-key dataset beside tier 2's keys, laid out as the keys are.
struct Tier2SideData {
  const char* dataset;          ///< e.g. /tier2/forms
  const char* what;             ///< how a refusal names it: "forms"
  std::uint64_t element_bytes;  ///< bytes of one HDF5 element (1: u8, 8: u64)
};
/// The confirmation forms (u8) and their origins (u64).
inline constexpr Tier2SideData kFormsData{ckpt::kTier2Forms, "forms", 1};
inline constexpr Tier2SideData kFormOriginsData{ckpt::kTier2FormOrigins, "form origins", 8};
/// Bytes of one key's origin: run ordinal and position, u64 each.
inline constexpr std::uint64_t kFormOriginRecordBytes = 16;

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
  /// As above for `data` (record_bytes a key: the form size, or
  /// kFormOriginBytes for origins); its dimension counts HDF5 elements.
  Tier2Forms(const FileSource& src, std::shared_ptr<const FileMapping> mapping,
             const Tier2Index& index, std::uint64_t record_bytes, const Tier2SideData& data);

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
  std::uint64_t at_ = 0;  // file address of the dataset
  std::shared_ptr<const FileMapping> mapping_;
  Tier2SideData data_ = kFormsData;
};

}  // namespace bloomshard::store
