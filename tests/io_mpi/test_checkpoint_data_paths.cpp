// The two data paths of write_checkpoint (O_DIRECT with collective edges,
// collective MPI-IO) must put the same bytes in every dataset, at the rank
// count the binary runs with (1-4: rank boundaries fall inside 4 KiB blocks
// shared by two ranks). Also: the MPI-IO path is collective throughout, the
// direct path really wrote whole blocks directly, and both files load.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bloomshard/core/slice_map.hpp"
#include "io/checkpoint/checkpoint_layout.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/hdf5/hdf5_parallel.hpp"
#include "test_checkpoint_util.hpp"

namespace bloomshard::io {
namespace {

using test::build_set;
using test::dataset_place;
using test::layer_infos;
using test::SharedTempDir;
using test::test_header;
using test::test_params;

std::string dataset_bytes(const std::filesystem::path& file, const std::string& name) {
  const test::DatasetPlace place = dataset_place(file, name);
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(place.offset));
  std::string out(place.bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

class CheckpointDataPaths : public ::testing::Test {
 protected:
  comm::Communicator world_;
};

TEST_F(CheckpointDataPaths, DirectAndMpiIoWriteTheSameBytes) {
  SharedTempDir dir(world_);
  const core::SliceRange owned =
      core::slices_of_rank(world_.urank(), world_.usize(), test_params().num_slices);
  const auto set = build_set(owned, 3, 20000);
  const auto infos = layer_infos(world_, *set);

  CheckpointWriteStats mpiio_stats;
  const auto mpiio = write_checkpoint(world_, dir.path() / "mpiio", test_header(1), infos, *set,
                                      {.data_path = CheckpointDataPath::kMpiIo}, &mpiio_stats);
  CheckpointWriteStats direct_stats;
  const auto direct = write_checkpoint(world_, dir.path() / "direct", test_header(1), infos, *set,
                                       {.data_path = CheckpointDataPath::kDirect}, &direct_stats);

  EXPECT_FALSE(mpiio_stats.direct);
  EXPECT_EQ(mpiio_stats.direct_bytes, 0U);
  EXPECT_EQ(mpiio_stats.non_collective, 0U);
  EXPECT_TRUE(direct_stats.direct);
  EXPECT_EQ(direct_stats.non_collective, 0U);  // the edges and small datasets stay collective
  EXPECT_EQ(direct_stats.direct_bytes % 4096, 0U);
  EXPECT_GT(world_.allreduce_sum(direct_stats.direct_bytes), 0U);
  EXPECT_EQ(direct_stats.bytes_written, mpiio_stats.bytes_written);

  if (world_.rank() == 0) {
    // The generation files (Bloom, manifest) and the run files (tier 2).
    std::vector<std::string> names{ckpt::kBloomChecksums, ckpt::kManifestJson, ckpt::kRunKeys,
                                   ckpt::kRunBytes, ckpt::kRunLevels};
    const CheckpointSummary summary = read_checkpoint_summary(direct);
    ASSERT_GE(summary.layers.size(), 2U);  // several Bloom datasets
    for (std::size_t l = 0; l < summary.layers.size(); ++l) {
      names.push_back(std::string(ckpt::kBloomGroup) + "/layer_" + std::to_string(l));
    }
    for (const std::string& name : names) {
      const std::string a = dataset_bytes(mpiio, name);
      const std::string b = dataset_bytes(direct, name);
      EXPECT_EQ(a.size(), b.size()) << name;
      EXPECT_TRUE(a == b) << name << " differs between the data paths";
    }
    const auto mpiio_runs = list_run_files(mpiio.parent_path());
    const auto direct_runs = list_run_files(direct.parent_path());
    ASSERT_EQ(mpiio_runs.size(), 1U);
    ASSERT_EQ(direct_runs.size(), 1U);
    for (const char* name : {ckpt::kSliceKeys, ckpt::kSliceBytes, ckpt::kFingerprints,
                             ckpt::kOffsets, ckpt::kBytes, ckpt::kTier2Checksums}) {
      const std::string a = dataset_bytes(mpiio_runs[0], name);
      const std::string b = dataset_bytes(direct_runs[0], name);
      EXPECT_EQ(a.size(), b.size()) << name;
      EXPECT_TRUE(a == b) << name << " differs between the data paths";
    }
  }
  EXPECT_TRUE(verify_checkpoint(world_, direct).ok);
  const LoadedCheckpoint loaded = load_checkpoint(world_, direct, owned);
  EXPECT_EQ(world_.allreduce_sum(loaded.set->exact().size()),
            world_.allreduce_sum(set->exact().size()));
}

TEST_F(CheckpointDataPaths, NamesParse) {
  EXPECT_EQ(parse_checkpoint_data_path("auto"), CheckpointDataPath::kAuto);
  EXPECT_EQ(parse_checkpoint_data_path("direct"), CheckpointDataPath::kDirect);
  EXPECT_EQ(parse_checkpoint_data_path("mpiio"), CheckpointDataPath::kMpiIo);
  EXPECT_FALSE(parse_checkpoint_data_path("posix").has_value());
}

}  // namespace
}  // namespace bloomshard::io
