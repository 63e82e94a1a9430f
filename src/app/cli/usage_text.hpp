// The texts that describe the program as a whole: the command list, the
// exit codes (from kExitCodeTable) and the examples. The top-level --help
// prints them, and cmake/make_manpage.sh builds the man page's COMMANDS,
// EXIT STATUS and EXAMPLES sections from `bloomshard help exit-codes` and
// `bloomshard help examples`, so the three cannot drift apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::app {

/// The names `bloomshard <command>` accepts ("bench" for `bench filter`).
[[nodiscard]] std::vector<std::string> command_names();

/// The top-level help: synopsis, commands, exit codes and examples.
[[nodiscard]] std::string top_level_usage();

/// One line per exit code, "  CODE  MEANING", ascending.
[[nodiscard]] std::string exit_codes_text();

/// Commented command lines, each preceded by a "# what it does" line.
[[nodiscard]] std::string examples_text();

}  // namespace bloomshard::app
