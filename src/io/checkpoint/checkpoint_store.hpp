// The checkpoint store (format 2): per generation one parallel HDF5 file
// with the Bloom layers, the manifest and the list of tier-2 runs it
// consists of, plus ONE new run file holding the delta since the last
// generation (or the delta merged with the newest runs: a compaction, see
// core/tier2/run_compaction.hpp). Files are written collectively (each rank its
// own slices as hyperslabs), made durable on every rank, then committed by
// rank 0 (rename + an atomically replaced LATEST pointer); runs are never
// rewritten, and a run no kept generation references is deleted after the
// commit. Read back on any number of ranks (slices are redistributed), with
// per-slice XXH3-64 checksums of both tiers; format 1 (tier 2 inside the
// generation file) is still read. Tier-2 runs stay in their files: mmapped
// and attached as views, never copied into RAM.
// Format: docs/checkpoint-format.md and checkpoint_layout.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "bloomshard/store/header.hpp"
#include "bloomshard/store/input_order_rows.hpp"
#include "comm/communicator.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "core/tier2/run_compaction.hpp"
#include "io/checkpoint/checkpoint_error.hpp"
#include "io/checkpoint/checkpoint_generations.hpp"
#include "io/checkpoint/checkpoint_layout.hpp"
#include "io/checkpoint/checkpoint_summary.hpp"

namespace bloomshard::io {

using store::CheckpointHeader;
using store::CheckpointLayerInfo;
using store::CheckpointRunRef;
using store::CheckpointSummary;

/// How write_checkpoint moves the bulk data (Bloom words, tier-2 arrays)
/// into the file. The HDF5 metadata, the manifest and the per-slice datasets
/// always go through collective MPI-IO.
enum class CheckpointDataPath {
  kAuto,    ///< kDirect when every rank can open the file O_DIRECT, else kMpiIo
  kDirect,  ///< O_DIRECT writes at the datasets' file addresses, merge overlapped
            ///< on a second thread; the unaligned edges by collective H5Dwrite
  kMpiIo,   ///< collective H5Dwrite of everything, through the page cache
};

/// Parses "auto", "direct" or "mpiio"; nullopt for anything else.
[[nodiscard]] std::optional<CheckpointDataPath> parse_checkpoint_data_path(std::string_view name);

/// Options of one write_checkpoint call.
struct CheckpointWriteOptions {
  int keep = 2;  ///< generations kept, >= 1
  CheckpointDataPath data_path = CheckpointDataPath::kAuto;
  /// The fence of the run (optional): called on rank 0 only, after every
  /// rank's data is written and agreed on and before the generation is
  /// renamed into place and LATEST is replaced. It throws when this process
  /// may no longer commit (a newer attempt of the run holds the lease); the
  /// generation is then discarded and every rank throws CheckpointError.
  std::function<void()> before_commit = nullptr;
  /// Which runs the new run absorbs (the same on every rank).
  core::CompactionPolicy compaction = {};
  /// The owner's confirmation forms (--confirm-jaccard): given exactly when
  /// the header's key scheme confirms; then the new run holds the form of
  /// each of its keys (/tier2/forms, /tier2/form_checksums), looked up here
  /// (every key of the merged slices must have one), in memory on this rank
  /// (F bytes a key of its owned slices) and written by collective MPI-IO
  /// on either data path.
  const core::BandConfirmer* forms = nullptr;
  /// The input order's kept copies this rank remembers (`--kept-copy
  /// first`, app/round/key_order.hpp): given exactly when the header says
  /// input_order_rows; each must lie in the rank's owned slices. Written
  /// into the generation file as per-slice rows (/input_order/rows,
  /// offsets, checksums; 24 bytes a copy), each rank its own, collectively.
  const std::vector<store::InputOrderRow>* input_order_rows = nullptr;
  /// The retractions this rank holds for the end pass: given exactly when
  /// the header says input_order_retracted_rows; each must lie in the
  /// rank's owned slices. Written as /input_order/retracted_rows, offsets,
  /// checksums, the same way.
  const std::vector<store::InputOrderRow>* input_order_retracted = nullptr;
};

/// Optional figures of one write (for metrics, benches and tests).
struct CheckpointWriteStats {
  std::uint64_t bytes_written = 0;        ///< data bytes this rank wrote (Bloom + tier 2)
  std::uint64_t direct_bytes = 0;         ///< of those, written with O_DIRECT
  bool direct = false;                    ///< the direct data path was used
  std::uint64_t transfers = 0;            ///< H5Dwrite calls of this rank
  std::uint64_t non_collective = 0;       ///< of those, reported H5D_MPIO_NO_COLLECTIVE
  int last_io_mode = 0;                   ///< last H5D_mpio_actual_io_mode_t seen
  std::uint32_t no_collective_cause = 0;  ///< OR of H5Pget_mpio_no_collective_cause (global)
  double seconds = 0;                     ///< wall time of the whole call, this rank
  double merge_seconds = 0;               ///< sizing, merging tier 2, checksums (CPU)
  double io_seconds = 0;                  ///< HDF5 create, writes, close, minus the merge
  double commit_seconds = 0;              ///< phase 3: fsync, rename, LATEST
  std::string prune_error;                ///< rank 0: the previous background prune's failure
  std::uint64_t compaction_bytes = 0;     ///< of bytes_written, keys of absorbed runs (this rank)
  std::uint64_t run_keys = 0;             ///< keys of the new run, all ranks
  std::size_t merged_runs = 0;            ///< older runs the new run absorbed
  std::size_t runs = 0;                   ///< runs of the committed generation
  std::uint64_t tier2_keys = 0;           ///< keys over all its runs, all ranks
};

/// Collective: writes generation header.generation: first the new run file
/// <state_dir>/run-<g>-<tag>.h5 (the delta of each rank's owned slices,
/// merged with the newest runs options.compaction picks; owned ranges must
/// tile [0, P) in rank order; every rank's runs must be the same), then
/// <state_dir>/ckpt-<g>.h5 (Bloom words of every layer, the manifest, the
/// run list, the header as attributes), both via "<...>.tmp", per-slice
/// XXH3-64 checksums of both tiers. Every rank fdatasyncs both files and
/// all agree; then rank 0 calls before_commit, renames the run file and the
/// generation into place, fsyncs the directory, replaces LATEST atomically
/// and deletes, on a background thread, all but the newest `options.keep`
/// (>= 1) generations up to this one and every run file no remaining
/// generation references (the next call waits for it first). `layers` must
/// match set's layers (geometry) and carry global insert counts. Memory:
/// besides the set, about 32 MiB (direct) or 64 MiB (MPI-IO) of buffers per
/// rank (more when one merged slice is larger). Throws CheckpointError on
/// every rank if any rank failed; a failed generation is never renamed or
/// pointed to. Returns the final generation path.
std::filesystem::path write_checkpoint(const comm::Communicator& comm,
                                       const std::filesystem::path& state_dir,
                                       const CheckpointHeader& header,
                                       std::span<const CheckpointLayerInfo> layers,
                                       const core::TwoTierSet& set,
                                       const CheckpointWriteOptions& options = {},
                                       CheckpointWriteStats* stats = nullptr);

/// A checkpoint loaded on this rank: the summary and a set over `owned`.
struct LoadedCheckpoint {
  CheckpointSummary summary;
  std::unique_ptr<core::TwoTierSet> set;
  /// With load_forms and a confirming key scheme: the forms of every key
  /// of the owned slices, every run (else null).
  std::unique_ptr<core::BandConfirmer> forms;
  /// A state with the input-order/v2 mark: the kept copies of the owned
  /// slices, checked (else empty).
  std::vector<store::InputOrderRow> input_order_rows;
  /// A state with the input-order/v3 mark: the retractions of the owned
  /// slices, checked (else empty).
  std::vector<store::InputOrderRow> input_order_retracted;
};

/// Collective: opens `file` on any number of ranks and builds a TwoTierSet
/// for `owned` (auto-grow off): reads and verifies the Bloom words of the
/// owned slices, and attaches every owned slice's tier-2 base as a view into
/// a read-only mmap of the file (kept alive by the set); with verify_tier2
/// the tier-2 checksums and invariants of the owned slices are checked
/// through the mapping (reads the rank's share of the file once). Each
/// layer's global insert count is spread over ranks in proportion to owned
/// slices, so the sum over a tiling of [0, P) equals the stored count.
/// Refuses a hash scheme or Bloom layout other than this build's, and a
/// stored layer geometry that this build would not compute. Every run
/// must hold confirmation forms exactly when the key scheme confirms
/// (confirm-jaccard=T/b4), of the run's size; with load_forms they are
/// checked slice by slice and read into `forms`. A state with the
/// input-order/v2 mark has its owned slices' input-order rows checked and
/// read into `input_order_rows` (others must have none), and one with the
/// input-order/v3 mark its retractions into `input_order_retracted`. Throws CheckpointError
/// naming the file, dataset and slice on every rank if any rank failed.
[[nodiscard]] LoadedCheckpoint load_checkpoint(const comm::Communicator& comm,
                                               const std::filesystem::path& file,
                                               core::SliceRange owned, bool verify_tier2 = true,
                                               bool load_forms = false);

/// Collective: replaces the runs of `set` that the generation `file` just
/// written by write_checkpoint absorbed by its new run (mapped, no copy) and
/// drops the deltas, so resident memory falls back to the Bloom bits. The
/// generation's older runs must be exactly `set`'s oldest runs (the caller
/// wrote it from this set).
/// Throws CheckpointError on every rank if any rank failed.
void rebase_on_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file,
                          core::TwoTierSet& set, bool verify_tier2 = false);

/// Result of verify_checkpoint: ok, or one line per failing dataset/slice.
struct VerifyReport {
  bool ok = true;
  std::vector<std::string> problems;
  std::uint64_t forms = 0;             ///< confirmation forms checked (every key's, all runs)
  std::uint64_t form_bytes = 0;        ///< bytes of one form (0: the state has none)
  std::uint64_t origins = 0;           ///< form origins checked (confirm-origins states)
  std::uint64_t input_order_rows = 0;  ///< input-order rows checked (input-order/v2, v3 states)
  std::uint64_t input_order_retracted_rows = 0;  ///< retracted rows checked (input-order/v3)
};

/// Collective: recomputes every checksum of `file` and of every run file it
/// references (confirmation forms included, which must be there exactly
/// when the key scheme confirms), each rank a contiguous share of the slices; every rank
/// returns the full report. A file that cannot be opened or read is
/// reported as a problem, not thrown.
[[nodiscard]] VerifyReport verify_checkpoint(const comm::Communicator& comm,
                                             const std::filesystem::path& file);

}  // namespace bloomshard::io
