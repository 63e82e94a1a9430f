// `bloomshard launch -- mpiexec ... bloomshard dedup ...`: runs a launcher
// so that a stop request reaches the ranks and the ranks' exit status (75,
// checkpointed) reaches the caller. Open MPI 4.1's mpirun answers SIGINT and
// SIGTERM by killing its ranks (SIGCONT, SIGTERM 1 s later, SIGKILL 1 s after
// that) and exits 1, too soon for a checkpoint; it forwards SIGUSR1 to every
// rank and then returns their status. The wrapper turns INT/TERM/HUP/USR1
// sent to it or to its process group into one SIGUSR1 to the launcher, which
// runs in a process group of its own so that a group signal (Ctrl-C) never
// reaches it directly. docs/slurm.md has the measurements.
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// `bloomshard launch [--] COMMAND [ARGS...]`: no MPI. Returns COMMAND's
/// exit status, 128 + N when it died of signal N, 127 when it cannot be
/// started, 2 on bad usage.
int run_launch(const std::vector<std::string>& args);

}  // namespace bloomshard::app
