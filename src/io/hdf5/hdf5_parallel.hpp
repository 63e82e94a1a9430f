// Parallel HDF5 set up once for the checkpoint store: MPI-IO file access
// with collective metadata reads and writes, a collective transfer property
// list, contiguous 1-D datasets allocated at creation (so each has a file
// address for H5Dget_offset and mmap), and 1-D hyperslab reads and writes
// cut into pieces of at most 1 GiB (HDF5 1.10.8 over MPI-IO mishandles
// transfers of 2 GiB and more: MPI counts are int).
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "io/hdf5/hdf5_call.hpp"
#include "io/hdf5/hdf5_read.hpp"

namespace bloomshard::io {

/// Largest transfer one H5Dread/H5Dwrite call moves per rank.
inline constexpr std::uint64_t kMaxIoPieceBytes = std::uint64_t{1} << 30;
/// Every file object is placed at a multiple of this many bytes, so a mapped
/// dataset of uint64 values is aligned for direct access.
inline constexpr hsize_t kFileAlignment = 64;

/// MPI-IO hints (MPI_Info key/value pairs) passed to every file
/// create_parallel_file makes, e.g. Lustre's striping_factor / striping_unit
/// (fixed when a file is created), ROMIO's cb_nodes / romio_cb_write. The
/// MPI-IO layer may ignore hints it does not know (OMPIO here ignores the
/// striping ones on ext4); they are passed through, not checked.
using MpiIoHints = std::vector<std::pair<std::string, std::string>>;
/// Parses "key=value[,key=value...]" (empty: none). Throws
/// std::invalid_argument naming a malformed item.
[[nodiscard]] MpiIoHints parse_mpiio_hints(std::string_view spec);
/// Sets the hints of files created from now on (process-wide; without a
/// call they come from $BLOOMSHARD_MPIIO_HINTS, parsed on first use).
void set_mpiio_hints(MpiIoHints hints);
/// The hints files are created with.
[[nodiscard]] MpiIoHints mpiio_hints();

/// Collective over comm: creates (truncating) `path` for MPI-IO writing,
/// with mpiio_hints().
[[nodiscard]] Hid create_parallel_file(const comm::Communicator& comm,
                                       const std::filesystem::path& path);
/// Collective over comm: opens `path` read-only through MPI-IO.
[[nodiscard]] Hid open_parallel_file(const comm::Communicator& comm,
                                     const std::filesystem::path& path);
/// A transfer property list asking for collective MPI-IO.
[[nodiscard]] Hid collective_dxpl();
/// The default (independent) transfer property list (H5P_DEFAULT, never closed).
[[nodiscard]] hid_t default_dxpl() noexcept;

/// Collective: creates group `name` under `loc`.
[[nodiscard]] Hid create_group(hid_t loc, const char* name);
/// Collective: a contiguous 1-D dataset of `length` elements of `file_type`,
/// space allocated at creation, never filled (every element is written).
[[nodiscard]] Hid create_contiguous_dataset(hid_t loc, const char* name, hid_t file_type,
                                            std::uint64_t length);
/// As create_contiguous_dataset with a 2-D shape rows x cols.
[[nodiscard]] Hid create_contiguous_dataset_2d(hid_t loc, const char* name, hid_t file_type,
                                               std::uint64_t rows, std::uint64_t cols);
/// Whether every collective transfer really was collective
/// (H5Pget_mpio_actual_io_mode after each call).
struct IoModeTracker {
  std::uint64_t calls = 0;           ///< transfers made by this rank
  std::uint64_t non_collective = 0;  ///< of those, reported H5D_MPIO_NO_COLLECTIVE
  int last_mode = 0;                 ///< last H5D_mpio_actual_io_mode_t value seen
  /// OR over transfers of H5Pget_mpio_no_collective_cause's global cause
  /// (0 = H5D_MPIO_COLLECTIVE: HDF5 did not break collective I/O; whether
  /// MPI-IO then used two-phase buffering is its choice, see the dxpl).
  std::uint32_t no_collective_cause = 0;
};

/// Collective over comm (every rank calls, any count incl. 0): writes `count`
/// elements of `elem_size` bytes from `data` (memory type `mem_type`) to
/// elements [file_start, file_start + count) of the 1-D dataset, in
/// collective pieces of <= kMaxIoPieceBytes; the number of pieces is agreed
/// with one allreduce, ranks with fewer pieces take part with empty selections.
void write_1d_collective(const comm::Communicator& comm, hid_t dset, hid_t dxpl, hid_t mem_type,
                         std::uint64_t file_start, const void* data, std::uint64_t count,
                         std::size_t elem_size, IoModeTracker* tracker = nullptr);
/// Collective counterpart of write_1d_collective for reading into `data`.
void read_1d_collective(const comm::Communicator& comm, hid_t dset, hid_t dxpl, hid_t mem_type,
                        std::uint64_t file_start, void* data, std::uint64_t count,
                        std::size_t elem_size);
/// Reads a [rows x (col_end - col_begin)] column block of a 2-D dataset
/// (row-major into data); `dxpl` decides collective or not (all ranks call
/// when collective). Limit: the block must be < kMaxIoPieceBytes.
void read_columns_2d(hid_t dset, hid_t dxpl, hid_t mem_type, std::uint64_t rows,
                     std::uint64_t col_begin, std::uint64_t col_end, void* data,
                     std::size_t elem_size);
/// Collective write counterpart of read_columns_2d.
void write_columns_2d(hid_t dset, hid_t dxpl, hid_t mem_type, std::uint64_t rows,
                      std::uint64_t col_begin, std::uint64_t col_end, const void* data,
                      std::size_t elem_size, IoModeTracker* tracker = nullptr);
/// Attributes: scalar numbers and fixed-length UTF-8 strings. Writing is
/// collective in a parallel file (every rank passes the same value).
void write_attr_u64(hid_t obj, const char* name, std::uint64_t value);
void write_attr_u32(hid_t obj, const char* name, std::uint32_t value);
void write_attr_u8(hid_t obj, const char* name, std::uint8_t value);
void write_attr_f64(hid_t obj, const char* name, double value);
void write_attr_string(hid_t obj, const char* name, const std::string& value);
/// Fixed-length UTF-8 string type holding `length` bytes plus a NUL.
[[nodiscard]] Hid string_type(std::size_t length);

}  // namespace bloomshard::io
