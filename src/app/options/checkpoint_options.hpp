// The checkpoint group: where a job's state lives (--state), when a
// generation is written, how many are kept, and how the checkpoint store
// writes them (data path, tier-2 compaction, MPI-IO hints). Dedup takes
// them all; merge shares --checkpoint-io.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "app/options/option_table.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {

struct CheckpointOptions {
  std::string state_dir;                ///< empty: no checkpoints, no resume
  double checkpoint_every = 0;          ///< seconds between checkpoints; 0: by rounds/signal only
  std::uint64_t checkpoint_rounds = 0;  ///< rounds between checkpoints; 0: off
  std::uint64_t max_delta_bytes = 512ULL << 20;  ///< tier-2 delta per rank that forces one
  int keep_generations = 2;
  io::CheckpointDataPath checkpoint_data_path = io::CheckpointDataPath::kAuto;
  std::uint32_t compaction_fanout = 4;  ///< runs of one level merged into one (>= 2)
  std::uint32_t max_runs = 10;          ///< tier-2 runs a generation may reference (>= 2)
  std::string mpiio_hints;              ///< "key=value,..." MPI_Info hints for checkpoint files;
                                        ///< empty: $BLOOMSHARD_MPIIO_HINTS
};

/// The checkpoint options as typed, before they are checked.
struct CheckpointFlags {
  std::string checkpoint_io = "auto";
};

/// Registers --state, --checkpoint-every, --checkpoint-rounds,
/// --max-delta-bytes, --keep-generations, --checkpoint-io,
/// --compaction-fanout, --max-runs and --mpiio-hints into `pool`.
void add_checkpoint_options(boost::program_options::options_description& pool,
                            CheckpointOptions& checkpoint, CheckpointFlags& flags);

/// Registers --checkpoint-io alone (merge writes a state too).
void add_checkpoint_io_option(boost::program_options::options_description& pool,
                              std::string& checkpoint_io, OptionsFor command);

/// The data path --checkpoint-io names; throws std::invalid_argument
/// naming the option and the value.
[[nodiscard]] io::CheckpointDataPath parse_checkpoint_io(const std::string& checkpoint_io);

/// Turns the typed flags into `checkpoint`; throws std::invalid_argument.
void apply_checkpoint_flags(const CheckpointFlags& flags, CheckpointOptions& checkpoint);

/// The first value out of range or needing --state (option named), or empty.
[[nodiscard]] std::string checkpoint_problem(const CheckpointOptions& checkpoint);

}  // namespace bloomshard::app
