// The one exception type of the checkpoint store: a checkpoint cannot be
// written, or a file cannot be used to resume (not HDF5, missing or
// mismatched metadata, a failed checksum). The message names the file and
// what is wrong, so a rank can report it as is.
#pragma once

#include <stdexcept>
#include <string>

namespace bloomshard::io {

/// A checkpoint could not be written or read; what() names file and cause.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by every rank of the communicator with the same message, after
/// an error agreement (agree_or_throw): one rank reporting it says it all.
class CollectiveCheckpointError : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

}  // namespace bloomshard::io
