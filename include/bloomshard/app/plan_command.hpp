// `bloomshard plan`: the sizing plan of a dedup job before it runs
// (core/sizing_plan.hpp), as a table or one JSON object. No MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bloomshard/app/dedup_options.hpp"

namespace bloomshard::app {

/// `bloomshard plan --records N --ranks R [options] [--json]`.
int run_plan(const std::vector<std::string>& args);

/// The line dedup prints at start (rank 0), so that a Slurm log shows what
/// the job expects: the plan for `capacity` keys (--capacity, or dedup's
/// estimate from the input bytes), all distinct, of input_bytes / capacity
/// bytes each, with the job's rank count, slices, FPR, batch and checkpoint
/// interval, and the `bloomshard plan` command that gives the full table.
[[nodiscard]] std::string dedup_plan_line(const DedupConfig& config, std::uint64_t input_bytes,
                                          std::uint64_t capacity, std::uint32_t ranks,
                                          std::uint32_t slices);

}  // namespace bloomshard::app
