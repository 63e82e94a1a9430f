// SIGUSR1 / SIGTERM / SIGINT as a request to stop at the next round boundary
// with a checkpoint and exit 75 (Slurm's warning signal before a time limit
// or preemption, Ctrl-C). mpirun forwards only SIGUSR1 (and USR2, TSTP,
// CONT, ALRM) to the ranks; it answers SIGINT/SIGTERM by killing them, which
// `bloomshard launch` avoids (launch_command.hpp).
// The handler only sets a flag, so a second signal during a checkpoint
// cannot corrupt anything.
#pragma once

namespace bloomshard::app {

/// Installs the handlers. Call first thing in main, before MPI starts, so a
/// signal that arrives while the ranks start up is not lost.
void install_stop_signal_handlers() noexcept;

/// True once a stop signal arrived in this process.
[[nodiscard]] bool stop_requested() noexcept;

/// Number of the first stop signal received (0: none).
[[nodiscard]] int stop_signal_number() noexcept;

}  // namespace bloomshard::app
