// Manual benchmark of the checkpoint store (not a test): builds a filter of
// N keys over the ranks, times write_checkpoint, load_checkpoint (with and
// without the tier-2 verification) and verify_checkpoint, and prints the
// file size and throughputs. Compare with `dd ... oflag=direct` and `cat`
// of the same file size (docs/checkpoint-format.md lists the figures).
//   mpiexec -n R ckpt_bench <keys> <state_dir> [repeat]  (writes generations 1..repeat)
//   mpiexec -n R ckpt_bench load <file>     (load only, e.g. after dropping caches)
//   mpiexec -n R ckpt_bench buildup <keys> <state_dir> <checkpoints>
//     (a job's history: equal deltas of keys/checkpoints new keys, a
//     checkpoint and a re-base after each, as the dedup job does, whose
//     last checkpoint ends the segment: it defers the compaction cascade
//     and is not re-based; one line per checkpoint: history keys, seconds,
//     bytes, runs, absorbed runs)
// BLOOMSHARD_CHECKPOINT_IO=auto|direct|mpiio picks the write's data path.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "comm/communicator.hpp"
#include "comm/environment.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

using namespace bloomshard;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
std::vector<io::CheckpointLayerInfo> layer_infos(const comm::Communicator& world,
                                                 const core::TwoTierSet& set) {
  std::vector<io::CheckpointLayerInfo> layers;
  for (std::size_t l = 0; l < set.bloom().num_layers(); ++l) {
    layers.push_back(
        {set.bloom().layer_geometry(l), world.allreduce_sum(set.bloom().layer_inserted(l))});
  }
  return layers;
}

// Flat cost: does the last checkpoint of a long build-up cost
// what the first did? Keys are distinct URLs-like strings of 30-40 bytes.
int buildup(const comm::Communicator& world, int argc, char** argv) {
  if (argc < 5) {
    if (world.rank() == 0) std::fprintf(stderr, "usage: ckpt_bench buildup <keys> <dir> <n>\n");
    return 2;
  }
  const std::uint64_t n = std::strtoull(argv[2], nullptr, 10);
  const std::filesystem::path dir = argv[3];
  const std::uint64_t checkpoints = std::max<std::uint64_t>(1, std::strtoull(argv[4], nullptr, 10));
  core::ScalableBloomParams params;
  params.initial_capacity = n;
  params.num_slices = 4096;
  const core::SliceRange owned = core::slices_of_rank(world.urank(), world.usize(), 4096);
  core::TwoTierSet set(params, owned);
  set.bloom().set_auto_grow(false);
  io::CheckpointHeader h;
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.bloom_layout = std::string(core::kBloomLayoutName);
  h.params = params;
  std::string key;
  std::uint64_t next = 0;
  if (world.rank() == 0) std::printf("generation history_keys seconds bytes runs merged\n");
  for (std::uint64_t g = 1; g <= checkpoints; ++g) {
    const std::uint64_t end = n / checkpoints * g + (g == checkpoints ? n % checkpoints : 0);
    for (; next < end; ++next) {  // every rank walks all keys, decides its own
      key = "https://example.org/doc/" + std::to_string(next * 2654435761ULL % 1000000007ULL) +
            "/" + std::to_string(next);
      const core::KeyHash kh = core::hash_key(key);
      if (owned.contains(core::slice_of(kh, 4096))) (void)set.decide({kh, key});
    }
    h.generation = g;
    if (world.rank() == 0) (void)io::wait_for_background_prune();  // the job's rounds hide it
    const bool segment_ends = g == checkpoints;
    io::CheckpointWriteOptions options;
    options.compaction.cap_only = segment_ends;
    io::CheckpointWriteStats stats;
    world.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    const std::filesystem::path path =
        io::write_checkpoint(world, dir, h, layer_infos(world, set), set, options, &stats);
    if (!segment_ends) io::rebase_on_checkpoint(world, path, set);
    const double secs = world.allreduce_max(seconds_since(t0));
    const std::uint64_t bytes = world.allreduce_sum(stats.bytes_written);
    if (world.rank() == 0) {
      std::printf("%llu %llu %.3f %llu %zu %zu\n", static_cast<unsigned long long>(g),
                  static_cast<unsigned long long>(stats.tier2_keys), secs,
                  static_cast<unsigned long long>(bytes), stats.runs, stats.merged_runs);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  comm::Environment env(argc, argv);
  const comm::Communicator world;
  if (argc < 3) {
    if (world.rank() == 0) std::fprintf(stderr, "usage: ckpt_bench <keys> <state_dir> [repeat]\n");
    return 2;
  }
  if (std::string(argv[1]) == "buildup") return buildup(world, argc, argv);
  if (std::string(argv[1]) == "load") {
    const std::filesystem::path file = argv[2];
    const auto p = io::read_checkpoint_summary(file).header.params.num_slices;
    const core::SliceRange mine = core::slices_of_rank(world.urank(), world.usize(), p);
    const auto t0 = std::chrono::steady_clock::now();
    { auto loaded = io::load_checkpoint(world, file, mine, true); }
    const double s = world.allreduce_max(seconds_since(t0));
    if (world.rank() == 0) {
      const double mb = static_cast<double>(std::filesystem::file_size(file)) / 1e6;
      std::printf("load (verify tier 2) %.3fs  %.0f MB/s\n", s, mb / s);
    }
    return 0;
  }
  const std::uint64_t n = std::strtoull(argv[1], nullptr, 10);
  const std::filesystem::path dir = argv[2];
  const int repeat = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  core::ScalableBloomParams params;
  params.initial_capacity = n;
  params.num_slices = 4096;
  const core::SliceRange owned = core::slices_of_rank(world.urank(), world.usize(), 4096);
  core::TwoTierSet set(params, owned);
  set.bloom().set_auto_grow(false);
  auto t0 = std::chrono::steady_clock::now();
  std::string key;
  for (std::uint64_t i = 0; i < n; ++i) {
    key = "https://example.org/doc/" + std::to_string(i * 2654435761ULL % 1000000007ULL);
    const core::KeyHash h = core::hash_key(key);
    if (owned.contains(core::slice_of(h, 4096))) (void)set.decide({h, key});
  }
  world.barrier();
  const double build_s = seconds_since(t0);

  io::CheckpointHeader h;
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.bloom_layout = std::string(core::kBloomLayoutName);
  h.params = params;
  h.generation = 1;
  std::vector<io::CheckpointLayerInfo> layers;
  for (std::size_t l = 0; l < set.bloom().num_layers(); ++l) {
    layers.push_back(
        {set.bloom().layer_geometry(l), world.allreduce_sum(set.bloom().layer_inserted(l))});
  }
  io::CheckpointWriteOptions options;
  if (const char* path = std::getenv("BLOOMSHARD_CHECKPOINT_IO"); path != nullptr) {
    const auto parsed = io::parse_checkpoint_data_path(path);
    if (!parsed) {
      if (world.rank() == 0) std::fprintf(stderr, "BLOOMSHARD_CHECKPOINT_IO: auto|direct|mpiio\n");
      return 2;
    }
    options.data_path = *parsed;
  }
  // Generations 1..repeat, one "write" line each (the disk is noisy: the
  // resume benchmark quotes their median). Each repeat first inserts one more
  // key on every rank, so each write starts, like a job's checkpoint after a
  // round, with the delta's slice order to rebuild (an unchanged set would
  // reuse the previous write's order and time only part of the work).
  std::filesystem::path path;
  double size_mb = 0;
  for (int g = 1; g <= repeat; ++g) {
    if (g > 1) {
      for (std::uint64_t i = static_cast<std::uint64_t>(g) << 32;; ++i) {  // new each repeat
        key = "https://example.org/extra/" + std::to_string(i);
        const core::KeyHash kh = core::hash_key(key);
        if (owned.contains(core::slice_of(kh, 4096))) {
          (void)set.decide({kh, key});
          break;
        }
      }
      for (std::size_t l = 0; l < set.bloom().num_layers(); ++l) {
        layers[l].inserted = world.allreduce_sum(set.bloom().layer_inserted(l));
      }
    }
    h.generation = static_cast<std::uint64_t>(g);
    // The previous write's background deletion of an old generation (1.3 s
    // for 5 GB here), timed apart: in a job the next rounds hide it.
    const auto p0 = std::chrono::steady_clock::now();
    if (world.rank() == 0) (void)io::wait_for_background_prune();
    const double prune_s = world.allreduce_max(seconds_since(p0));
    if (world.rank() == 0 && g > 2) std::printf("prune (background, waited) %.3fs\n", prune_s);
    io::CheckpointWriteStats stats;
    world.barrier();
    t0 = std::chrono::steady_clock::now();
    path = io::write_checkpoint(world, dir, h, layers, set, options, &stats);
    const double write_s = world.allreduce_max(seconds_since(t0));
    size_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    if (world.rank() == 0) {
      std::printf(
          "write  %.3fs  %.0f MB/s  (%s; rank 0 direct %.0f MB; transfers %llu, non-collective "
          "%llu, mode %d)\n",
          write_s, size_mb / write_s, stats.direct ? "direct" : "mpiio",
          static_cast<double>(stats.direct_bytes) / 1e6,
          static_cast<unsigned long long>(stats.transfers),
          static_cast<unsigned long long>(stats.non_collective), stats.last_io_mode);
      std::printf("  rank 0 phases: merge %.3fs  hdf5 %.3fs  commit (fsync, rename) %.3fs\n",
                  stats.merge_seconds, stats.io_seconds, stats.commit_seconds);
      std::fflush(stdout);
    }
  }

  world.barrier();
  t0 = std::chrono::steady_clock::now();
  { auto loaded = io::load_checkpoint(world, path, owned, true); }
  const double load_s = world.allreduce_max(seconds_since(t0));
  world.barrier();
  t0 = std::chrono::steady_clock::now();
  { auto loaded = io::load_checkpoint(world, path, owned, false); }
  const double load_nv_s = world.allreduce_max(seconds_since(t0));
  world.barrier();
  t0 = std::chrono::steady_clock::now();
  const bool ok = io::verify_checkpoint(world, path).ok;
  const double verify_s = world.allreduce_max(seconds_since(t0));

  if (world.rank() == 0) {
    std::printf("ranks %d keys %llu build %.2fs file %.1f MB (%s)\n", world.size(),
                static_cast<unsigned long long>(n), build_s, size_mb, path.c_str());
    std::printf("load (verify tier 2)  %.3fs  %.0f MB/s\n", load_s, size_mb / load_s);
    std::printf("load (no tier-2 verify) %.3fs\n", load_nv_s);
    std::printf("verify %.3fs ok=%d\n", verify_s, ok ? 1 : 0);
  }
  return 0;
}
