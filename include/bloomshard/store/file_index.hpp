// The index of a checkpoint file, read through a FileSource: the header
// table (the root attributes), the Bloom layers' attributes and shapes, the
// manifest (checksummed in format 2), the run list (format 2) and the
// tier-2 index of a file that holds tier 2 (a run file, or a format-1
// generation). Every value is range-checked before it sizes anything; a
// problem throws CheckpointError "<file name>: <what>", naming the
// attribute or dataset. Serial and pure: the collective reader, verify,
// info and the Python module all read a file's index here.
// Format: docs/checkpoint-format.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/store/file_source.hpp"
#include "bloomshard/store/header.hpp"

namespace bloomshard::store {

/// The tier-2 datasets of one file: per-slice sizes and their exclusive
/// prefix sums (P + 1 entries), and the totals.
struct Tier2Index {
  std::vector<std::uint64_t> slice_keys, slice_bytes;
  std::vector<std::uint64_t> key_start, byte_start;
  std::uint64_t keys = 0, bytes = 0;
};

/// Everything of a generation file besides bits and keys (and, format 1,
/// the index of its own tier 2).
struct FileIndex {
  CheckpointSummary summary;
  Tier2Index tier2;  ///< format 1 only
};

/// Reads generation file `src` (messages start with `name`). Refuses a run
/// file, a format_version outside [kOldestReadableFormatVersion,
/// kCheckpointFormatVersion], attributes out of range, datasets of another
/// shape than the attributes imply, a manifest whose checksum fails.
[[nodiscard]] FileIndex read_generation_index(const FileSource& src, const std::string& name);

/// Reads run file `src` (format 2) and checks that it is run `ref` of the
/// generation with header `h` (content, version, run id, slice count, key
/// and byte totals); returns its tier-2 index.
[[nodiscard]] Tier2Index read_run_index(const FileSource& src, const std::string& name,
                                        const CheckpointHeader& h, const CheckpointRunRef& ref);

/// The tier-2 index of a file holding tier 2 with `p` slices (without the
/// run file checks of read_run_index).
[[nodiscard]] Tier2Index read_tier2_index(const FileSource& src, const std::string& name,
                                          std::uint64_t p);

/// The per-slice tier-2 checksums of `src` (/tier2/checksums, P values).
[[nodiscard]] std::vector<std::uint64_t> read_tier2_checksums(const FileSource& src,
                                                              const std::string& name,
                                                              std::uint64_t p);

/// "/bloom/layer_<l>"
[[nodiscard]] std::string layer_dataset(std::size_t l);

}  // namespace bloomshard::store
