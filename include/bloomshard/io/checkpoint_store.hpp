// The checkpoint store: one parallel HDF5 file per generation, written
// collectively (each rank its own slices as hyperslabs), committed by
// fsync + rename + an atomically replaced LATEST pointer, read back on any
// number of ranks (slices are redistributed), with per-slice XXH3-64
// checksums of both tiers. The tier-2 base of a loaded checkpoint stays in
// the file: it is mmapped and attached as views, never copied into RAM.
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

#include "bloomshard/comm/communicator.hpp"
#include "bloomshard/core/scalable_bloom.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "bloomshard/io/checkpoint_error.hpp"
#include "bloomshard/io/checkpoint_generations.hpp"
#include "bloomshard/io/checkpoint_layout.hpp"

namespace bloomshard::io {

/// Everything besides bits and keys. Identical on every rank when writing
/// (rank 0's copy is what is stored).
struct CheckpointHeader {
  std::uint32_t format_version = kCheckpointFormatVersion;
  std::string tool_version;
  std::string hash_scheme;  ///< core::kHashSchemeName
  std::uint64_t hash_seed = 0;
  std::string bloom_layout;   ///< core::kBloomLayoutName
  std::string normalization;  ///< policy + versions, as the app gives it
  std::string key_field;
  std::string key_encoding;  ///< "bytes"
  core::ScalableBloomParams params;
  std::uint64_t generation = 0;
  std::string run_id;
  bool finished = false;      ///< run state
  std::string manifest_json;  ///< opaque to the store (inputs, cursors, outputs, counters)
};

/// One Bloom layer: its geometry and the GLOBAL count of keys inserted.
struct CheckpointLayerInfo {
  core::BloomLayerGeometry geometry;
  std::uint64_t inserted = 0;
};

/// What a checkpoint holds, without the bits and keys.
struct CheckpointSummary {
  CheckpointHeader header;
  std::vector<CheckpointLayerInfo> layers;
  std::uint64_t tier2_keys = 0;   ///< keys over all slices
  std::uint64_t tier2_bytes = 0;  ///< key bytes over all slices
  std::uint32_t written_by_ranks = 0;
};

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
};

/// Optional figures of one write (for metrics, benches and tests).
struct CheckpointWriteStats {
  std::uint64_t bytes_written = 0;   ///< data bytes this rank wrote (Bloom + tier 2)
  std::uint64_t direct_bytes = 0;    ///< of those, written with O_DIRECT
  bool direct = false;               ///< the direct data path was used
  std::uint64_t transfers = 0;       ///< H5Dwrite calls of this rank
  std::uint64_t non_collective = 0;  ///< of those, reported H5D_MPIO_NO_COLLECTIVE
  int last_io_mode = 0;              ///< last H5D_mpio_actual_io_mode_t seen
  double seconds = 0;                ///< wall time of the whole call, this rank
  double merge_seconds = 0;          ///< sizing, merging tier 2, checksums (CPU)
  double io_seconds = 0;             ///< HDF5 create, writes, close, minus the merge
  double commit_seconds = 0;         ///< phase 3: fsync, rename, LATEST
  std::string prune_error;           ///< rank 0: the previous background prune's failure
};

/// Collective: writes generation header.generation as
/// <state_dir>/ckpt-<generation>.h5 (via "<...>.h5.tmp"): the Bloom words of
/// every layer and the merged tier-2 base of each rank's owned slices (owned
/// ranges must tile [0, P) in rank order), per-slice XXH3-64 checksums of
/// both tiers, the header as attributes. Then rank 0 fsyncs the file,
/// renames it, fsyncs the directory, replaces LATEST atomically and deletes
/// all but the newest `options.keep` (>= 1) generations up to this one on a
/// background thread (prune_generations_in_background; the next call waits
/// for it first). `layers` must match set's layers (geometry) and carry
/// global insert counts. Memory: besides the set, about 32 MiB (direct) or
/// 64 MiB (MPI-IO) of buffers per rank (more when one merged slice is
/// larger). Throws CheckpointError on every rank if any rank failed; a
/// failed generation is never renamed or pointed to. Returns the final path.
std::filesystem::path write_checkpoint(const comm::Communicator& comm,
                                       const std::filesystem::path& state_dir,
                                       const CheckpointHeader& header,
                                       std::span<const CheckpointLayerInfo> layers,
                                       const core::TwoTierSet& set,
                                       const CheckpointWriteOptions& options = {},
                                       CheckpointWriteStats* stats = nullptr);

/// Not collective: reads the header and layer infos of a checkpoint file.
/// Throws CheckpointError naming the problem (not an HDF5 file, missing
/// attribute or dataset, format version newer than kCheckpointFormatVersion).
/// Does not compare hash scheme or layout with this build: the caller does.
[[nodiscard]] CheckpointSummary read_checkpoint_summary(const std::filesystem::path& file);

/// A checkpoint loaded on this rank: the summary and a set over `owned`.
struct LoadedCheckpoint {
  CheckpointSummary summary;
  std::unique_ptr<core::TwoTierSet> set;
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
/// stored layer geometry that this build would not compute. Throws
/// CheckpointError naming the dataset and slice on every rank if any rank
/// failed.
[[nodiscard]] LoadedCheckpoint load_checkpoint(const comm::Communicator& comm,
                                               const std::filesystem::path& file,
                                               core::SliceRange owned, bool verify_tier2 = true);

/// Collective: points every owned slice's tier-2 base of `set` at the file
/// just written by write_checkpoint (mmap, no copy) and drops the deltas,
/// so resident memory falls back to the Bloom bits. The file's slices must
/// be exactly what `set` holds (the caller wrote it from this set).
/// Throws CheckpointError on every rank if any rank failed.
void rebase_on_checkpoint(const comm::Communicator& comm, const std::filesystem::path& file,
                          core::TwoTierSet& set, bool verify_tier2 = false);

/// Result of verify_checkpoint: ok, or one line per failing dataset/slice.
struct VerifyReport {
  bool ok = true;
  std::vector<std::string> problems;
};

/// Collective: recomputes every checksum of `file`, each rank a contiguous
/// share of the slices; every rank returns the full report. A file that
/// cannot be opened or read is reported as a problem, not thrown.
[[nodiscard]] VerifyReport verify_checkpoint(const comm::Communicator& comm,
                                             const std::filesystem::path& file);

}  // namespace bloomshard::io
