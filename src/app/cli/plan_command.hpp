// `bloomshard plan`: the sizing plan of a dedup job before it runs
// (core/bloom/sizing_plan.hpp), as a table or one JSON object. No MPI.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "app/feed/input_sample.hpp"
#include "app/options/dedup_options.hpp"
#include "core/bloom/sizing_plan.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// `bloomshard plan --records N --ranks R [options] [--json]`.
int run_plan(const std::vector<std::string>& args);

/// The key-level plan inputs of a `--unit minhash` job from its
/// record-level ones: every record routes `bands` band keys, so keys =
/// records x bands; a key's tier-2 bytes are its 16-byte digest plus, with
/// confirmation (confirm_bits != 0), the record's b-bit signature stored
/// beside it (core::minhash_tier2_payload_per_record / bands); a round of
/// --batch-bytes of text carries `bands` keys per record, and
/// records_per_second (records) becomes keys per second. unique_fraction
/// stays as given: under minhash it is the share of band keys never seen
/// before (1: the upper bound). Throws std::invalid_argument naming
/// --bands/--rows when B x R is outside 1..core::kMaxSignatureValues or
/// records x bands overflows.
[[nodiscard]] core::PlanInputs minhash_key_inputs(const core::PlanInputs& records,
                                                  std::uint32_t bands, std::uint32_t rows,
                                                  std::uint32_t confirm_bits);

/// The line dedup prints at start (rank 0), so that a Slurm log shows what
/// the job expects: the inputs sampled (app/feed/input_sample.hpp: records,
/// record and key bytes, the duplicate share within the sample, a lower
/// bound), and the plan for them with the job's --capacity (given or
/// dedup's estimate), rank count, slices, FPR and batch: at most how many
/// distinct keys, peak RSS per rank, and with --state the state and
/// checkpoint sizes; then the `bloomshard plan` command that gives the full
/// table. Under --unit minhash it gives the tier-2 payload per new record
/// without and with confirmation, and plans B band keys per record, all
/// counted new (an upper bound: which band keys repeat is not sampled).
/// What the sample cannot tell it leaves out: tier-2 lookups (the
/// duplicates beyond the sample), memory under --unit paragraph (keys per
/// record), anything when no record was read.
[[nodiscard]] std::string dedup_plan_line(const DedupConfig& config,
                                          std::span<const io::InputFile> files,
                                          std::uint64_t capacity, std::uint32_t ranks,
                                          std::uint32_t slices);

/// What a confirming run (--unit minhash --confirm-jaccard) that continues
/// a state (resume, incremental) also holds: the forms of the state's
/// `state_keys` band keys, loaded by each rank for its slices (about 116
/// bytes a key resident, core::confirm_table_bytes), as "; the state's
/// forms of N band keys loaded ~X MiB/rank"; "" for any other run.
[[nodiscard]] std::string loaded_forms_plan(const DedupConfig& config, std::uint64_t state_keys,
                                            std::uint32_t ranks);

/// The same line from a sample already taken (exposed for tests).
[[nodiscard]] std::string dedup_plan_line(const DedupConfig& config, const InputSample& sample,
                                          std::uint64_t capacity, std::uint32_t ranks,
                                          std::uint32_t slices);

}  // namespace bloomshard::app
