// Options of `bloomshard dedup`: one plain struct filled by
// Boost.Program_options from the command line and an optional INI job file
// (--config; the command line wins). Validation is pure and runs on every
// rank with the same arguments, so all ranks agree without a message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/io/checkpoint_store.hpp"

namespace bloomshard::app {

/// What a broken input (truncated or corrupt compressed data, an unreadable
/// file) does to the job: end it (checkpointed first, with --state), or
/// skip the rest of that input and go on (docs/reliability.md).
enum class OnInputError : std::uint8_t { kFail = 0, kSkip = 1 };

struct DedupConfig {
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string key_field = "id";
  std::optional<std::uint64_t> capacity;  ///< unset: estimated from input bytes
  double fpr = 0.001;
  std::uint32_t slices = 4096;
  core::NormalizePolicy normalize = core::NormalizePolicy::kNone;
  bool normalize_pinned = false;           ///< the version was named ("nfc-casefold/v2"): a state
                                           ///< saved with another version is refused, not adopted
  std::uint64_t batch_bytes = 8ULL << 20;  ///< input bytes read per rank per round
                                           ///< (8 MiB: as fast as 16 MiB here, 25 MiB less RSS)
  std::uint64_t max_key_bytes = 64ULL << 10;
  std::uint64_t max_line_bytes = 16ULL << 20;
  double max_reject_fraction = 0.01;
  std::string metrics_path;
  double progress_seconds = 0;  ///< 0: no progress lines
  bool overwrite = false;
  std::uint64_t hash_seed = 0;  ///< 0: core::kDefaultHashSeed
  // Checkpointing (all need --state).
  std::string state_dir;                ///< empty: no checkpoints, no resume
  double checkpoint_every = 0;          ///< seconds between checkpoints; 0: by rounds/signal only
  std::uint64_t checkpoint_rounds = 0;  ///< rounds between checkpoints; 0: off
  std::uint64_t max_delta_bytes = 512ULL << 20;  ///< tier-2 delta per rank that forces one
  int keep_generations = 2;
  io::CheckpointDataPath checkpoint_data_path = io::CheckpointDataPath::kAuto;
  // Broken and changed inputs (issue 11).
  OnInputError on_input_error = OnInputError::kSkip;  ///< skip: a multi-day run goes on
  std::uint64_t max_skipped_inputs = 10;              ///< more broken inputs than this: exit 3
  bool revalidate_inputs = false;  ///< accept a changed started input whose consumed prefix
                                   ///< is unchanged (read again to check it, on rank 0)
};

/// What parsing decided: run, or exit at once with `exit_code` after printing
/// `message` (help and version texts exit 0, bad options exit kExitUsage).
struct ParsedDedup {
  DedupConfig config;
  std::optional<int> exit_code;
  std::string message;
};

/// Parses and validates; never throws for user errors (they become a
/// message and kExitUsage).
[[nodiscard]] ParsedDedup parse_dedup_options(const std::vector<std::string>& args);

}  // namespace bloomshard::app
