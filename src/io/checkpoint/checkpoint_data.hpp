// The bulk data of one checkpoint write (the Bloom words of a rank's owned
// slices and their merged tier-2 base) and the two paths that move it into
// the datasets write_checkpoint created:
//  - MPI-IO: collective H5Dwrite of everything through the page cache;
//  - direct: O_DIRECT writes of whole blocks at the datasets' file addresses
//    (contiguous layout, allocated at creation, so the addresses are fixed),
//    the tier-2 merge overlapping the device on a second thread, and only the
//    unaligned edges of each rank's ranges (< 4 KiB each) through collective
//    H5Dwrite, because two ranks may share that block.
// Internal to write_checkpoint (checkpoint_write.cpp).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "io/durable/direct_region_writer.hpp"
#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::io {

/// Per owned slice sizes of the new run (from the shard's counters),
/// filled-in checksums; the run merges the delta with the newest `depth`
/// runs of the shard.
struct LocalTier2 {
  std::vector<std::uint64_t> keys, bytes, checksums;  ///< per owned slice
  std::vector<std::uint64_t> bloom_checksums;         ///< [layer][owned slice]
  std::uint64_t total_keys = 0, total_bytes = 0;
  std::size_t depth = 0;
  /// --confirm-jaccard: the owner's forms, looked up for every merged key
  /// (null: a state without confirmation, no forms written).
  const core::BandConfirmer* confirmer = nullptr;
  std::vector<std::uint64_t> form_starts;     ///< per owned slice, its first byte in `forms`
  std::vector<std::uint8_t> forms;            ///< the owned slices' form streams, back to back
  std::vector<std::uint64_t> form_checksums;  ///< per owned slice
  /// The key scheme has confirm-origins: each key's origin too (16 bytes
  /// a key, at 16 x the slice's first key, like the forms).
  bool origins = false;
  std::vector<std::uint8_t> form_origins;            ///< the owned slices' origin streams
  std::vector<std::uint64_t> form_origin_checksums;  ///< per owned slice
};

/// This rank's first element in /tier2/fingerprints, /tier2/offsets, /tier2/bytes.
struct Tier2Starts {
  std::uint64_t keys = 0, offsets = 0, bytes = 0;
};

/// The created datasets the bulk data goes to: a generation file has Bloom
/// layers and no tier 2 (tier2 false), a run file tier 2 and no layers.
struct CheckpointDataTargets {
  std::vector<hid_t> bloom_layers;                   ///< one per layer
  std::vector<std::uint64_t> bloom_words_per_slice;  ///< one per layer
  bool tier2 = false;
  hid_t fingerprints = H5I_INVALID_HID, offsets = H5I_INVALID_HID, bytes = H5I_INVALID_HID;
};

/// What one rank did, for CheckpointWriteStats.
struct CheckpointDataProgress {
  IoModeTracker tracker;
  std::uint64_t written = 0;       ///< data bytes of this rank (Bloom + tier 2)
  std::uint64_t direct_bytes = 0;  ///< of those, written by O_DIRECT
  double merge_seconds = 0;        ///< CPU time in the tier-2 merge and its checksums
};

/// Merges owned slice `slice` of `set` (its delta and newest `depth` runs)
/// into the spans (sized by merged_slice_size) and returns its checksum. A slice that fails to
/// merge (the shard changed underneath: a caller bug) is zero-filled and the first such error kept
/// in `err`, so no rank leaves the others waiting.
std::uint64_t merge_slice_checked(const core::TwoTierSet& set, std::uint32_t slice,
                                  std::size_t depth, std::span<std::uint64_t> fingerprints,
                                  std::span<std::uint64_t> offsets, std::span<char> bytes,
                                  std::string& err);

/// With t.confirmer: the form stream of owned slice `i` (its keys as just
/// merged into `merged`, in stored order) into t.forms, and its checksum;
/// with t.origins their origin stream into t.form_origins too.
/// A key without a form (a caller bug) zero-fills the slice's forms and
/// keeps the first error in `err`, as merge_slice_checked does.
void collect_slice_forms(LocalTier2& t, std::size_t i, const core::SliceBaseView& merged,
                         std::string& err);

/// Collective: writes the bulk data with collective H5Dwrite calls in
/// batches of about 64 MiB per rank, fills t.checksums. Returns this rank's
/// error to agree on (the file is complete either way); throws on HDF5/MPI
/// failures.
std::string write_data_mpiio(const comm::Communicator& comm, const core::TwoTierSet& set,
                             const CheckpointDataTargets& targets, LocalTier2& t,
                             const Tier2Starts& starts, hid_t dxpl,
                             const std::filesystem::path& file, CheckpointDataProgress& progress);

/// Collective: writes the bulk data through `direct` (a second descriptor
/// of the file HDF5 has open), then fdatasyncs it and writes every range's
/// edges with collective H5Dwrite; fills t.checksums. Memory: about 32 MiB
/// of buffers per rank (more if one slice is larger). A write or merge
/// failure on any rank skips the edges on all ranks and returns this rank's
/// error (empty on ranks that did not fail) to agree on.
std::string write_data_direct(const comm::Communicator& comm, const core::TwoTierSet& set,
                              const CheckpointDataTargets& targets, LocalTier2& t,
                              const Tier2Starts& starts, hid_t dxpl, const DirectFile& direct,
                              CheckpointDataProgress& progress);

}  // namespace bloomshard::io
