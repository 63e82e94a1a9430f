// The one exception type of the saved format: a checkpoint cannot be
// written, or a file cannot be used to resume (not HDF5, missing or
// mismatched metadata, a failed checksum). The message names the file and
// what is wrong, so a rank (or the Python module) can report it as is.
// io::CheckpointError is this type.
#pragma once

#include <stdexcept>
#include <string>

namespace bloomshard::store {

/// A checkpoint could not be written or read; what() names file and cause.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bloomshard::store
