// The input order's saved memory in a generation file (docs/checkpoint-format.md
// "The input order's saved memory"): the collective write of a table of
// every rank's rows (its remembered kept copies, or its retractions waiting
// for the end pass) grouped by slice, and the checked read of a rank's
// owned slices; one writer and one reader for both tables
// (store::kKeptTable, store::kRetractedTable). The row format itself
// (grouping, offset table, checksums, the checks) is
// store/input_order_rows.hpp; this is the thin MPI-IO layer on top.
// Internal to the checkpoint store.
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

/// This rank's rows of table `t` grouped by slice (store::group_input_order_rows
/// over all `p` slices). Throws CheckpointError naming the table when a row
/// lies outside `owned` (an owner keeps only its own slices' keys).
[[nodiscard]] store::InputOrderSlices group_owned_input_order_rows(
    std::span<const store::InputOrderRow> mine, core::SliceRange owned, std::uint32_t p,
    const store::InputOrderTable& t = store::kKeptTable);

/// Collective (every rank, owned ranges tiling [0, p) in rank order):
/// creates table `t`'s three datasets in `file` (and the /input_order group
/// if not there yet) and writes each rank's `grouped` rows of its `owned`
/// slices at its place (one MPI_Exscan of the row counts, then collective
/// writes; no gather). Rows are stored as a 1-D u64 dataset of 3 N values
/// (tag, hi, lo a row). Returns the bytes this rank wrote.
std::uint64_t write_input_order_rows(const comm::Communicator& comm, hid_t file, hid_t dxpl,
                                     const store::InputOrderSlices& grouped, core::SliceRange owned,
                                     std::uint32_t p, IoModeTracker& tracker,
                                     const store::InputOrderTable& t = store::kKeptTable);

/// Collective: checks table `t`'s datasets of the open generation `file`
/// (path `where`, `p` slices): there exactly when `expected` (the header's
/// mark has the table; `mark` names it, e.g. "input-order/v3"), their
/// shapes, the whole offset table, then the rows and checksum of every
/// slice in `range`, handed to `into` (if not null) slice after slice.
/// Returns this rank's problems, each naming the file, the dataset and the
/// slice; problems of the shared metadata are found by every rank alike.
/// Total rows of the file into `*total_rows`.
[[nodiscard]] std::vector<std::string> read_input_order_rows(
    const comm::Communicator& comm, hid_t file, hid_t dxpl, const std::filesystem::path& where,
    std::uint32_t p, bool expected, core::SliceRange range, std::vector<store::InputOrderRow>* into,
    std::uint64_t* total_rows = nullptr, const store::InputOrderTable& t = store::kKeptTable,
    const char* mark = "input-order/v2");

}  // namespace bloomshard::io
