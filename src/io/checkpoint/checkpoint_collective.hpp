// Error agreement for the checkpoint store's collective calls: a failure on
// one rank must become the same exception on every rank, never one rank
// throwing while the others wait in the next collective.
#pragma once

#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace bloomshard::io {

/// Collective: every rank's strings, concatenated in rank order, on every
/// rank (two MPI_Allgather(v) calls; total < 2 GiB).
[[nodiscard]] std::vector<std::string> allgather_strings(const comm::Communicator& comm,
                                                         const std::vector<std::string>& mine);

/// How long a rank that failed waits for the others to join the error
/// agreement. They may be inside another collective of HDF5 (a metadata
/// write that failed on one rank only, an EIO in the middle of a transfer)
/// and never come; the failed rank then reports its error, naming rank and
/// host, and ends the job (comm::abort_job) instead of hanging. Ending is
/// what every rank would do after the agreement anyway (the job stops on a
/// checkpoint error), and the last committed generation is untouched.
inline constexpr double kErrorAgreementSeconds = 20;

/// Collective: true on every rank if any rank passes a non-empty
/// `local_error`. A rank that failed waits at most kErrorAgreementSeconds
/// for the others (see above), then prints "<context>: rank r on host:
/// <error>" and ends the job with exit 1. Costs one allreduce (non-blocking,
/// polled) when nobody failed.
[[nodiscard]] bool any_rank_failed(const comm::Communicator& comm, const std::string& local_error,
                                   const std::string& context);

/// Collective: if any rank passes a non-empty `local_error`, every rank
/// throws CollectiveCheckpointError("<context>: rank r: <error>[; rank s: ...]").
/// Costs one allreduce when nobody failed; bounded as any_rank_failed.
void agree_or_throw(const comm::Communicator& comm, const std::string& local_error,
                    const std::string& context);

}  // namespace bloomshard::io
