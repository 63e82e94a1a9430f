// `bloomshard plan`: the sizing plan of a dedup job before it runs
// (core/bloom/sizing_plan.hpp), as a table or one JSON object. No MPI.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "app/feed/input_sample.hpp"
#include "app/options/dedup_options.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// `bloomshard plan --records N --ranks R [options] [--json]`.
int run_plan(const std::vector<std::string>& args);

/// The line dedup prints at start (rank 0), so that a Slurm log shows what
/// the job expects: the inputs sampled (app/feed/input_sample.hpp: records,
/// record and key bytes, the duplicate share within the sample, a lower
/// bound), and the plan for them with the job's --capacity (given or
/// dedup's estimate), rank count, slices, FPR and batch: at most how many
/// distinct keys, peak RSS per rank, and with --state the state and
/// checkpoint sizes; then the `bloomshard plan` command that gives the full
/// table. What the sample cannot tell it leaves out: tier-2 lookups (the
/// duplicates beyond the sample), memory under --unit paragraph (keys per
/// record), anything when no record was read.
[[nodiscard]] std::string dedup_plan_line(const DedupConfig& config,
                                          std::span<const io::InputFile> files,
                                          std::uint64_t capacity, std::uint32_t ranks,
                                          std::uint32_t slices);

/// The same line from a sample already taken (exposed for tests).
[[nodiscard]] std::string dedup_plan_line(const DedupConfig& config, const InputSample& sample,
                                          std::uint64_t capacity, std::uint32_t ranks,
                                          std::uint32_t slices);

}  // namespace bloomshard::app
