// The bloomshard command line: `bloomshard <command> [options]`. Each
// subcommand is a function over its arguments (without the command word)
// that returns the process exit code (see exit_codes.hpp).
#pragma once

#include <string>
#include <vector>

namespace bloomshard::app {

/// Entry point of the binary: dispatches argv[1] to a subcommand.
int run_cli(int argc, char** argv);

/// Runs `args[0]` (a command word, `args` not empty) with the rest as its
/// arguments; an unknown word exits kExitUsage naming the nearest command.
int run_cli_command(std::vector<std::string> args);

}  // namespace bloomshard::app
