// Process exit codes, and the one table that documents them: the top-level
// --help, the man page's EXIT STATUS (cmake/make_manpage.sh, via `bloomshard
// help exit-codes`) and the README/docs tables checked against it
// (tests/install/check_manpage.sh). Job scripts act on these codes.
#pragma once

#include <array>
#include <string_view>

namespace bloomshard::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         ///< runtime error (I/O, MPI, corrupt data)
inline constexpr int kExitUsage = 2;           ///< bad options or job file
inline constexpr int kExitTooManyRejects = 3;  ///< --max-reject-fraction or --max-skipped-inputs
inline constexpr int kExitOutputInUse = 4;     ///< output dir holds another run's outputs
inline constexpr int kExitRunLocked = 5;       ///< another live attempt holds this run
inline constexpr int kExitStalled = 6;  ///< watchdog: no progress (--stall-timeout) or orphaned
inline constexpr int kExitCheckpointedRequeue = 75;  ///< EX_TEMPFAIL: checkpointed, please requeue

/// One documented exit code: the value and what it means to a user.
struct ExitCodeMeaning {
  int code;
  std::string_view meaning;
};

/// Every code the program exits with, in ascending order.
inline constexpr std::array kExitCodeTable = {
    ExitCodeMeaning{kExitOk, "ok"},
    ExitCodeMeaning{kExitFailure, "runtime error (I/O, MPI, corrupt data)"},
    ExitCodeMeaning{kExitUsage,
                    "bad usage: an unknown option, a stray argument, a bad value or job file, "
                    "a missing path"},
    ExitCodeMeaning{kExitTooManyRejects,
                    "too many rejected records (--max-reject-fraction) or broken inputs "
                    "(--max-skipped-inputs)"},
    ExitCodeMeaning{kExitOutputInUse, "the output dir holds another run's outputs"},
    ExitCodeMeaning{kExitRunLocked,
                    "another live attempt holds this run (after --lock-wait), or a newer "
                    "attempt fenced this one out"},
    ExitCodeMeaning{kExitStalled,
                    "ended by the watchdog: no progress for --stall-timeout s, or an orphaned "
                    "rank"},
    ExitCodeMeaning{kExitCheckpointedRequeue, "checkpointed, please requeue (EX_TEMPFAIL)"},
};

}  // namespace bloomshard::app
