// A dedup job's setup, agreed by all ranks: rank 0 finds the inputs, removes
// what a killed attempt left half written, decides how the run starts
// (run_state.hpp) and prepares the output dir; every rank gets the result in
// one broadcast. Rank 0's file work may take long: the other ranks wait in
// the broadcast without beating, under a longer watchdog allowance.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "app/options/dedup_options.hpp"
#include "app/run/run_state.hpp"
#include "app/run/watchdog.hpp"
#include "comm/communicator.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// The agreed setup: an exit code (0: go on; else rank 0 printed why), the
/// plan and the inputs.
struct JobSetup {
  int exit_code = 0;
  StartPlan plan;
  std::vector<io::InputFile> files;
  /// Keys a fresh filter is sized for (--capacity, or rank 0's estimate;
  /// 0 when the run resumes or continues a state, which keeps its own).
  std::uint64_t capacity = 0;
};

/// Rank 0's part: the setup as bytes. First byte: the exit code (0 = go),
/// then the plan's length, a space, the capacity, a newline, the plan and
/// the input list, or the error text.
[[nodiscard]] std::string setup_on_rank0(const DedupConfig& config);

/// Collective: rank 0 sets up, every rank gets the result; a refusal is
/// printed by rank 0 ("bloomshard dedup: " and the reason).
[[nodiscard]] JobSetup agree_on_setup(const comm::Communicator& world, const DedupConfig& config,
                                      Watchdog& watchdog);

/// Keys a new filter is sized for: --capacity, or (what the job sets as
/// --capacity from JobSetup::capacity) an estimate from the input bytes at
/// 64 bytes per record on disk (x4 for compressed files), generous for
/// documents, about right for URL lists, at least 100k; under --unit
/// minhash the sampled records times the bands. Scalable layers absorb an
/// underestimate at the cost of one more probe per layer.
[[nodiscard]] std::uint64_t initial_capacity(const DedupConfig& config,
                                             std::span<const io::InputFile> files);

}  // namespace bloomshard::app
