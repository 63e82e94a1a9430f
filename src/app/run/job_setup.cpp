#include "app/run/job_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_manifest.hpp"
#include "comm/heartbeat.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

std::string refusal(int code, const std::string& why) {
  return std::string(1, static_cast<char>(code)) + why;
}

std::uint64_t estimate_capacity(std::span<const io::InputFile> files) {
  std::uint64_t records = 0;
  for (const auto& f : files) {
    const std::uint64_t bytes = f.compression == io::Compression::kNone ? f.size : 4 * f.size;
    records += bytes / 64 + 1;
  }
  return std::max<std::uint64_t>(records, 100'000);
}

}  // namespace

std::string setup_on_rank0(const DedupConfig& c) {
  std::vector<fs::path> args(c.inputs.begin(), c.inputs.end());
  std::vector<io::InputFile> files;
  try {
    files = io::discover_inputs(args);
  } catch (const std::exception& e) {
    return refusal(kExitUsage, e.what());
  }
  if (files.empty()) return refusal(kExitUsage, "no input files found");
  if (!c.state_dir.empty()) {
    // Under the run's lock no attempt writes: what a killed one left half
    // written goes now, before this start decides or writes anything.
    try {
      (void)io::remove_stale_temporaries(c.state_dir);
    } catch (const std::exception& e) {
      return refusal(kExitFailure, e.what());
    }
  }
  const StartDecision d = decide_start(c, args, files);
  if (!d.error.empty()) return refusal(d.exit_code, d.error);
  const std::string plan = encode_plan(d.plan);
  return std::string(1, '\0') + std::to_string(plan.size()) + '\n' + plan + encode_inputs(files);
}

JobSetup agree_on_setup(const comm::Communicator& world, const DedupConfig& config,
                        Watchdog& watchdog) {
  watchdog.allow_quiet(4 * config.stall_timeout);
  const std::string setup = world.broadcast(world.rank() == 0 ? setup_on_rank0(config) : "");
  watchdog.allow_quiet(0);  // the quiet period ends with the setup
  comm::heartbeat();
  JobSetup s;
  if (setup[0] != '\0') {
    if (world.rank() == 0) std::cerr << "bloomshard dedup: " << setup.substr(1) << '\n';
    s.exit_code = setup[0];
    return s;
  }
  const std::size_t nl = setup.find('\n');
  const std::size_t plan_size = std::stoull(setup.substr(1, nl - 1));
  s.plan = decode_plan(std::string_view(setup).substr(nl + 1, plan_size));
  s.files = decode_inputs(std::string_view(setup).substr(nl + 1 + plan_size));
  return s;
}

std::uint64_t initial_capacity(const DedupConfig& config, std::span<const io::InputFile> files) {
  return config.capacity.value_or(estimate_capacity(files));
}

}  // namespace bloomshard::app
