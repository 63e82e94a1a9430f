// What parsing a command's options decided: run with `config`, or exit at
// once with `exit_code` after printing `message` (help and version texts
// exit 0 on stdout, bad options exit kExitUsage on stderr). Parsing never
// throws for a user's mistake.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace bloomshard::app {

template <class Config>
struct ParsedOptions {
  Config config;
  std::optional<int> exit_code;
  std::string message;
};

/// A parse that ends the command at once with `exit_code` and `message`.
template <class Config>
[[nodiscard]] ParsedOptions<Config> stop_with(int exit_code, std::string message) {
  ParsedOptions<Config> out;
  out.exit_code = exit_code;
  out.message = std::move(message);
  return out;
}

}  // namespace bloomshard::app
