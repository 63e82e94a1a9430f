// Helpers of the checkpoint store's MPI tests: a temp dir shared by all
// ranks, sub-communicators, a deterministic key set built into a
// TwoTierSet over any slice range (so a reference for any reader layout can
// be rebuilt), and byte-level file corruption.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::io::test {

/// Collective over world: rank 0 creates a fresh dir, every rank gets its
/// name; the destructor (collective) removes it after a barrier.
class SharedTempDir {
 public:
  explicit SharedTempDir(const comm::Communicator& comm);
  ~SharedTempDir();
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  comm::Communicator comm_;
  std::filesystem::path path_;
};

/// The first `n` ranks of `world` as a communicator (MPI_COMM_NULL elsewhere).
class SubComm {
 public:
  SubComm(const comm::Communicator& world, int n);
  ~SubComm();
  SubComm(const SubComm&) = delete;
  SubComm& operator=(const SubComm&) = delete;
  [[nodiscard]] bool member() const { return comm_ != MPI_COMM_NULL; }
  [[nodiscard]] comm::Communicator comm() const { return comm::Communicator(comm_); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

/// Parameters of the test filter: P = 48 slices, small capacity so a few
/// thousand keys fill several layers.
[[nodiscard]] core::ScalableBloomParams test_params();
/// The slices of test_params() that rank c.rank() of `c` owns.
[[nodiscard]] core::SliceRange owned_by(const comm::Communicator& c);
/// Keys of batch `b` (0-based): varied lengths, the empty key, NUL and
/// high bytes, and repeats of earlier keys.
[[nodiscard]] std::vector<std::string> test_keys(int batch, int count);

/// A set over `owned` after inserting batches [0, batches) of `count` keys,
/// opening a new layer before each batch after the first (every rank builds
/// it the same way, so layers line up).
[[nodiscard]] std::unique_ptr<core::TwoTierSet> build_set(core::SliceRange owned, int batches,
                                                          int count);
/// Layer infos (global insert counts, collective over comm) of a set.
[[nodiscard]] std::vector<CheckpointLayerInfo> layer_infos(const comm::Communicator& comm,
                                                           const core::TwoTierSet& set);
/// A header with recognizable values for generation g.
[[nodiscard]] CheckpointHeader test_header(std::uint64_t g);

/// Flips one byte (xor 0x5a) at `offset` of the file.
void flip_byte(const std::filesystem::path& file, std::uint64_t offset);
/// File offset and length in bytes of a dataset's data (serial open).
struct DatasetPlace {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};
[[nodiscard]] DatasetPlace dataset_place(const std::filesystem::path& file,
                                         const std::string& dataset);
/// Overwrites the root attribute format_version (serial, read-write).
void set_format_version(const std::filesystem::path& file, std::uint32_t version);

}  // namespace bloomshard::io::test
