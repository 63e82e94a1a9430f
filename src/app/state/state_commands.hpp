// Inspection of a --state dir: `bloomshard info` (what the newest
// checkpoint holds) and `bloomshard verify` (recompute every checksum,
// collectively when run under mpiexec).
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// `bloomshard info --state DIR [--json]`: not collective, no MPI.
int run_info(const std::vector<std::string>& args);

/// `bloomshard verify --state DIR [--all]`: exit 0 only when every slice
/// of the checked generation(s) verifies.
int run_verify(const std::vector<std::string>& args);

}  // namespace bloomshard::app
