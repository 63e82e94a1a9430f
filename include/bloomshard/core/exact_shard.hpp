// Tier 2: the exact ID store for the slices one rank owns, the authority for
// "seen". Every accepted key is kept as bytes. Per slice there are
//   - immutable sorted runs (sorted_run.hpp), oldest to newest, the same
//     runs for every owned slice: what earlier checkpoints wrote, living in
//     memory or in mapped checkpoint run files (a SliceBaseView only holds
//     spans; a shared keepalive handle per run keeps the storage);
//   - and the mutable delta of keys accepted since, shared by all owned
//     slices: an append-only arena of records [fingerprint][slice][length]
//     [bytes] and a hash index of 8-byte slots {24-bit tag, record offset}
//     into it (src/core/tier2/key_arena.hpp, delta_index.hpp). A new key costs
//     one index line and an append; a lookup of a present key one index line
//     and the record's line(s).
// Lookups check the delta, then the runs newest first (each a search on
// the fingerprint), and in a job only Bloom positives get here. The base of
// a slice is all its runs together.
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
  /// key is already present in delta or base. Limit: < 1 TiB of delta
  /// records (key bytes + 10-12 bytes per key) per shard, else
  /// std::length_error (nothing changed). Throws std::out_of_range for a
  /// slice not in owned().
  bool insert(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// Adds a key known to be absent (tier 1 said absent) without looking it
  /// up: the new-key path then touches neither the delta's entries nor the
  /// (possibly mapped) base. Inserting a present key breaks the merge
  /// invariant; debug builds check. Same limits as insert().
  void insert_new(std::uint32_t slice, std::uint64_t fingerprint, std::string_view key);

  /// Sizes the delta index for `keys` delta keys in all (those it holds
  /// included), so that inserting up to that many never rebuilds it; never
  /// shrinks. Costs 10.7 bytes of address space per key, resident as the
  /// keys touch it (at random, so soon all of it); kept by clear_delta().
  /// Throws std::bad_alloc, or std::length_error past 2^37 keys (nothing
  /// changed either way).
  void reserve_delta(std::uint64_t keys);

  /// Prefetches the delta index line a lookup or insert of `fingerprint`
  /// starts at (a hint; no effect on results).
  void prefetch(std::uint64_t fingerprint) const noexcept;
  /// Second stage, once prefetch() has landed: prefetches the delta record
  /// the index line points to for this fingerprint, if any (its first line,
  /// and its last for a key of `key_size` bytes that spans two). A lookup of
  /// a present key then finds both its lines in cache instead of two misses
  /// in a row; a new key's costs one read of the cached index line. A hint:
  /// reads the index, so call it only after prefetch() had time to land.
  void prefetch_record(std::uint64_t fingerprint, std::size_t key_size) const noexcept;
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
  /// slice once (one walk of its records; 16 bytes per delta key, counted in
  /// delta_bytes()); each call
  /// then sorts only that slice's delta keys (16 bytes per key of the slice,
  /// freed on return), by a radix pass on the fingerprint's top bits, reading
  /// key bytes only on equal fingerprints: about 0.05-0.1 us per key with
  /// the copy; merging k runs adds a k-way pick per key. Safe to call from
  /// several threads while no insert runs.
  void write_merged_slice(std::uint32_t slice, std::span<std::uint64_t> fingerprints,
                          std::span<std::uint64_t> offsets, std::span<char> bytes,
                          std::size_t depth = kAllRuns) const;

  /// Folds the delta and every run into one in-memory run per slice (for
  /// jobs without a state dir, or after a checkpoint that is not re-mapped),
  /// and unmaps the delta's memory.
  void fold_delta_into_base();
  /// Drops all delta keys; call only after a run holding them was attached.
  /// The delta's memory stays mapped and faulted in for the next keys (the
  /// index is zeroed, ~0.12 ms per MiB; faulting memory in again costs
  /// 0.14-5 ms per MiB on the VMs measured here), so resident memory stays
  /// at the largest delta so far.
  void clear_delta();

  [[nodiscard]] SliceRange owned() const noexcept { return owned_; }
  [[nodiscard]] std::uint64_t size() const noexcept;  ///< keys, base + delta
  [[nodiscard]] std::uint64_t delta_keys() const noexcept;
  /// What the delta's keys take, the figure a delta budget caps: their
  /// records (key bytes + 10-12 bytes per key), their index slots counted
  /// at the index's load limit (10.7 bytes per key, whatever reserve_delta()
  /// set aside), and the checkpoint's slice buckets while built (16 bytes
  /// per key). 0 for an empty delta.
  [[nodiscard]] std::uint64_t delta_bytes() const noexcept;
  /// Address space the delta holds mapped (resident once touched): the
  /// arena's mapping, the whole index table, the slice buckets. Stays after
  /// clear_delta(), unlike delta_bytes().
  [[nodiscard]] std::uint64_t delta_mapped_bytes() const noexcept;
  [[nodiscard]] std::uint64_t base_keys() const noexcept;  ///< keys of all runs

 private:
  struct Impl;
  SliceRange owned_;
  std::unique_ptr<Impl> impl_;  // pimpl keeps the header light; see exact_shard.cpp
};

}  // namespace bloomshard::core
