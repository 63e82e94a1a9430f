// Checkpoint store tests at the rank count the binary runs with (1-4):
// round trips between different writer and reader counts (sub-communicators
// of the world), collective I/O really happening, corruption and truncation
// refused with a message naming dataset and slice, generation bookkeeping,
// and header checks (future format version, other hash scheme).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/hdf5/hdf5_parallel.hpp"
#include "test_checkpoint_util.hpp"

// Its own namespace: its helpers share names with test_checkpoint_forms.cpp (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::io::checkpoint_store_tests {
namespace {

using test::build_set;
using test::layer_infos;
using test::owned_by;
using test::SharedTempDir;
using test::SubComm;
using test::test_header;
using test::test_keys;
using test::test_params;

constexpr int kBatches = 3;
constexpr int kKeysPerBatch = 2000;

// Writes generation g from the first `writers` ranks; returns its path on every rank.
std::filesystem::path write_with(const comm::Communicator& world, int writers,
                                 const std::filesystem::path& dir, std::uint64_t g,
                                 CheckpointHeader header, int batches = kBatches,
                                 int keys = kKeysPerBatch) {
  SubComm sub(world, writers);
  std::string path;
  if (sub.member()) {
    const comm::Communicator c = sub.comm();
    auto set = build_set(owned_by(c), batches, keys);
    header.generation = g;
    path = write_checkpoint(c, dir, header, layer_infos(c, *set), *set).string();
  }
  return world.broadcast(path);
}

// Every owned slice of `loaded` equals a set rebuilt from the keys for the
// same range: Bloom words of every layer, tier-2 contents, membership.
void expect_same_as_rebuilt(const core::TwoTierSet& loaded, int batches, int keys) {
  const core::SliceRange owned = loaded.owned();
  const auto ref = build_set(owned, batches, keys);
  ASSERT_EQ(loaded.bloom().num_layers(), ref->bloom().num_layers());
  for (std::uint32_t s = owned.first; s < owned.last; ++s) {
    for (std::size_t l = 0; l < ref->bloom().num_layers(); ++l) {
      const auto a = loaded.bloom().slice_words(l, s);
      const auto b = ref->bloom().slice_words(l, s);
      ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()))
          << "layer " << l << " slice " << s;
    }
    const core::SliceBaseData a = loaded.exact().merged_slice(s);
    const core::SliceBaseData b = ref->exact().merged_slice(s);
    EXPECT_EQ(a.fingerprints, b.fingerprints) << "slice " << s;
    EXPECT_EQ(a.offsets, b.offsets) << "slice " << s;
    EXPECT_EQ(a.bytes, b.bytes) << "slice " << s;
  }
  const std::uint32_t p = test_params().num_slices;
  for (int b = 0; b < batches + 1; ++b) {  // batch `batches` was never inserted
    for (const std::string& k : test_keys(b, keys / 4)) {
      const core::KeyHash h = core::hash_key(k);
      const std::uint32_t s = core::slice_of(h, p);
      if (!owned.contains(s)) continue;
      EXPECT_EQ(loaded.exact().contains(s, core::fingerprint(h), k), b < batches) << k;
      if (b < batches) {
        EXPECT_TRUE(loaded.bloom().may_contain(h)) << k;
      }
    }
  }
}

class CheckpointStore : public ::testing::Test {
 protected:
  comm::Communicator world_;
};

TEST_F(CheckpointStore, RoundTripAcrossWriterAndReaderCounts) {
  const int r = world_.size();
  std::vector<std::pair<int, int>> pairs{{1, 4}, {4, 3}, {3, 1}, {2, 2}, {r, r}, {r, 1}, {1, r}};
  std::erase_if(pairs, [&](const auto& wr) { return wr.first > r || wr.second > r; });
  SharedTempDir dir(world_);
  std::uint64_t g = 1;
  for (const auto& [writers, readers] : pairs) {
    SCOPED_TRACE(std::to_string(writers) + " writers -> " + std::to_string(readers) + " readers");
    const auto path = write_with(world_, writers, dir.path(), g, test_header(g));
    SubComm sub(world_, readers);
    if (sub.member()) {
      const comm::Communicator c = sub.comm();
      LoadedCheckpoint loaded = load_checkpoint(c, path, owned_by(c));
      ASSERT_TRUE(loaded.set);
      expect_same_as_rebuilt(*loaded.set, kBatches, kKeysPerBatch);
      // Per-rank insert counts add up to the stored global counts.
      for (std::size_t l = 0; l < loaded.summary.layers.size(); ++l) {
        EXPECT_EQ(c.allreduce_sum(loaded.set->bloom().layer_stats(l).inserted),
                  loaded.summary.layers[l].inserted);
      }
      EXPECT_EQ(loaded.summary.written_by_ranks, static_cast<std::uint32_t>(writers));
      EXPECT_EQ(c.allreduce_sum(loaded.set->exact().size()), loaded.summary.tier2_keys);
    }
    ++g;
  }
}

TEST_F(CheckpointStore, SummaryRoundTripsTheHeader) {
  SharedTempDir dir(world_);
  const CheckpointHeader h = test_header(7);
  const auto path = write_with(world_, world_.size(), dir.path(), 7, h);
  const CheckpointSummary s = read_checkpoint_summary(path);
  EXPECT_EQ(s.header.format_version, kCheckpointFormatVersion);
  EXPECT_EQ(s.header.tool_version, h.tool_version);
  EXPECT_EQ(s.header.hash_scheme, h.hash_scheme);
  EXPECT_EQ(s.header.hash_seed, h.hash_seed);
  EXPECT_EQ(s.header.bloom_layout, h.bloom_layout);
  EXPECT_EQ(s.header.normalization, h.normalization);
  EXPECT_EQ(s.header.key_field, h.key_field);
  EXPECT_EQ(s.header.key_encoding, h.key_encoding);
  EXPECT_EQ(s.header.params.num_slices, h.params.num_slices);
  EXPECT_EQ(s.header.params.initial_capacity, h.params.initial_capacity);
  EXPECT_EQ(s.header.params.fpr_target, h.params.fpr_target);
  EXPECT_EQ(s.header.params.growth, h.params.growth);
  EXPECT_EQ(s.header.params.tightening, h.params.tightening);
  EXPECT_EQ(s.header.generation, 7U);
  EXPECT_EQ(s.header.run_id, h.run_id);
  EXPECT_EQ(s.header.finished, h.finished);
  EXPECT_EQ(s.header.manifest_json, h.manifest_json);
  EXPECT_EQ(s.written_by_ranks, world_.usize());
  ASSERT_EQ(s.layers.size(), static_cast<std::size_t>(kBatches));
  for (std::uint32_t l = 0; l < kBatches; ++l) {
    const core::BloomLayerGeometry g = core::layer_geometry(test_params(), l);
    EXPECT_EQ(s.layers[l].geometry.capacity, g.capacity);
    EXPECT_EQ(s.layers[l].geometry.k, g.k);
    EXPECT_EQ(s.layers[l].geometry.blocks_per_slice, g.blocks_per_slice);
    EXPECT_EQ(s.layers[l].geometry.bits_per_key, g.bits_per_key);
    EXPECT_GT(s.layers[l].inserted, 0U);
  }
  // tier2_keys: the distinct keys of all batches.
  std::vector<std::string> all;
  for (int b = 0; b < kBatches; ++b) {
    auto k = test_keys(b, kKeysPerBatch);
    all.insert(all.end(), k.begin(), k.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::uint64_t bytes = 0;
  for (const auto& k : all) bytes += k.size();
  EXPECT_EQ(s.tier2_keys, all.size());
  EXPECT_EQ(s.tier2_bytes, bytes);
  EXPECT_TRUE(verify_checkpoint(world_, path).ok);
}

TEST_F(CheckpointStore, WritesAreReallyCollective) {
  SharedTempDir dir(world_);
  auto set = build_set(owned_by(world_), kBatches, kKeysPerBatch);
  CheckpointWriteStats stats;
  (void)write_checkpoint(world_, dir.path(), test_header(1), layer_infos(world_, *set), *set, {},
                         &stats);
  EXPECT_GT(stats.transfers, 0U);
  EXPECT_EQ(stats.non_collective, 0U);
  EXPECT_NE(stats.last_io_mode, static_cast<int>(H5D_MPIO_NO_COLLECTIVE));
  // HDF5 never broke a transfer down to independent I/O on its own; the
  // data transfers are collective HDF5 calls that ask MPI-IO for
  // independent I/O underneath (H5FD_MPIO_INDIVIDUAL_IO: each rank's
  // hyperslab is one contiguous range), which checkpoint-format.md states.
  EXPECT_EQ(stats.no_collective_cause, static_cast<std::uint32_t>(H5D_MPIO_COLLECTIVE));
  if (world_.rank() == 0) {
    std::printf(
        "io mode: last %d (%s), no-collective cause %u, %llu transfers\n", stats.last_io_mode,
        stats.last_io_mode == H5D_MPIO_CONTIGUOUS_COLLECTIVE ? "contiguous collective" : "other",
        stats.no_collective_cause, static_cast<unsigned long long>(stats.transfers));
  }
  EXPECT_GT(stats.bytes_written, 0U);
}

TEST_F(CheckpointStore, EmptyFilterRoundTrips) {
  SharedTempDir dir(world_);
  const auto path = write_with(world_, world_.size(), dir.path(), 1, test_header(1), 1, 0);
  const CheckpointSummary s = read_checkpoint_summary(path);
  EXPECT_EQ(s.tier2_keys, 0U);
  EXPECT_EQ(s.tier2_bytes, 0U);
  LoadedCheckpoint loaded = load_checkpoint(world_, path, owned_by(world_));
  EXPECT_EQ(loaded.set->exact().size(), 0U);
  EXPECT_TRUE(verify_checkpoint(world_, path).ok);
}

TEST_F(CheckpointStore, RebaseMapsTheFileAndDropsTheDelta) {
  SharedTempDir dir(world_);
  auto set = build_set(owned_by(world_), 2, kKeysPerBatch);
  auto infos = layer_infos(world_, *set);
  const auto path = write_checkpoint(world_, dir.path(), test_header(1), infos, *set);
  rebase_on_checkpoint(world_, path, *set, true);
  EXPECT_EQ(set->exact().delta_keys(), 0U);
  // More keys on top of the mapped base, written again and read back elsewhere.
  set->bloom().add_layer();
  const std::uint32_t p = test_params().num_slices;
  for (const std::string& k : test_keys(2, kKeysPerBatch)) {
    const core::KeyHash h = core::hash_key(k);
    if (set->owned().contains(core::slice_of(h, p))) (void)set->decide({h, k});
  }
  const auto path2 =
      write_checkpoint(world_, dir.path(), test_header(2), layer_infos(world_, *set), *set);
  expect_same_as_rebuilt(*set, kBatches, kKeysPerBatch);
  SubComm sub(world_, std::max(1, world_.size() - 1));
  if (sub.member()) {
    const comm::Communicator c = sub.comm();
    LoadedCheckpoint loaded = load_checkpoint(c, path2, owned_by(c));
    expect_same_as_rebuilt(*loaded.set, kBatches, kKeysPerBatch);
  }
}

// Slice holding element `index` of a per-key tier-2 dataset.
std::uint32_t slice_of_element(const std::vector<std::uint64_t>& slice_counts, std::uint64_t index,
                               std::uint64_t extra_per_slice) {
  std::uint64_t start = 0;
  for (std::uint32_t s = 0; s < slice_counts.size(); ++s) {
    const std::uint64_t n = slice_counts[s] + extra_per_slice;
    if (index < start + n) return s;
    start += n;
  }
  return static_cast<std::uint32_t>(slice_counts.size());
}

std::vector<std::uint64_t> read_u64_dataset(const std::filesystem::path& file,
                                            const std::string& name) {
  Hid f = open_serial_file(file);
  Hid d = open_dataset(f.get(), name);
  return read_all_u64(d.get(), H5P_DEFAULT);
}

// Copies generation `gen` and the run files of its dir into `dst` (created).
std::filesystem::path copy_state(const std::filesystem::path& gen,
                                 const std::filesystem::path& dst) {
  std::filesystem::create_directories(dst);
  std::filesystem::copy_file(gen, dst / gen.filename());
  for (const auto& run : list_run_files(gen.parent_path())) {
    std::filesystem::copy_file(run, dst / run.filename());
  }
  return dst / gen.filename();
}

TEST_F(CheckpointStore, FlippedBitIsRefusedNamingDatasetAndSlice) {
  SharedTempDir dir(world_);
  const auto path = write_with(world_, world_.size(), dir.path(), 1, test_header(1));
  const CheckpointSummary s = read_checkpoint_summary(path);
  ASSERT_EQ(s.runs.size(), 1U);
  const std::uint64_t words_per_slice = s.layers[1].geometry.blocks_per_slice * 8;
  std::vector<std::uint64_t> slice_keys;
  std::vector<std::uint64_t> slice_bytes;
  const auto run = run_path(dir.path(), s.runs[0].id);
  if (world_.rank() == 0) {
    slice_keys = read_u64_dataset(run, "/tier2/slice_keys");
    slice_bytes = read_u64_dataset(run, "/tier2/slice_bytes");
  }
  int n = 0;
  for (const std::string name :
       {"/bloom/layer_1", "/tier2/fingerprints", "/tier2/offsets", "/tier2/bytes"}) {
    const auto copy = dir.path() / ("corrupt" + std::to_string(n++)) / path.filename();
    std::string expect;
    if (world_.rank() == 0) {
      (void)copy_state(path, copy.parent_path());
      // Bloom words live in the generation file, tier 2 in the run file.
      const bool bloom = name == "/bloom/layer_1";
      const auto target = bloom ? copy : copy.parent_path() / run.filename();
      const test::DatasetPlace place = test::dataset_place(target, name);
      const std::uint64_t byte = place.bytes / 2 + 3;
      test::flip_byte(target, place.offset + byte);
      std::uint32_t slice = 0;
      if (bloom) {
        slice = static_cast<std::uint32_t>(byte / 8 / words_per_slice);
        expect = name + " slice " + std::to_string(slice) + ":";
      } else {
        if (name == "/tier2/bytes") slice = slice_of_element(slice_bytes, byte, 0);
        if (name == "/tier2/fingerprints") slice = slice_of_element(slice_keys, byte / 8, 0);
        if (name == "/tier2/offsets") slice = slice_of_element(slice_keys, byte / 8, 1);
        expect = "tier-2 slice " + std::to_string(slice) + ":";
      }
    }
    expect = world_.broadcast(expect);
    SCOPED_TRACE(name);
    try {
      (void)load_checkpoint(world_, copy, owned_by(world_));
      ADD_FAILURE() << "corrupt " << name << " loaded";
    } catch (const CheckpointError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(expect), std::string::npos) << msg;
      EXPECT_NE(msg.find(name), std::string::npos) << msg;
    }
    const VerifyReport report = verify_checkpoint(world_, copy);
    EXPECT_FALSE(report.ok);
    ASSERT_EQ(report.problems.size(), 1U);
    EXPECT_NE(report.problems[0].find(expect), std::string::npos) << report.problems[0];
    // Skipping the tier-2 checksums loads corrupt keys or fingerprints (a
    // wrong answer at worst), never corrupt offsets (they would point outside
    // the slice) or Bloom words.
    if (name == "/tier2/fingerprints" || name == "/tier2/bytes") {
      EXPECT_NO_THROW((void)load_checkpoint(world_, copy, owned_by(world_), false));
    } else {
      EXPECT_THROW((void)load_checkpoint(world_, copy, owned_by(world_), false), CheckpointError);
    }
  }
}

TEST_F(CheckpointStore, TruncatedFileIsRefused) {
  SharedTempDir dir(world_);
  const auto path = write_with(world_, world_.size(), dir.path(), 1, test_header(1));
  const auto cut = dir.path() / "cut.h5";
  if (world_.rank() == 0) {
    std::filesystem::copy_file(path, cut);
    std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  }
  world_.barrier();
  try {
    (void)load_checkpoint(world_, cut, owned_by(world_));
    ADD_FAILURE() << "truncated file loaded";
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cut.h5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  }
  if (world_.rank() == 0) {
    EXPECT_THROW((void)read_checkpoint_summary(cut), CheckpointError);
    EXPECT_THROW((void)read_checkpoint_summary(dir.path() / "missing.h5"), CheckpointError);
    std::ofstream(dir.path() / "junk.h5") << "not an hdf5 file";
    EXPECT_THROW((void)read_checkpoint_summary(dir.path() / "junk.h5"), CheckpointError);
  }
  EXPECT_FALSE(verify_checkpoint(world_, cut).ok);
}

TEST_F(CheckpointStore, GenerationsLatestAndPruning) {
  SharedTempDir dir(world_);
  auto set = build_set(owned_by(world_), 1, 200);
  for (std::uint64_t g = 1; g <= 4; ++g) {
    (void)write_checkpoint(world_, dir.path(), test_header(g), layer_infos(world_, *set), *set);
  }
  if (world_.rank() == 0) {
    EXPECT_EQ(wait_for_background_prune(), "");  // rank 0 deletes in the background
    EXPECT_EQ(read_latest(dir.path()), 4U);
    EXPECT_EQ(list_generations(dir.path()), (std::vector<std::uint64_t>{4, 3}));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "ckpt-4.h5.tmp"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "LATEST.tmp"));
    // LATEST pointing to a missing generation: the caller falls back.
    std::filesystem::remove(generation_path(dir.path(), 4));
    EXPECT_EQ(read_latest(dir.path()), 4U);
    EXPECT_EQ(list_generations(dir.path()), (std::vector<std::uint64_t>{3}));
    EXPECT_EQ(resume_candidates(dir.path()), (std::vector<std::uint64_t>{3}));
    std::ofstream(dir.path() / "LATEST", std::ios::trunc) << "garbage\n";
    EXPECT_EQ(read_latest(dir.path()), std::nullopt);
    std::filesystem::remove(dir.path() / "LATEST");
    EXPECT_EQ(read_latest(dir.path()), std::nullopt);
    EXPECT_EQ(generation_path(dir.path(), 12), dir.path() / "ckpt-12.h5");
  }
  world_.barrier();
  // keep = 1 leaves only the newest.
  (void)write_checkpoint(world_, dir.path(), test_header(5), layer_infos(world_, *set), *set,
                         {.keep = 1});
  if (world_.rank() == 0) {
    EXPECT_EQ(wait_for_background_prune(), "");
    EXPECT_EQ(list_generations(dir.path()), (std::vector<std::uint64_t>{5}));
    EXPECT_EQ(resume_candidates(dir.path()), (std::vector<std::uint64_t>{5}));
  }
}

TEST_F(CheckpointStore, FutureFormatVersionIsRefusedNamingIt) {
  SharedTempDir dir(world_);
  const auto path = write_with(world_, world_.size(), dir.path(), 1, test_header(1), 1, 100);
  if (world_.rank() == 0) test::set_format_version(path, 99);
  world_.barrier();
  if (world_.rank() == 0) {
    try {
      (void)read_checkpoint_summary(path);
      ADD_FAILURE() << "future version accepted";
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("format_version 99"), std::string::npos) << e.what();
    }
  }
  try {
    (void)load_checkpoint(world_, path, owned_by(world_));
    ADD_FAILURE() << "future version loaded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("format_version 99"), std::string::npos) << e.what();
  }
}

TEST_F(CheckpointStore, OtherHashSchemeIsReportedAndNotLoaded) {
  SharedTempDir dir(world_);
  CheckpointHeader h = test_header(1);
  h.hash_scheme = "other-hash/v9";
  const auto path = write_with(world_, world_.size(), dir.path(), 1, h, 1, 100);
  EXPECT_EQ(read_checkpoint_summary(path).header.hash_scheme, "other-hash/v9");
  try {
    (void)load_checkpoint(world_, path, owned_by(world_));
    ADD_FAILURE() << "other hash scheme loaded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("other-hash/v9"), std::string::npos) << e.what();
  }
}

TEST_F(CheckpointStore, BadLayerInfoFailsOnEveryRank) {
  SharedTempDir dir(world_);
  auto set = build_set(owned_by(world_), 2, 200);
  auto infos = layer_infos(world_, *set);
  if (world_.rank() == world_.size() - 1) infos.pop_back();  // one rank disagrees
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), test_header(1), infos, *set),
               CheckpointError);
  world_.barrier();
  if (world_.rank() == 0) {
    EXPECT_TRUE(list_generations(dir.path()).empty());
    EXPECT_FALSE(read_latest(dir.path()).has_value());
  }
}

}  // namespace
}  // namespace bloomshard::io::checkpoint_store_tests
