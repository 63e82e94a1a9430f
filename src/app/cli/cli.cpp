#include "app/cli/cli.hpp"

#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/cli/launch_command.hpp"
#include "app/cli/plan_command.hpp"
#include "app/cli/usage_text.hpp"
#include "app/cli/version.hpp"
#include "app/options/exact_options.hpp"
#include "app/run/dedup_job.hpp"
#include "app/state/merge_job.hpp"
#include "app/state/query_job.hpp"
#include "app/state/state_commands.hpp"
#include "core/self_check.hpp"
#include "tools/bench_filter.hpp"
#include "tools/synth.hpp"

namespace bloomshard::app {
namespace {

// A command that takes no option refuses anything but --help (exit 2), so a
// stray word is never silently dropped. -1: go on.
int refuse_arguments(const std::string& command, const std::vector<std::string>& args,
                     std::string_view summary) {
  if (args.empty()) return -1;
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "usage: bloomshard " << command << "\n\n" << summary << '\n';
    return kExitOk;
  }
  std::cerr << "bloomshard " << command << ": bad option: unexpected argument '" << args[0]
            << "': " << command << " takes no options\n";
  return kExitUsage;
}

constexpr std::string_view kBenchUsage = R"(usage: bloomshard bench <benchmark> [options]

benchmarks:
  filter       measure the tier-1 Bloom kernel against the memory floor

`bloomshard bench filter --help` shows its options.
)";

int run_bench(std::vector<std::string> args) {
  if (!args.empty() && args[0] == "filter") {
    args.erase(args.begin());
    return run_bench_filter(args);
  }
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kBenchUsage;
    return kExitOk;
  }
  const std::string given = args.empty() ? std::string() : args[0];
  std::cerr << "bloomshard bench: "
            << (given.empty()
                    ? std::string("name a benchmark")
                    : "unknown benchmark '" + given + "'" + did_you_mean(given, {"filter"}, ""))
            << "\n"
            << kBenchUsage;
  return kExitUsage;
}

// `bloomshard help [exit-codes | examples | COMMAND]`: the texts the man
// page is generated from, or a command's --help.
int run_help(std::vector<std::string> args) {
  if (args.empty()) {
    std::cout << top_level_usage();
    return kExitOk;
  }
  if (args.size() == 1 && args[0] == "exit-codes") {
    std::cout << exit_codes_text();
    return kExitOk;
  }
  if (args.size() == 1 && args[0] == "examples") {
    std::cout << examples_text();
    return kExitOk;
  }
  args.push_back("--help");
  return run_cli_command(args);
}

int run_self_check_command() {
  const core::SelfCheckReport report = core::run_self_check();
  std::cout << report.text;
  return report.ok ? kExitOk : kExitFailure;
}

}  // namespace

int run_cli_command(std::vector<std::string> args) {
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
    if (command == "bench") return run_bench(args);
    if (command == "help") return run_help(args);
    if (command == "self-check") {
      if (const int rc = refuse_arguments(command, args, "run the sequential core's self-check");
          rc >= 0) {
        return rc;
      }
      return run_self_check_command();
    }
    if (command == "version" || command == "--version") {
      if (const int rc = refuse_arguments("version", args, "print the version"); rc >= 0) return rc;
      std::cout << version_text();
      return kExitOk;
    }
  } catch (const std::exception& e) {
    // Commands without MPI end here; dedup handles its own errors per rank.
    std::cerr << "bloomshard " << command << ": error: " << e.what() << '\n';
    return kExitFailure;
  }
  std::cerr << "bloomshard: unknown command '" << command << "'"
            << did_you_mean(command, command_names(), "") << "\n\n"
            << top_level_usage();
  return kExitUsage;
}

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << top_level_usage();
    return args.empty() ? kExitUsage : kExitOk;
  }
  return run_cli_command(std::move(args));
}

}  // namespace bloomshard::app
