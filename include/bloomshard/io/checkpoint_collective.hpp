// Error agreement for the checkpoint store's collective calls: a failure on
// one rank must become the same exception on every rank, never one rank
// throwing while the others wait in the next collective.
#pragma once

#include <string>
#include <vector>

#include "bloomshard/comm/communicator.hpp"

namespace bloomshard::io {

/// Collective: every rank's strings, concatenated in rank order, on every
/// rank (two MPI_Allgather(v) calls; total < 2 GiB).
[[nodiscard]] std::vector<std::string> allgather_strings(const comm::Communicator& comm,
                                                         const std::vector<std::string>& mine);

/// Collective: if any rank passes a non-empty `local_error`, every rank
/// throws CheckpointError("<context>: rank r: <error>[; rank s: ...]").
/// Costs one allreduce when nobody failed.
void agree_or_throw(const comm::Communicator& comm, const std::string& local_error,
                    const std::string& context);

}  // namespace bloomshard::io
