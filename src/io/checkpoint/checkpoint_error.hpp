// The exception types of the checkpoint store: store::CheckpointError (the
// saved format's, store/format_error.hpp) under its io name, and the
// collective variant every rank throws after an error agreement.
#pragma once

#include "bloomshard/store/format_error.hpp"

namespace bloomshard::io {

using store::CheckpointError;

/// Thrown by every rank of the communicator with the same message, after
/// an error agreement (agree_or_throw): one rank reporting it says it all.
class CollectiveCheckpointError : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

}  // namespace bloomshard::io
