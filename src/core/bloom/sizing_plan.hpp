// The sizing plan of a dedup job before it runs (`bloomshard plan`, and the
// one-line summary dedup prints at start): memory per rank, state bytes on
// disk, checkpoint and round costs, expected tier-2 lookups, and the
// recommended --capacity, --slices and --batch-bytes. Pure arithmetic over
// the same geometry functions the filter uses (layer_geometry, blocked_fpr),
// so it is unit-testable without MPI.
//
// Model (constants measured on the project's machines, docs/commands.md):
// a job with --state (or without: PlanInputs::checkpoints); keys spread
// evenly over ranks (slices are); peak RSS
// per rank = kBaseRssBytes (binary, MPI, HDF5; + kMultiRankRssBytes from 2
// ranks on) + Bloom bits + the tier-2
// delta at its largest (kDeltaBytesPerKey + key bytes per key, plus the
// checkpoint's 16 B/key bucket) + the new run file's pages mapped after a
// checkpoint (16 B + key bytes per key) + kRoundBufferFactor x --batch-bytes
// + kReadAheadBytes.
// Agreement with measured runs: within 25% for corpora of 10^5..10^6
// records (e2e.plan); it does not model page cache, the output codecs'
// windows, or compaction merges of many runs.
#pragma once

#include <cstdint>
#include <string>

namespace bloomshard::core {

/// Per-rank fixed resident memory of a dedup rank (binary, Open MPI, HDF5,
/// codecs): measured 30-34 MB for a 1000-record run on 1-4 ranks.
inline constexpr double kBaseRssBytes = 30.0 * 1048576.0;
/// Extra resident memory per rank of a multi-rank job: the collective
/// checkpoint I/O (MPI-IO aggregation buffers, HDF5's collective metadata)
/// and Open MPI's shared-memory peers; measured 8-9 MB at 2-4 ranks over the
/// 1-rank figure for the same per-rank data. Jobs without --state do
/// without it: at 2 and 4 ranks their peak RSS came within 12% of the
/// model without this term (300k-1M records, tests/cli/plan_line.sh).
inline constexpr double kMultiRankRssBytes = 8.0 * 1048576.0;
/// The bucket per key a checkpoint's merge of the delta adds (jobs with
/// --state only).
inline constexpr double kMergeBucketBytesPerKey = 16.0;
/// Delta memory per key besides its bytes: the record header (fingerprint,
/// slice, length: 10-12 bytes) and the index slots, reserved for the
/// layer's share of keys (10.7 bytes per key at the load limit, ~12 per
/// key held when --capacity is 1.1x the distinct keys): exact_shard.hpp;
/// plus the 16-byte bucket the checkpoint merge adds.
inline constexpr double kDeltaBytesPerKey = 23.0 + kMergeBucketBytesPerKey;
/// Round memory per --batch-bytes: the round batch (records + keys), the
/// router's send and receive buffers and the reader's buffer; measured
/// 3.5x between 64 KiB and 8 MiB batches.
inline constexpr double kRoundBufferFactor = 3.5;
/// The input read-ahead of each rank, counted with the round buffers: the
/// reader decodes up to 4 blocks of 1 MiB ahead of the round on a thread
/// (io/records/prefetch_source.hpp; the feed checks it is this size).
inline constexpr double kReadAheadBytes = 4.0 * 1048576.0;
/// --batch-bytes when none is given: 4 MiB up to kSmallBatchMaxRanks ranks,
/// 8 MiB above. Measured on the 10M-record corpus at 2 ranks
/// (docs/performance.md, "Round size"): 4 MiB rounds keep a round's
/// buffers and the keys between the decide's two passes in cache, and ran
/// the whole job 1.05-1.20x faster than 8 MiB (three runs), with 10 MiB
/// less RSS per rank; 1 and 2 MiB were no faster. Above 64 ranks the
/// per-round latency of the all-to-all, 3 (R - 1) messages, grows against
/// the work of a round (docs/scaling.md), so larger jobs keep 8 MiB.
inline constexpr std::uint32_t kSmallBatchMaxRanks = 64;
[[nodiscard]] constexpr std::uint64_t default_batch_bytes(std::uint32_t ranks) noexcept {
  return ranks <= kSmallBatchMaxRanks ? std::uint64_t{4} << 20 : std::uint64_t{8} << 20;
}
/// Bytes a tier-2 key costs on disk besides its bytes: fingerprint + offset.
inline constexpr double kTier2BytesPerKey = 16.0;
/// Wire bytes per routed key besides its bytes (router.hpp kKeyHeaderBytes).
inline constexpr double kWireBytesPerKey = 20.0;

struct PlanInputs {
  std::uint64_t records = 0;     ///< all input records
  double unique_fraction = 1.0;  ///< distinct keys / records, (0, 1]
  double key_bytes = 64;         ///< mean key bytes (after normalization)
  double record_bytes = 512;     ///< mean record bytes (line + newline)
  std::uint32_t ranks = 1;
  double fpr = 0.001;                            ///< compound target
  std::uint64_t capacity = 0;                    ///< first layer; 0: the recommended one
  std::uint32_t slices = 0;                      ///< 0: the recommended (default) one
  std::uint64_t batch_bytes = 0;                 ///< 0: the recommended one
  double checkpoint_every = 0;                   ///< seconds; 0: one checkpoint at the end
  double records_per_second = 8e5;               ///< per rank (measured here: ~0.8M/s)
  double disk_bandwidth = 1e9;                   ///< bytes/s the file system gives the whole job
  double batch_duplicate_fraction = 0;           ///< duplicates whose first copy is in the same
                                                 ///< rank's round (combined, never looked up)
  std::uint64_t max_delta_bytes = 512ULL << 20;  ///< dedup's --max-delta-bytes
  /// A job with --state. Without one nothing is checkpointed: the delta
  /// holds every key to the end (no merge bucket, no run file mapped, no
  /// collective I/O buffers) and there are no state, checkpoint or tier-2
  /// disk bytes.
  bool checkpoints = true;
  /// --kept-copy first: each owner holds the order table
  /// (core/order/file_order.hpp), sized by `inputs`.
  bool input_order = false;
  /// --kept-copy first: the job's input files, read in order about `ranks`
  /// at a time; 0 when unknown (the table is then planned for every
  /// distinct key, an upper bound).
  std::uint64_t inputs = 0;
  /// --kept-copy first read in the lockstep layout (plain inputs, with or
  /// without --state; app/split/lockstep_layout.hpp): a round covers a stretch of
  /// the one order, so the order table holds one round's keys at most and
  /// is emptied every round, nothing is retracted and no output keeps an
  /// offset map; the blocks are read without the read-ahead (instead of
  /// kReadAheadBytes, the batch the block written in the background holds).
  bool lockstep = false;
};

struct SizingPlan {
  PlanInputs in;  ///< with the recommended values filled in
  std::uint64_t unique_keys = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t recommended_capacity = 0;
  std::uint32_t recommended_slices = 0;
  std::uint64_t recommended_batch_bytes = 0;
  std::uint32_t layers = 0;  ///< Bloom layers at the end
  // Per rank.
  double bloom_bytes = 0;
  double tier2_disk_bytes = 0;
  double delta_bytes = 0;  ///< largest delta between checkpoints
  double round_buffer_bytes = 0;
  /// --kept-copy first: the order table at its peak (kept copies ahead of
  /// the watermark: the distinct keys of `ranks` inputs of the mean size,
  /// spread over the owners); 0 otherwise.
  double order_table_bytes = 0;
  /// --kept-copy first: the offset maps of the outputs this rank writes
  /// (core/order/output_offset_map.hpp), held to the end pass: its records
  /// left out (duplicates) at kOutputOffsetMapBytesPerLeftOut, at most
  /// kOutputOffsetMapMaxBytes; 0 otherwise.
  double offset_map_bytes = 0;
  /// --kept-copy first: kept copies retracted for an earlier copy in
  /// another input, planned as half the duplicates of the inputs read ahead
  /// of the watermark (a duplicate whose earlier copy is in an input read at
  /// the same time arrives first about half the time; the 10M-record
  /// benchmark at 2 ranks in 16 inputs: 187.5K planned, 132,644 measured);
  /// the whole job's count; 0 otherwise.
  double retractions = 0;
  /// The end pass's memory a rank for them (kEndPassBytesPerRetraction
  /// each, spread over the ranks);
  /// their rows (24 bytes each) count in checkpoint_bytes.
  double retraction_bytes = 0;
  double peak_rss_bytes = 0;
  // Per checkpoint (whole job).
  std::uint64_t checkpoints = 0;
  double checkpoint_bytes = 0;  ///< Bloom bits + the new run (the largest one)
  double checkpoint_seconds = 0;
  double state_bytes = 0;  ///< on disk at the end (one generation)
  // Per round, per rank.
  double keys_per_round = 0;
  double exchange_bytes = 0;   ///< keys sent (all destinations) + verdicts back
  std::uint64_t messages = 0;  ///< point-to-point messages of one round's collectives
  std::uint64_t rounds = 0;
  // Whole job.
  double false_positives = 0;
  double tier2_lookups = 0;
  double seconds = 0;  ///< reading + deciding at records_per_second, checkpoints apart
};

/// The plan. Throws std::invalid_argument naming a bad input (records or
/// ranks 0, unique_fraction outside (0, 1], fpr outside (0, 0.5], ...).
[[nodiscard]] SizingPlan make_plan(const PlanInputs& in);

/// One line for logs: "plan: 2 ranks, 1.0M records -> peak RSS ~103 MiB/rank
/// (Bloom 2.1 MiB, delta 22 MiB, rounds 28 MiB), state 19 MiB, 1 checkpoint
/// of 19 MiB (~0.0 s), ~66k tier-2 lookups".
[[nodiscard]] std::string plan_summary_line(const SizingPlan& p);

/// "12.3 MiB" (whole MiB from 100 up): the plan's memory and disk figures.
std::string mib_label(double bytes);

/// "1.2M"-style counts (k, M, G): the plan's record and key figures.
std::string count_label(double n);

}  // namespace bloomshard::core
