#include "app/options/checkpoint_options.hpp"

#include <stdexcept>

#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

void add_checkpoint_options(po::options_description& pool, CheckpointOptions& c,
                            CheckpointFlags& flags) {
  // clang-format off
  pool.add_options()
    ("state", po::value(&c.state_dir),
     "checkpoint dir: the filter, input cursors and output lengths are saved there and a "
     "restarted job resumes from its LATEST generation (on any rank count)")
    ("checkpoint-every", po::value(&c.checkpoint_every)->default_value(c.checkpoint_every),
     "seconds between checkpoints (fractions allowed; 0: only on rounds, signals, the end)")
    ("checkpoint-rounds", po::value(&c.checkpoint_rounds)->default_value(c.checkpoint_rounds),
     "rounds between checkpoints (0: off)")
    ("max-delta-bytes", po::value(&c.max_delta_bytes)->default_value(c.max_delta_bytes),
     "tier-2 delta memory per rank since the last checkpoint (key bytes + ~22 B/key of "
     "index and record headers); more forces one")
    ("keep-generations", po::value(&c.keep_generations)->default_value(c.keep_generations),
     "checkpoint generations kept in --state (>= 1)")
    ("compaction-fanout", po::value(&c.compaction_fanout)->default_value(c.compaction_fanout),
     "tier-2 runs of one level a checkpoint merges into one run of the next (>= 2); "
     "more: fewer rewrites, more runs per lookup")
    ("max-runs", po::value(&c.max_runs)->default_value(c.max_runs),
     "tier-2 runs a checkpoint generation may reference (>= 2); a Bloom positive "
     "searches each")
    ("mpiio-hints", po::value(&c.mpiio_hints),
     "MPI-IO hints for checkpoint files, key=value[,key=value...] (e.g. Lustre "
     "striping_factor=8,striping_unit=4194304, cb_nodes=4); default: $BLOOMSHARD_MPIIO_HINTS");
  // clang-format on
  add_checkpoint_io_option(pool, flags.checkpoint_io, OptionsFor::kDedup);
}

void add_checkpoint_io_option(po::options_description& pool, std::string& checkpoint_io,
                              OptionsFor command) {
  pool.add_options()(
      "checkpoint-io", po::value(&checkpoint_io)->default_value(checkpoint_io),
      help_for(command,
               "how checkpoint data reach the file: direct (O_DIRECT, bypasses the page cache) | "
               "mpiio (collective MPI-IO) | auto (direct when the file system allows it)",
               "how the new state's data reach the file: direct | mpiio | auto"));
}

io::CheckpointDataPath parse_checkpoint_io(const std::string& checkpoint_io) {
  const auto path = io::parse_checkpoint_data_path(checkpoint_io);
  if (!path) {
    throw std::invalid_argument("--checkpoint-io must be auto, direct or mpiio, not '" +
                                checkpoint_io + "'");
  }
  return *path;
}

void apply_checkpoint_flags(const CheckpointFlags& flags, CheckpointOptions& c) {
  c.checkpoint_data_path = parse_checkpoint_io(flags.checkpoint_io);
}

std::string checkpoint_problem(const CheckpointOptions& c) {
  if (c.checkpoint_every < 0) return "--checkpoint-every must be >= 0";
  if (c.keep_generations < 1) return "--keep-generations must be >= 1";
  if (c.compaction_fanout < 2) return "--compaction-fanout must be >= 2";
  if (c.max_runs < 2) return "--max-runs must be >= 2";
  try {
    (void)io::parse_mpiio_hints(c.mpiio_hints);
  } catch (const std::exception& e) {
    return std::string("--mpiio-hints: ") + e.what();
  }
  if (c.max_delta_bytes < (1ULL << 20)) return "--max-delta-bytes must be >= 1 MiB";
  if (c.state_dir.empty() && (c.checkpoint_every > 0 || c.checkpoint_rounds > 0)) {
    return "--checkpoint-every/--checkpoint-rounds need --state";
  }
  return {};
}

}  // namespace bloomshard::app
