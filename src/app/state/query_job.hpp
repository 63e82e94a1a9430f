// `bloomshard query`: read-only membership of every input record's key in a
// saved state (exact: tier 1, then tier 2 for every maybe). Writes the hits
// or the misses to outputs that mirror the inputs, like dedup's; rejects
// likewise. The state is never written or locked, so any number of queries
// may run against it at once, also while a dedup job holds its lock.
// Not resumable: a killed query is run again from the start
// (docs/commands.md gives the cost per TB).
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// Runs the query on every rank (initializes MPI; without mpiexec a 1-rank
/// job). Returns the exit code, the same on every rank; an unexpected error
/// is reported with the rank number and aborts the whole job.
int run_query(const std::vector<std::string>& args);

}  // namespace bloomshard::app
