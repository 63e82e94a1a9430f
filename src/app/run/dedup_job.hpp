// `bloomshard dedup`: the main job. Every rank reads its share of the input
// files, keys travel to the owners of their slices in batched all-to-all
// rounds, owners decide with the two-tier set, verdicts travel back, and
// kept records are appended to the mirrored outputs.
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// Runs the job on every rank (initializes MPI itself; a binary started
/// without mpiexec is a 1-rank job). Returns the exit code, the same on
/// every rank; on an unexpected error the rank reports it with its rank
/// number and aborts the whole job (no rank is left waiting).
int run_dedup(const std::vector<std::string>& args);

}  // namespace bloomshard::app
