// The one MPI command wrapper (app/cli/mpi_command.hpp), through real MPI:
// each case runs in a child process (a death test) that initializes MPI as
// a singleton, so the exit code and the stderr line are what a user sees.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

#include "app/cli/exit_codes.hpp"
#include "app/cli/mpi_command.hpp"
#include "app/report/job_abort.hpp"

namespace bloomshard::app {
namespace {

struct ProbeConfig {
  int value = 0;
};

ParsedOptions<ProbeConfig> parse_value(const std::vector<std::string>& args) {
  if (args.empty()) return stop_with<ProbeConfig>(kExitUsage, "--value must be given");
  ParsedOptions<ProbeConfig> out;
  out.config.value = std::stoi(args[0]);
  return out;
}

// Runs `run` as the command "probe" over `args` and exits with its code.
[[noreturn]] void run_probe(std::function<int(const comm::Communicator&, ProbeConfig)> run,
                            std::vector<std::string> args, std::function<void()> before_mpi = {}) {
  std::exit(run_mpi_command<ProbeConfig>(
      {.name = "probe", .parse = parse_value, .run = std::move(run), .before_mpi = before_mpi},
      args));
}

TEST(MpiCommandDeathTest, ABadParseIsPrintedOnceAndEndsTheCommandWithoutRunningIt) {
  EXPECT_EXIT(run_probe([](const comm::Communicator&, ProbeConfig) { return 99; }, {}),
              ::testing::ExitedWithCode(kExitUsage), "^bloomshard probe: --value must be given\n$");
}

TEST(MpiCommandDeathTest, TheHookRunsBeforeMpiAndTheJobGetsTheParsedConfig) {
  EXPECT_EXIT(run_probe([](const comm::Communicator& world,
                           ProbeConfig c) { return world.size() == 1 ? c.value : 98; },
                        {"7"},
                        [] {
                          if (comm::Environment::initialized()) std::_Exit(97);
                        }),
              ::testing::ExitedWithCode(7), "");
}

TEST(MpiCommandDeathTest, ACommandExitEndsTheJobWithItsOwnCodeAsAFact) {
  EXPECT_EXIT(run_probe(
                  [](const comm::Communicator&, ProbeConfig) -> int {
                    throw CommandExit("a newer attempt of this run took over", kExitRunLocked);
                  },
                  {"1"}),
              ::testing::ExitedWithCode(kExitRunLocked),
              "bloomshard probe: rank 0 of 1 on [^ :]+: a newer attempt of this run took over");
}

TEST(MpiCommandDeathTest, AnyOtherErrorEndsTheJobWithFailureNamingTheRank) {
  EXPECT_EXIT(run_probe([](const comm::Communicator&,
                           ProbeConfig) -> int { throw std::runtime_error("disk full"); },
                        {"1"}),
              ::testing::ExitedWithCode(kExitFailure),
              "bloomshard probe: rank 0 of 1 on [^ :]+: error: disk full");
}

}  // namespace
}  // namespace bloomshard::app
