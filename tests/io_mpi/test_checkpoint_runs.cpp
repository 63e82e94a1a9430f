// Format 2 at the rank count the binary runs with (1-4): each checkpoint
// writes ONE new run file holding only the delta since the last one (or a
// compaction of the newest runs), runs are never rewritten, run files no
// kept generation references are deleted after the commit, a generation of
// several runs loads on any reader count, and a missing run file is refused
// naming it. Also: MPI-IO hints reach the file access property list.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/hdf5/hdf5_parallel.hpp"
#include "test_checkpoint_util.hpp"

namespace bloomshard::io {
namespace {

using test::layer_infos;
using test::owned_by;
using test::SharedTempDir;
using test::SubComm;
using test::test_header;
using test::test_keys;
using test::test_params;

constexpr int kKeys = 1500;

// Inserts batch b's keys of the owned slices; returns the new keys, all
// ranks. The set must not grow layers on its own (ranks would disagree).
std::uint64_t insert_batch(const comm::Communicator& c, core::TwoTierSet& set, int b) {
  const std::uint64_t before = set.exact().size();
  for (const std::string& k : test_keys(b, kKeys)) {
    const core::KeyHash h = core::hash_key(k);
    if (set.owned().contains(core::slice_of(h, test_params().num_slices))) (void)set.decide({h, k});
  }
  return c.allreduce_sum(set.exact().size() - before);
}

// Run files of `dir` as ids, and the ids the generations on disk reference.
std::set<std::uint64_t> run_files(const std::filesystem::path& dir) {
  std::set<std::uint64_t> out;
  for (const auto& p : list_run_files(dir)) {
    EXPECT_NE(p.extension(), ".tmp") << p;
    out.insert(*run_id_of(p));
  }
  return out;
}
std::set<std::uint64_t> referenced_runs(const std::filesystem::path& dir) {
  std::set<std::uint64_t> out;
  for (const std::uint64_t g : list_generations(dir)) {
    for (const CheckpointRunRef& r : read_checkpoint_summary(generation_path(dir, g)).runs) {
      out.insert(r.id);
    }
  }
  return out;
}

class CheckpointRuns : public ::testing::Test {
 protected:
  comm::Communicator world_;
};

TEST_F(CheckpointRuns, EachCheckpointWritesTheDeltaAsOneRunAndCompactsBounded) {
  SharedTempDir dir(world_);
  core::TwoTierSet set(test_params(), owned_by(world_));
  set.bloom().set_auto_grow(false);  // layers stay the same on every rank
  const CheckpointWriteOptions options{.keep = 2, .compaction = {2, 4}};
  std::uint64_t total = 0;
  int merges = 0;
  constexpr int kGenerations = 12;
  for (int g = 1; g <= kGenerations; ++g) {
    SCOPED_TRACE("generation " + std::to_string(g));
    const std::uint64_t delta = insert_batch(world_, set, g);
    total += delta;
    CheckpointWriteStats stats;
    const auto path =
        write_checkpoint(world_, dir.path(), test_header(static_cast<std::uint64_t>(g)),
                         layer_infos(world_, set), set, options, &stats);
    rebase_on_checkpoint(world_, path, set);
    EXPECT_EQ(world_.allreduce_sum(set.exact().size()), total);
    EXPECT_EQ(stats.tier2_keys, total);
    EXPECT_LE(stats.runs, 4U);
    if (stats.merged_runs == 0) {
      EXPECT_EQ(stats.run_keys, delta);  // the new run is the delta alone
      EXPECT_EQ(stats.compaction_bytes, 0U);
    } else {
      ++merges;
      EXPECT_GT(stats.run_keys, delta);
      EXPECT_GT(world_.allreduce_sum(stats.compaction_bytes), 0U);
    }
    EXPECT_EQ(set.exact().runs().size(), stats.runs);
    if (world_.rank() == 0) {
      EXPECT_EQ(wait_for_background_prune(), "");
      const CheckpointSummary s = read_checkpoint_summary(path);
      EXPECT_EQ(s.header.format_version, kCheckpointFormatVersion);
      EXPECT_EQ(s.runs.size(), stats.runs);
      EXPECT_EQ(s.tier2_keys, total);
      // Garbage collection: exactly the runs the kept generations reference.
      EXPECT_EQ(list_generations(dir.path()).size(), static_cast<std::size_t>(std::min(g, 2)));
      EXPECT_EQ(run_files(dir.path()), referenced_runs(dir.path()));
    }
    world_.barrier();
  }
  EXPECT_GE(merges, 4);

  // Any reader count loads the 12-generation history of several runs.
  const auto last = generation_path(dir.path(), kGenerations);
  for (int readers = 1; readers <= world_.size(); ++readers) {
    SubComm sub(world_, readers);
    if (!sub.member()) continue;
    const comm::Communicator c = sub.comm();
    LoadedCheckpoint loaded = load_checkpoint(c, last, owned_by(c));
    EXPECT_EQ(c.allreduce_sum(loaded.set->exact().size()), total);
    EXPECT_GE(loaded.set->exact().runs().size(), 2U);
    const std::uint32_t p = test_params().num_slices;
    for (int b = 1; b <= kGenerations + 1; ++b) {
      for (const std::string& k : test_keys(b, kKeys / 10)) {
        const core::KeyHash h = core::hash_key(k);
        const std::uint32_t s = core::slice_of(h, p);
        if (!loaded.set->owned().contains(s)) continue;
        EXPECT_EQ(loaded.set->exact().contains(s, core::fingerprint(h), k), b <= kGenerations);
      }
    }
  }
  EXPECT_TRUE(verify_checkpoint(world_, last).ok);
}

TEST_F(CheckpointRuns, MissingRunFileIsRefusedNamingIt) {
  SharedTempDir dir(world_);
  core::TwoTierSet set(test_params(), owned_by(world_));
  set.bloom().set_auto_grow(false);  // layers stay the same on every rank
  (void)insert_batch(world_, set, 0);
  auto path = write_checkpoint(world_, dir.path(), test_header(1), layer_infos(world_, set), set);
  rebase_on_checkpoint(world_, path, set);
  (void)insert_batch(world_, set, 1);
  path = write_checkpoint(world_, dir.path(), test_header(2), layer_infos(world_, set), set);
  std::string gone;
  if (world_.rank() == 0) {
    (void)wait_for_background_prune();
    const CheckpointSummary s = read_checkpoint_summary(path);
    ASSERT_EQ(s.runs.size(), 2U);
    gone = run_path(dir.path(), s.runs.front().id).string();
    std::filesystem::remove(gone);
  }
  gone = world_.broadcast(gone);
  try {
    (void)load_checkpoint(world_, path, owned_by(world_));
    ADD_FAILURE() << "a generation with a missing run loaded";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(gone), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing run file"), std::string::npos) << e.what();
  }
  const VerifyReport r = verify_checkpoint(world_, path);
  EXPECT_FALSE(r.ok);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("missing run file"), std::string::npos) << r.problems[0];
}

TEST_F(CheckpointRuns, MpiIoHintsAreParsedAndPassedThrough) {
  EXPECT_EQ(parse_mpiio_hints(""), MpiIoHints{});
  EXPECT_EQ(parse_mpiio_hints("striping_factor=4,cb_nodes=1"),
            (MpiIoHints{{"striping_factor", "4"}, {"cb_nodes", "1"}}));
  EXPECT_THROW((void)parse_mpiio_hints("striping_factor"), std::invalid_argument);
  EXPECT_THROW((void)parse_mpiio_hints("=4"), std::invalid_argument);
  EXPECT_THROW((void)parse_mpiio_hints("a = 4"), std::invalid_argument);
  // A checkpoint written with hints is still a good checkpoint.
  const MpiIoHints before = mpiio_hints();
  set_mpiio_hints({{"cb_nodes", "1"}, {"romio_cb_write", "enable"}});
  SharedTempDir dir(world_);
  core::TwoTierSet set(test_params(), owned_by(world_));
  set.bloom().set_auto_grow(false);  // layers stay the same on every rank
  (void)insert_batch(world_, set, 0);
  const auto path =
      write_checkpoint(world_, dir.path(), test_header(1), layer_infos(world_, set), set);
  set_mpiio_hints(before);
  EXPECT_TRUE(verify_checkpoint(world_, path).ok);
}

}  // namespace
}  // namespace bloomshard::io
