// Tier 2: the exact ID store for the slices one rank owns, the authority for
// "seen". Every accepted key is kept as bytes. Per slice there are
//   - immutable sorted runs (sorted_run.hpp), oldest to newest, the same
//     runs for every owned slice: what earlier checkpoints wrote, living in
//     memory or in mapped checkpoint run files (a SliceBaseView only holds
//     spans; a shared keepalive handle per run keeps the storage);
//   - and the mutable delta of keys accepted since: an open-addressing index
//     of fingerprints into a byte arena, no std::string per key.
// Lookups check the delta, then the runs newest first (each a binary
// search), and in a job only Bloom positives get here. The base of a slice
// is all its runs together.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/core/sorted_run.hpp"

namespace bloomshard::core {

/// Identity of one run inside a shard: the store's run number and its
/// compaction level (run_compaction.hpp). Every owned slice has the same runs.
struct RunInfo {
  std::uint64_t id = 0;
  std::uint32_t level = 0;
  std::uint64_t slot = 0;  ///< window slot the run belongs to (slot_window.hpp; 0 without)
  friend bool operator==(const RunInfo&, const RunInfo&) = default;
};

class ExactShard {
 public:
  /// An empty shard for `owned` slices of a filter of num_slices slices.
  /// Throws std::invalid_argument unless owned lies in [0, num_slices).
  ExactShard(SliceRange owned, std::uint32_t num_slices);
  ~ExactShard();
  ExactShard(ExactShard&&) noexcept;
  ExactShard& operator=(ExactShard&&) noexcept;
  // Not copyable: a shard may hold gigabytes; copy merged_slice() data instead.
  ExactShard(const ExactShard&) = delete;
  ExactShard& operator=(const ExactShard&) = delete;

  /// Exact membership (delta, then base). Throws std::out_of_range unless
  /// `slice` is in owned(). Membership is per slice: callers pass the slice
  /// of the key's hash.
  [[nodiscard]] bool contains(std::uint32_t slice, std::uint64_t fingerprint,
                              std::string_view key) const;
  /// Adds the key to the delta. Returns false (and changes nothing) if the
  /// key is already present in delta or base. Limits: < 2^32 - 1 delta keys
  /// and < 2^24 arena chunks (>= 1 TiB of small keys) per shard, else
  /// std::length_error. Throws std::out_of_range for a slice not in owned().
  bool insert(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// Adds a key known to be absent (tier 1 said absent) without looking it
  /// up: the new-key path then touches neither the delta's entries nor the
  /// (possibly mapped) base. Inserting a present key breaks the merge
  /// invariant; debug builds check. Same limits as insert().
  void insert_new(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// Prefetches the delta index line a lookup or insert of `fingerprint`
  /// starts at (a hint; no effect on results).
  void prefetch(std::uint64_t fingerprint) const noexcept;
  /// For a key Bloom calls maybe, once prefetch() has brought the index line
  /// in: prefetches the delta entry its home slot points to (a hint; reads
  /// the index, so call it only after prefetch() had time to land).
  void prefetch_entry(std::uint64_t fingerprint) const noexcept;
  /// Last stage, once prefetch_entry() has landed: prefetches the key bytes
  /// of that entry in the arena. A lookup of a present key then finds its
  /// three lines (index, entry, bytes) in cache instead of three misses in
  /// a row.
  void prefetch_key_bytes(std::uint64_t fingerprint) const noexcept;
  /// Prefetches where a lookup of `fingerprint` starts in each run of the
  /// owned `slice` (a hint, for keys Bloom calls maybe).
  void prefetch_runs(std::uint32_t slice, std::uint64_t fingerprint) const noexcept;

  /// merge depth meaning "the delta and every run".
  static constexpr std::size_t kAllRuns = static_cast<std::size_t>(-1);

  /// Replaces a slice's base with a view whose storage `keepalive` owns
  /// (a mapped checkpoint, or SliceBaseData): the shard then has one run (an
  /// empty one, id 0, in the other slices if it had none). The delta of the
  /// slice is kept (keys in both are counted twice by size() until
  /// clear_delta(), but merged_slice() emits them once). The view is not
  /// validated here. Throws std::logic_error if the shard has > 1 run.
  void attach_base(std::uint32_t slice, SliceBaseView view, std::shared_ptr<const void> keepalive);

  /// Drops the newest `count` runs (all if count > num_runs()) and adds one
  /// newest run: views[i] for owned slice owned().first + i, its storage
  /// owned by `keepalive`. The delta is kept as in attach_base. Views are not
  /// validated here. Throws std::invalid_argument unless views.size() ==
  /// owned().size().
  void replace_newest_runs(std::size_t count, RunInfo info, std::vector<SliceBaseView> views,
                           std::shared_ptr<const void> keepalive);

  /// Drops the oldest `count` runs (all if count > num_runs()): the runs of
  /// window slots that expired. The delta is kept.
  void drop_oldest_runs(std::size_t count);

  /// Where a lookup finds the key: kInDelta, the index of the newest run
  /// holding it (0 = oldest), or kNotHeld. Same cost as contains().
  static constexpr std::size_t kNotHeld = static_cast<std::size_t>(-1);
  static constexpr std::size_t kInDelta = static_cast<std::size_t>(-2);
  [[nodiscard]] std::size_t newest_holder(std::uint32_t slice, std::uint64_t fingerprint,
                                          std::string_view key) const;
  /// Adds to the delta a key that only runs hold (a windowed state's key
  /// seen again in a newer slot: the copy restarts its history there). The
  /// runs are then no longer disjoint; a checkpoint must not merge the delta
  /// with a run holding the key (windows merge only the current slot's
  /// runs, which never do). Debug builds check the delta lacks it.
  void insert_refresh(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// The runs, oldest first.
  [[nodiscard]] const std::vector<RunInfo>& runs() const noexcept;
  /// Slice `slice` of run `run` (0 = oldest). Throws std::out_of_range.
  [[nodiscard]] SliceBaseView run_view(std::size_t run, std::uint32_t slice) const;

  /// The slice's delta merged with its newest `depth` runs (all by default),
  /// sorted by (fingerprint, bytes as unsigned), each key once; the shard is
  /// unchanged. This is what a checkpoint writes as its new run (depth 0:
  /// the delta alone). Same as write_merged_slice() into owned vectors.
  [[nodiscard]] SliceBaseData merged_slice(std::uint32_t slice, std::size_t depth = kAllRuns) const;

  /// Exact size of merged_slice(slice, depth) without merging: O(runs) from
  /// per-slice counters, unless a run was attached over a non-empty delta
  /// (keys may then be in both; the slice is merged once to count them).
  [[nodiscard]] SliceSize merged_slice_size(std::uint32_t slice,
                                            std::size_t depth = kAllRuns) const;

  /// Writes merged_slice(slice) straight into caller memory (e.g. a
  /// checkpoint's write buffer): its fingerprints, its slice-local offsets
  /// (0, ..., bytes) and its key bytes. The spans must have exactly
  /// merged_slice_size() keys, keys + 1 and bytes elements, else
  /// std::length_error. The first call after an insert buckets the delta by
  /// slice once (16 bytes per delta key, counted in delta_bytes()); each call
  /// then sorts only that slice's delta keys (16 bytes per key of the slice,
  /// freed on return), by a radix pass on the fingerprint's top bits, reading
  /// key bytes only on equal fingerprints: about 0.05-0.1 us per key with
  /// the copy; merging k runs adds a k-way pick per key. Safe to call from
  /// several threads while no insert runs.
  void write_merged_slice(std::uint32_t slice, std::span<std::uint64_t> fingerprints,
                          std::span<std::uint64_t> offsets, std::span<char> bytes,
                          std::size_t depth = kAllRuns) const;

  /// Folds the delta and every run into one in-memory run per slice (for
  /// jobs without a state dir, or after a checkpoint that is not re-mapped).
  void fold_delta_into_base();
  /// Drops all deltas and frees their memory; call only after a run holding
  /// them was attached.
  void clear_delta();

  [[nodiscard]] SliceRange owned() const noexcept { return owned_; }
  [[nodiscard]] std::uint64_t size() const noexcept;  ///< keys, base + delta
  [[nodiscard]] std::uint64_t delta_keys() const noexcept;
  /// Bytes the delta holds allocated (index, entries, arena, merge order):
  /// about 30 bytes per key plus the key bytes, and 64 KiB once non-empty.
  [[nodiscard]] std::uint64_t delta_bytes() const noexcept;
  [[nodiscard]] std::uint64_t base_keys() const noexcept;  ///< keys of all runs

 private:
  struct Impl;
  SliceRange owned_;
  std::uint32_t num_slices_;
  std::unique_ptr<Impl> impl_;  // pimpl keeps the header light; see exact_shard.cpp
};

}  // namespace bloomshard::core
