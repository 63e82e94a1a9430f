// The input order's kept copies in a generation file (docs/checkpoint-format.md
// "The input order's saved memory"): the collective write of every rank's
// remembered copies as per-slice rows, and the checked read of a rank's
// owned slices. The row format itself (grouping, offset table, checksums,
// the checks) is store/input_order_rows.hpp; this is the thin MPI-IO layer
// on top. Internal to the checkpoint store.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/input_order_rows.hpp"
#include "comm/communicator.hpp"
#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::io {

/// This rank's remembered copies grouped by slice (store::group_input_order_rows
/// over all `p` slices). Throws CheckpointError when a copy lies outside
/// `owned` (an owner remembers only its own slices' keys).
[[nodiscard]] store::InputOrderSlices group_owned_input_order_rows(
    std::span<const store::InputOrderRow> mine, core::SliceRange owned, std::uint32_t p);

/// Collective (every rank, owned ranges tiling [0, p) in rank order):
/// creates /input_order/{rows,offsets,checksums} in `file` and writes each
/// rank's `grouped` rows of its `owned` slices at its place (one MPI_Exscan
/// of the row counts, then collective writes; no gather). Rows are stored
/// as a 1-D u64 dataset of 3 N values (tag, hi, lo a row). Returns the
/// bytes this rank wrote.
std::uint64_t write_input_order_rows(const comm::Communicator& comm, hid_t file, hid_t dxpl,
                                     const store::InputOrderSlices& grouped, core::SliceRange owned,
                                     std::uint32_t p, IoModeTracker& tracker);

/// Collective: checks the /input_order datasets of the open generation
/// `file` (path `where`, `p` slices): there exactly when `expected` (the
/// ` input-order/v2` mark), their shapes, the whole offset table, then
/// the rows and checksum of every slice in `range`, handed to `into` (if
/// not null) slice after slice. Returns this rank's problems, each naming
/// the file, the dataset and the slice; problems of the shared metadata are
/// found by every rank alike. Total rows of the file into `*total_rows`.
[[nodiscard]] std::vector<std::string> read_input_order_rows(
    const comm::Communicator& comm, hid_t file, hid_t dxpl, const std::filesystem::path& where,
    std::uint32_t p, bool expected, core::SliceRange range, std::vector<store::InputOrderRow>* into,
    std::uint64_t* total_rows = nullptr);

}  // namespace bloomshard::io
