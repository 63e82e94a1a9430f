#include "bloomshard/app/cli.hpp"

#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/app/bench_filter.hpp"
#include "bloomshard/app/dedup_job.hpp"
#include "bloomshard/app/exit_codes.hpp"
#include "bloomshard/app/launch_command.hpp"
#include "bloomshard/app/merge_job.hpp"
#include "bloomshard/app/plan_command.hpp"
#include "bloomshard/app/query_job.hpp"
#include "bloomshard/app/state_commands.hpp"
#include "bloomshard/app/synth.hpp"
#include "bloomshard/app/version.hpp"
#include "bloomshard/core/self_check.hpp"

namespace bloomshard::app {
namespace {

constexpr std::string_view kUsage = R"(usage: bloomshard <command> [options]

commands:
  dedup        remove records whose key was seen before (run under mpirun/srun)
  query        which input records' keys a saved --state holds (read only; mpirun/srun)
  merge        the union of compatible finished states into a new one (mpirun/srun)
  launch       run `mpiexec ... bloomshard dedup ...` so that Ctrl-C/SIGTERM checkpoint
               and the ranks' exit status (75) reaches the caller
  plan         a dedup job's memory, disk, checkpoint and exchange costs before it runs
  synth        write a deterministic synthetic corpus with a known duplicate rate
  info         show what a --state dir's newest checkpoint holds
  verify       recompute every checksum of a --state dir's checkpoint
  bench filter measure the tier-1 Bloom kernel against the memory floor
  self-check   run the sequential core's self-check (no MPI)
  version      print the version and the saved-format identifiers

`bloomshard <command> --help` shows the options of a command.
exit codes: 0 ok, 1 runtime error, 2 bad usage, 3 too many rejects,
            4 output dir holds another run's outputs, 75 checkpointed (requeue)
)";

int run_self_check_command() {
  const core::SelfCheckReport report = core::run_self_check();
  std::cout << report.text;
  return report.ok ? kExitOk : kExitFailure;
}

}  // namespace

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "dedup") return run_dedup(args);
    if (command == "query") return run_query(args);
    if (command == "merge") return run_merge(args);
    if (command == "launch") return run_launch(args);
    if (command == "plan") return run_plan(args);
    if (command == "synth") return run_synth(args);
    if (command == "info") return run_info(args);
    if (command == "verify") return run_verify(args);
    if (command == "self-check") return run_self_check_command();
    if (command == "version" || command == "--version") {
      std::cout << version_text();
      return kExitOk;
    }
    if (command == "bench") {
      if (!args.empty() && args[0] == "filter") {
        args.erase(args.begin());
        return run_bench_filter(args);
      }
      std::cerr << "bloomshard bench: expected `bench filter`\n";
      return kExitUsage;
    }
  } catch (const std::exception& e) {
    // Commands without MPI end here; dedup handles its own errors per rank.
    std::cerr << "bloomshard " << command << ": error: " << e.what() << '\n';
    return kExitFailure;
  }
  std::cerr << "bloomshard: unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}

}  // namespace bloomshard::app
