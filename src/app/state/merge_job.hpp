// `bloomshard merge`: the union of finished, compatible states (same hash
// scheme and seed, Bloom layout, normalization, key field, slice count)
// into a new finished state that dedup (incremental), query and info
// accept. The sources are read only. Collective, any rank count.
//
// How: the first state is loaded (its Bloom layers and tier-2 runs, mapped);
// every key of the other states' tier 2 is hashed again from its bytes and
// decided into it like a dedup key (tier 1, tier 2 for a maybe, inserted if
// absent), so tier 2 is the exact union (a key in both is stored once) and
// tier 1 holds every key, in the first state's layers and in layers opened
// for the others' keys. The result is written with the ordinary checkpoint
// writer as generation 1 of a format-2 state in a temporary sibling dir,
// verified, and renamed to --into: a kill leaves no --into or a complete one.
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// Runs the merge on every rank (initializes MPI). Returns the exit code,
/// the same on every rank; an unexpected error aborts the whole job.
int run_merge(const std::vector<std::string>& args);

}  // namespace bloomshard::app
