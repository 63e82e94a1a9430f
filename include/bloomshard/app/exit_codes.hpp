// Process exit codes, documented in README.md and docs/slurm.md; job
// scripts act on them.
#pragma once

namespace bloomshard::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         ///< runtime error (I/O, MPI, corrupt data)
inline constexpr int kExitUsage = 2;           ///< bad options or job file
inline constexpr int kExitTooManyRejects = 3;  ///< --max-reject-fraction or --max-skipped-inputs
inline constexpr int kExitOutputInUse = 4;     ///< output dir holds another run's outputs
inline constexpr int kExitRunLocked = 5;       ///< another live attempt holds this run
inline constexpr int kExitStalled = 6;  ///< watchdog: no progress (--stall-timeout) or orphaned
inline constexpr int kExitCheckpointedRequeue = 75;  ///< EX_TEMPFAIL: checkpointed, please requeue

}  // namespace bloomshard::app
