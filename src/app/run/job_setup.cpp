#include "app/run/job_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_manifest.hpp"
#include "app/feed/input_sample.hpp"
#include "comm/heartbeat.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/output/json_escape.hpp"

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

// Keys a new filter is sized for when --capacity is not given. A record is
// one key, except under --unit minhash where it is B band keys: there the
// inputs are sampled (as `plan` does) and the records estimated times B, as
// the bytes-only estimate above, made for short records, sizes the filter
// and the delta index for ~4x the band keys of 2-5 KB documents. Rank 0
// computes it once; every rank gets the same figure in the setup.
std::uint64_t default_capacity(const DedupConfig& c, std::span<const io::InputFile> files) {
  if (c.capacity) return *c.capacity;
  if (c.key.unit == core::KeyUnit::kMinHash) {
    const InputSample sample = sample_inputs(c, files);
    if (sample.estimated_records != 0) {
      return std::max<std::uint64_t>(sample.estimated_records * c.key.bands, 100'000);
    }
  }
  return estimate_capacity(files);
}

// The first input whose path is not valid UTF-8, or "". A state records
// each input's paths in its run manifest as JSON strings that must read
// back byte for byte, so such a name cannot be recorded: refused before any
// work, not at the first checkpoint after the outputs were written.
std::string name_not_utf8(std::span<const io::InputFile> files) {
  std::string scratch;
  for (const auto& f : files) {
    for (const std::string_view name :
         {std::string_view(f.absolute_path.native()), std::string_view(f.relative_path)}) {
      scratch.clear();
      if (!io::append_json_string_contents(scratch, name)) return f.absolute_path.native();
    }
  }
  return {};
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
    if (const std::string bad = name_not_utf8(files); !bad.empty()) {
      return refusal(kExitUsage, "input '" + bad +
                                     "': its name is not valid UTF-8, and --state records input "
                                     "names as UTF-8 (rename it, or run without --state)");
    }
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
  const std::uint64_t capacity = d.plan.kind == StartKind::kFresh ? default_capacity(c, files) : 0;
  return std::string(1, '\0') + std::to_string(plan.size()) + ' ' + std::to_string(capacity) +
         '\n' + plan + encode_inputs(files);
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
  const std::size_t space = setup.find(' ');
  const std::size_t plan_size = std::stoull(setup.substr(1, space - 1));
  s.capacity = std::stoull(setup.substr(space + 1, nl - space - 1));
  s.plan = decode_plan(std::string_view(setup).substr(nl + 1, plan_size));
  s.files = decode_inputs(std::string_view(setup).substr(nl + 1 + plan_size));
  return s;
}

std::uint64_t initial_capacity(const DedupConfig& config, std::span<const io::InputFile> files) {
  return config.capacity.value_or(estimate_capacity(files));
}

}  // namespace bloomshard::app
