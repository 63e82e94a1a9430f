// Options of `bloomshard dedup`: one plain struct filled by
// Boost.Program_options from the command line and an optional INI job file
// (--config; the command line wins). Validation is pure and runs on every
// rank with the same arguments, so all ranks agree without a message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bloomshard/app/annotate_mode.hpp"
#include "bloomshard/app/progress.hpp"
#include "bloomshard/app/run_lease.hpp"
#include "bloomshard/comm/router.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/slot_window.hpp"
#include "bloomshard/io/checkpoint_store.hpp"

namespace bloomshard::app {

/// What a broken input (truncated or corrupt compressed data, an unreadable
/// file) does to the job: end it (checkpointed first, with --state), or
/// skip the rest of that input and go on (docs/reliability.md).
enum class OnInputError : std::uint8_t { kFail = 0, kSkip = 1 };

struct DedupConfig {
  std::vector<std::string> inputs;
  std::string output_dir;
  /// --mode and --annotate-format (issue 13): kept records or attribute files.
  AnnotateConfig annotate;
  /// Key fields, --normalize, --text-normalize, --key-digest and
  /// --missing-field: how a record's key bytes are made (core/key_scheme.hpp).
  core::KeyScheme key;
  std::optional<std::uint64_t> capacity;  ///< unset: estimated from input bytes
  double fpr = 0.001;
  std::uint32_t slices = 0;       ///< 0: core::default_num_slices(ranks, capacity)
  bool normalize_pinned = false;  ///< the version was named ("nfc-casefold/v2"): a state
                                  ///< saved with another version is refused, not adopted
  std::uint64_t batch_bytes = 0;  ///< input bytes read per rank per round;
                                  ///< 0: core::default_batch_bytes(ranks)
  std::uint64_t max_key_bytes = 64ULL << 10;
  /// Payload bytes one rank may send or receive in one exchange; a round
  /// over it is split into sub-rounds (comm::KeyRouter::route).
  std::uint64_t max_exchange_bytes = comm::kDefaultSubroundBudget;
  /// flat, node or auto (comm::ExchangeMode); node-aware from 1024 ranks.
  comm::ExchangeMode exchange = comm::ExchangeMode::kAuto;
  std::uint64_t max_line_bytes = 16ULL << 20;
  double max_reject_fraction = 0.01;
  std::string metrics_path;
  double progress_seconds = 0;  ///< 0: no progress lines
  ProgressStyle progress_style = ProgressStyle::kAuto;
  bool overwrite = false;
  std::uint64_t hash_seed = 0;  ///< 0: core::kDefaultHashSeed
  // Checkpointing (all need --state).
  std::string state_dir;                ///< empty: no checkpoints, no resume
  double checkpoint_every = 0;          ///< seconds between checkpoints; 0: by rounds/signal only
  std::uint64_t checkpoint_rounds = 0;  ///< rounds between checkpoints; 0: off
  std::uint64_t max_delta_bytes = 512ULL << 20;  ///< tier-2 delta per rank that forces one
  int keep_generations = 2;
  io::CheckpointDataPath checkpoint_data_path = io::CheckpointDataPath::kAuto;
  // Checkpoint store (issue 10): tier-2 compaction and MPI-IO hints.
  std::uint32_t compaction_fanout = 4;  ///< runs of one level merged into one (>= 2)
  std::uint32_t max_runs = 10;          ///< tier-2 runs a generation may reference (>= 2)
  std::string mpiio_hints;              ///< "key=value,..." MPI_Info hints for checkpoint files;
                                        ///< empty: $BLOOMSHARD_MPIIO_HINTS
  // Faults (docs/reliability.md): fencing, lock wait, stall watchdog.
  double lock_wait = 120;     ///< seconds a start waits for an earlier attempt to end (> the
                              ///< 90 s lease timeout and the 60 s stall timeout)
  double stall_timeout = 60;  ///< seconds without progress before a rank ends the job; 0: off
  FencingMode fencing = FencingMode::kAuto;
  // Broken and changed inputs (issue 11).
  OnInputError on_input_error = OnInputError::kSkip;  ///< skip: a multi-day run goes on
  std::uint64_t max_skipped_inputs = 10;              ///< more broken inputs than this: exit 3
  bool revalidate_inputs = false;  ///< accept a changed started input whose consumed prefix
                                   ///< is unchanged (read again to check it, on rank 0)
  /// Rolling window (issue 13): --window N with --slot-records or
  /// --slot-every (window 0: none; app/window_slots.hpp).
  core::WindowSpec window;
  /// Big single files (issue 12, app/split_inputs.hpp): at a first start,
  /// cut uncompressed inputs larger than split_min_bytes into line-aligned
  /// ranges read by several ranks (filter mode only).
  bool split_inputs = true;
  std::uint64_t split_min_bytes = 64ULL << 20;
  /// The options the user set (command line or job file), not left at their
  /// defaults: a state overrides some of them, and says so only for these.
  std::vector<std::string> explicit_options;
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
