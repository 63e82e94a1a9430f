// The dedup job's metrics: per-rank readings reduced over all ranks into one
// summary, written as JSON by rank 0 (--metrics) and printed as a short
// summary. Field names are a stable interface (scripts and the benchmark
// read them); add fields, never rename.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {

/// Seconds one rank spent in each phase of the rounds.
struct PhaseSeconds {
  double read = 0;    ///< reading, parsing, normalizing, hashing
  double route = 0;   ///< both all-to-all exchanges and the round agreement
  double decide = 0;  ///< tier 1 + tier 2 on the owner
  double write = 0;   ///< writing kept records
};

/// One layer of the filter, whole job.
struct LayerSummary {
  std::uint64_t capacity = 0;
  double fpr_target = 0;
  std::uint32_t k = 0;
  double bits_per_key = 0;
  std::uint64_t bits = 0;
  std::uint64_t inserted = 0;
  double fill_ratio = 0;
  double fpr_estimate = 0;
  double cardinality_estimate = 0;
};

/// One checkpoint of this segment (bytes summed over ranks, seconds the max).
struct CheckpointRecord {
  std::uint64_t generation = 0;
  double seconds = 0;
  std::uint64_t bytes_written = 0;     ///< Bloom + tier-2 data bytes, compaction included
  std::uint64_t compaction_bytes = 0;  ///< of those, keys rewritten from absorbed runs
  std::uint64_t tier2_keys = 0;        ///< keys over the generation's runs
  std::uint64_t run_keys = 0;          ///< keys of its new run
  std::uint64_t runs = 0;              ///< runs the generation references
  std::uint64_t merged_runs = 0;       ///< older runs the new run absorbed
  // Where the seconds went, each the slowest rank's: making the outputs
  // durable and agreeing on the cut; sizing, merging and checksumming tier 2
  // (CPU); HDF5 writes and closes; fsync, fence, rename and LATEST; mapping
  // the new generation (re-base).
  double outputs_seconds = 0;
  double merge_seconds = 0;
  double io_seconds = 0;
  double commit_seconds = 0;
  double rebase_seconds = 0;
};

/// Every checkpoint of this segment, and their totals.
struct CheckpointMetrics {
  double seconds_total = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t compaction_bytes = 0;
  std::vector<CheckpointRecord> history;
};

struct JobSummary {
  int ranks = 0;
  std::uint64_t input_files = 0;
  std::uint64_t input_bytes = 0;
  JobCounters counters;                   // whole run, earlier segments of a resumed run included
  std::uint64_t segment_rounds = 0;       // rounds of this process's segment
  PhaseSeconds phase_seconds_max;         // max over ranks, this segment
  PhaseSeconds phase_system_seconds_max;  // the kernel's share of each (page faults, system
                                          // calls): max over ranks, this segment
  // Each rank's phases, this segment (index = rank): which rank the others
  // wait for. A straggler has the longest read/decide/write and the
  // shortest route (route holds the waits for slower ranks).
  std::vector<PhaseSeconds> phase_seconds_by_rank;
  double wall_seconds = 0;               // this segment
  std::uint64_t max_rss_bytes = 0;       // max over ranks, this segment
  std::uint64_t max_rss_anon_bytes = 0;  // max over ranks of RssAnon sampled after each round
                                         // and checkpoint (a transient peak inside a
                                         // checkpoint write is not seen)
  // Input bytes each rank consumed in this segment (index = rank): how even
  // the reading was (split inputs balance it).
  std::vector<std::uint64_t> read_bytes_by_rank;
  double join_seconds = 0;  // joining split inputs' parts, slowest rank (0: none)
  // How the inputs were read (app/split/lockstep_layout.hpp): "lockstep"
  // (blocks of the batch bytes, one a rank a round) or "tasks" (whole
  // inputs and ranges balanced over the ranks); the blocks of lockstep (0
  // for tasks).
  std::string input_layout = "tasks";
  std::uint64_t input_blocks = 0;
  // Lockstep rounds decided in one sub-round, without the owner's table of
  // kept copies (app/round/key_order.cpp, plan_subrounds).
  std::uint64_t rounds_without_order_table = 0;
  // --kept-copy first: the end pass (retracted copies left out of the
  // outputs, its checkpoint and renames included), slowest rank (0: none),
  // the outputs it placed by their offset maps rather than by walking
  // their inputs (app/round/retracted_line_place.hpp), and those maps' bytes.
  double end_pass_seconds = 0;
  std::uint64_t end_pass_outputs_by_map = 0;
  std::uint64_t end_pass_offset_map_bytes = 0;  // the maps it had, largest rank
  // .gz/.zst outputs the rounds wrote stored and the end pass compressed
  // (InputFeed::defer_compression; on 2+ ranks, the tasks layout).
  std::uint64_t end_pass_compressed_outputs = 0;
  // The PML named before MPI_Init for a job on one node ("ob1"), or "" when
  // Open MPI chose (comm/transport_defaults.hpp).
  std::string mpi_pml_default;
  std::uint64_t checkpoints = 0;  // written in this segment
  CheckpointMetrics checkpoint;   // their figures
  std::vector<LayerSummary> layers;
  std::uint64_t filter_bits = 0;
  double fpr_estimate = 0;  // compound: sum over layers
  double cardinality_estimate = 0;
  std::uint64_t tier2_keys = 0;
  double fpr_target = 0;
  // Broken inputs skipped (--on-input-error skip), earlier segments included.
  std::vector<SkippedInput> skipped_inputs;
  // True when an earlier attempt finished the run and this start only read
  // its state (summary_of_finished_run): no segment figures then.
  bool finished_by_earlier_attempt = false;
};

/// The saved filter's layers (a checkpoint's), in metrics form: fill and FPR
/// estimated from the insert counts (1 - e^(-k n / m); the blocked model at
/// the load reached), cardinality = inserts. For `info` and for
/// summary_of_finished_run.
[[nodiscard]] std::vector<LayerSummary> saved_layers(const io::CheckpointSummary& s);

/// The metrics of a run an earlier attempt finished, from its newest
/// generation `s` and that generation's manifest `m`: the run's counters,
/// filter and tier-2 size as saved, the ranks that wrote it, and no figures
/// of this start (rounds, phases, wall time and RSS are 0). What a restart
/// writes when a kill landed between the finishing generation and the
/// metrics file (docs/reliability.md).
[[nodiscard]] JobSummary summary_of_finished_run(const io::CheckpointSummary& s,
                                                 const RunManifest& m);

/// This rank's counters of the running segment.
[[nodiscard]] JobCounters local_counters(const InputFeed& feed, const core::TwoTierSet& set,
                                         const comm::RouterStats& router, std::uint64_t rounds);

/// Collective: sums counters over ranks (rounds: max), result on every rank.
[[nodiscard]] JobCounters reduce_counters(const comm::Communicator& comm, const JobCounters& local);

/// Collective: reduces every rank's readings into the summary (valid on
/// every rank); `base` holds the counters of earlier segments of a resumed run.
[[nodiscard]] JobSummary reduce_metrics(const comm::Communicator& comm, const JobCounters& base,
                                        const InputFeed& feed, const core::TwoTierSet& set,
                                        const comm::RouterStats& router, const PhaseSeconds& phases,
                                        const PhaseSeconds& phases_system, std::uint64_t rounds,
                                        double wall_seconds);

/// The metrics document (JSON object).
[[nodiscard]] std::string metrics_json(const JobSummary& s);

/// A few human lines for the end of the log.
[[nodiscard]] std::string summary_text(const JobSummary& s);

}  // namespace bloomshard::app
