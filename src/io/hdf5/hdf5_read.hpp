// Serial reads of an HDF5 file: open read-only with the default (sec2)
// driver, look up datasets and attributes, read small ones whole, find
// where a contiguous dataset lies in the file. No MPI: built into io
// against parallel HDF5, and into the Python module against serial HDF5.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5/hdf5_call.hpp"

namespace bloomshard::io {

/// Not collective: opens `path` read-only with the default (POSIX) driver.
[[nodiscard]] Hid open_serial_file(const std::filesystem::path& path);
[[nodiscard]] Hid open_dataset(hid_t loc, const std::string& name);
/// True if `loc` has a link named `name` (a path whose parents exist).
[[nodiscard]] bool has_link(hid_t loc, const std::string& name);
/// Dimensions of a dataset (its extent), any rank.
[[nodiscard]] std::vector<std::uint64_t> dataset_dims(hid_t dset);
/// True if the dataset's storage layout is contiguous.
[[nodiscard]] bool dataset_is_contiguous(hid_t dset);
/// File address of a contiguous dataset's data, or nullopt if it has none
/// (zero-sized or never allocated).
[[nodiscard]] std::optional<std::uint64_t> dataset_file_offset(hid_t dset);

/// Independent (any dxpl) read of a whole 1-D dataset into a vector of uint64;
/// Hdf5Error if it is not 1-D. The caller bounds its length first (it sizes
/// the vector).
[[nodiscard]] std::vector<std::uint64_t> read_all_u64(hid_t dset, hid_t dxpl);

[[nodiscard]] bool has_attr(hid_t obj, const char* name);
/// Reads a numeric attribute converting to the requested type (HDF5 converts
/// between integer widths; an out-of-range value fails). Every read_attr_*
/// throws Hdf5Error unless the attribute holds exactly one value (a scalar or
/// a one-element array): the file is untrusted.
[[nodiscard]] std::uint64_t read_attr_u64(hid_t obj, const char* name);
[[nodiscard]] double read_attr_f64(hid_t obj, const char* name);
/// Reads a fixed- or variable-length string attribute.
[[nodiscard]] std::string read_attr_string(hid_t obj, const char* name);

}  // namespace bloomshard::io
