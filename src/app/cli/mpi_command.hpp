// The one way an MPI command (dedup, query, merge) runs: an optional hook
// before MPI starts, MPI's environment, the parse (the same on every rank),
// rank 0's message when the parse ends the command (help, version, bad
// options), and the single catch that reports an error with its rank and
// aborts the whole job (report_error_and_abort), so that no rank waits
// forever in a collective.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/options/parsed_options.hpp"
#include "comm/communicator.hpp"
#include "comm/environment.hpp"

namespace bloomshard::app {

/// What one MPI command is made of.
template <class Config>
struct MpiCommand {
  std::string_view name;  ///< "dedup": the prefix of its messages
  /// Pure and the same on every rank: all ranks agree without a message.
  std::function<ParsedOptions<Config>(const std::vector<std::string>&)> parse;
  /// The job; returns the exit code, the same on every rank. May throw: a
  /// CommandExit ends the job with its own code, anything else with
  /// kExitFailure.
  std::function<int(const comm::Communicator&, Config)> run;
  /// Runs before MPI_Init (e.g. signal handlers, so no signal is lost).
  std::function<void()> before_mpi = {};
};

/// Rank 0 prints the message a parse ended with: a text of exit code 0
/// (help, version) on stdout as it is, a refusal on stderr as "bloomshard
/// NAME: MESSAGE"; a newline is added where the message lacks one.
void print_parse_exit(const comm::Communicator& world, std::string_view name, int exit_code,
                      const std::string& message);

/// Returns `job()`'s exit code; an exception it throws is reported and
/// aborts the whole job (report_error_and_abort with kExitFailure), so
/// this never returns on an error.
int run_or_abort(const comm::Communicator& world, std::string_view name,
                 const std::function<int()>& job);

/// Runs `command` over `args` on this rank (MPI initialized here and
/// finalized on return); returns the process exit code.
template <class Config>
int run_mpi_command(const MpiCommand<Config>& command, const std::vector<std::string>& args) {
  if (command.before_mpi) command.before_mpi();
  comm::Environment env;
  comm::Communicator world;
  ParsedOptions<Config> parsed = command.parse(args);
  if (parsed.exit_code) {
    print_parse_exit(world, command.name, *parsed.exit_code, parsed.message);
    return *parsed.exit_code;
  }
  return run_or_abort(world, command.name,
                      [&] { return command.run(world, std::move(parsed.config)); });
}

}  // namespace bloomshard::app
