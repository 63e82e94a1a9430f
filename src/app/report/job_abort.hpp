// How an MPI command (dedup, query, merge) reports the error that ends it
// and aborts the whole job, so that no rank waits forever in a collective.
// An error every rank raised together is printed once; Open MPI's
// MPI_ABORT banner follows either way and cannot be suppressed.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "comm/communicator.hpp"

namespace bloomshard::app {

/// An error that ends a command with its own exit code rather than
/// kExitFailure, reported as a fact, not as "error:" (a newer attempt of
/// the run took over: exit kExitRunLocked).
class CommandExit : public std::runtime_error {
 public:
  CommandExit(const std::string& what, int exit_code)
      : std::runtime_error(what), exit_code_(exit_code) {}
  [[nodiscard]] int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

/// Never returns: prints "bloomshard COMMAND: rank R of N on HOST: error:
/// WHAT" on this rank, or, for an error all ranks raise with the same text
/// (io::CollectiveCheckpointError, whose text names the failing ranks),
/// "bloomshard COMMAND: error: WHAT" on rank 0 only, then MPI_Aborts with
/// `exit_code`. A CommandExit prints "bloomshard COMMAND: rank R of N on
/// HOST: WHAT" and aborts with its own code. In the collective case ranks
/// other than 0 wait (up to 10 s) for rank 0's abort, so none of theirs
/// kills rank 0 before its line is out.
[[noreturn]] void report_error_and_abort(const comm::Communicator& world, std::string_view command,
                                         const std::exception& error, int exit_code);

}  // namespace bloomshard::app
