// Where a contiguous dataset's data lies in its file (for mapping it).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/store/validate.hpp"
#include "io/hdf5/hdf5_call.hpp"
#include "io/hdf5/hdf5_read.hpp"
#include "state_error.hpp"

namespace bloomshard::python {

/// File offset of dataset `name` of shape `dims` (elements of `size` bytes)
/// in the open `file` named `where` (0 when empty: a zero-sized dataset has
/// no address and is never mapped). Throws StateError naming `where` unless
/// it has that shape, is contiguous, allocated and aligned to `size`.
inline std::uint64_t dataset_address(hid_t file, const std::string& where, const std::string& name,
                                     const std::vector<std::uint64_t>& dims, std::uint64_t size) {
  const auto fail = [&](const std::string& why) {
    throw StateError(where + ": dataset " + name + " " + why);
  };
  if (!io::has_link(file, name)) fail("is missing");
  io::Hid d = io::open_dataset(file, name);
  std::uint64_t count = 1;
  std::string shape;
  for (const std::uint64_t n : dims) {
    count = store::checked_mul(count, n, name);
    shape += (shape.empty() ? "" : " x ") + std::to_string(n);
  }
  if (io::dataset_dims(d.get()) != dims) fail("does not have the shape " + shape);
  if (!io::dataset_is_contiguous(d.get())) fail("is not contiguous");
  if (count == 0) return 0;
  (void)store::checked_mul(count, size, name);
  const auto addr = io::dataset_file_offset(d.get());
  if (!addr) fail("has no file address");
  if (*addr % size != 0) fail("is not " + std::to_string(size) + "-byte aligned in the file");
  return *addr;
}

/// The same for a 1-D dataset of `count` elements.
inline std::uint64_t dataset_address(hid_t file, const std::string& where, const std::string& name,
                                     std::uint64_t count, std::uint64_t size) {
  return dataset_address(file, where, name, std::vector<std::uint64_t>{count}, size);
}

}  // namespace bloomshard::python
