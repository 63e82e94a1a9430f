// Tier 1: a scalable Bloom filter over the slices one rank owns. Each layer
// is cut into per-slice arrays of 512-bit blocks (bloom_kernel.hpp); a key
// probes one block per layer, chosen inside its slice. Layer i has capacity
// initial_capacity * growth^i and FPR target p_i = p0 * tightening^i with
// p0 = target * (1 - tightening), so the compound FPR (sum of p_i) stays
// <= target however many layers come. Queries check every layer; inserts
// write the newest one.
//
// Capacities are global (the whole filter over all P slices): a rank holding
// a slice range stores blocks_per_slice * range.size() blocks per layer.
// With auto_grow on (the default, right for a filter that owns all slices)
// insert() opens a new layer when the newest one reaches its capacity; a
// distributed job turns it off and calls add_layer() on every rank at once
// after agreeing on the global count.
//
// Windowed filters (slot_window.hpp, `dedup --window N`): every layer is
// tagged with the slot it was opened in; a slot's layer j has the geometry
// and block remix of layer j of a plain filter with slot_layer_params(), so
// dropping the expired slots' layers (a prefix) changes no kept layer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"

namespace bloomshard::core {

/// Parameters fixed when the filter is created (saved in checkpoints).
struct ScalableBloomParams {
  std::uint64_t initial_capacity = 1'000'000;  ///< keys, whole filter, >= 1
  double fpr_target = 0.001;                   ///< compound target, (0, 0.5]
  double growth = 2.0;                         ///< s >= 1
  double tightening = 0.5;                     ///< r in (0, 1)
  std::uint32_t num_slices = 4096;             ///< P
};

/// Geometry of one layer, the same on every rank and in every checkpoint.
struct BloomLayerGeometry {
  std::uint64_t capacity = 0;          ///< keys, whole filter
  double fpr_target = 0;               ///< p_i
  double bits_per_key = 0;             ///< chosen by bloom_math
  std::uint32_t k = 0;                 ///< probes inside the block
  std::uint64_t blocks_per_slice = 0;  ///< >= 1
};

/// Statistics of one layer as seen by this rank (its slices only).
struct BloomLayerStats {
  BloomLayerGeometry geometry;
  std::uint64_t inserted = 0;  ///< keys inserted into this layer on this rank
  double fill_ratio = 0;       ///< set bits / bits
  double fpr_estimate = 0;     ///< from per-block fill
  double cardinality_estimate = 0;
};

/// Geometry of layer `index` for the given parameters (pure):
/// capacity = ceil(initial_capacity * growth^index), p_i = p0 * r^index,
/// bits_per_key and k from choose_geometry(p_i), blocks_per_slice =
/// max(1, ceil(capacity * bits_per_key / (512 * P))). Throws
/// std::invalid_argument on bad parameters or a capacity beyond 2^62.
[[nodiscard]] BloomLayerGeometry layer_geometry(const ScalableBloomParams& params,
                                                std::uint32_t index);

/// How many keys ahead insert_if_absent_batch prefetches. Its loop reads
/// only Bloom blocks, so more lines can be in flight than in the mixed
/// decide loop (kPrefetchDistance). A power of two.
inline constexpr std::size_t kBloomPassDistance = 32;

class ScalableBloom {
 public:
  /// Creates the filter with one layer. Throws std::invalid_argument on bad
  /// parameters or a range outside [0, num_slices).
  ScalableBloom(const ScalableBloomParams& params, SliceRange owned);

  /// True if the key may have been inserted (some layer says maybe).
  /// Precondition: slice_of(h, P) is in owned().
  [[nodiscard]] bool may_contain(const KeyHash& h) const noexcept;

  /// Sets the key's bits in the newest layer. Returns true if any bit was
  /// newly set. Grows first when auto_grow is on and the layer is full.
  /// Every call counts toward the layer's capacity, so callers insert each
  /// distinct key once (the two-tier set does).
  bool insert(const KeyHash& h);

  /// may_contain() and, when it says absent, insert(), in one pass over the
  /// key's blocks with the probe bits computed once: true if the key was
  /// absent and is now inserted, false for maybe (nothing changed). The
  /// two-tier decision's path for every key. Same preconditions.
  bool insert_if_absent(const KeyHash& h);

  /// insert_if_absent() for hashes[0], hashes[1], ... in order, the blocks
  /// prefetched kBloomPassDistance keys ahead: absent[i] = 1 if key i was
  /// absent (now inserted), 0 for maybe. Stops before the first key whose
  /// slice is not owned, or whose maybe comes from an older layer only (its
  /// insert() would then set bits in the newest layer, which a later key may
  /// read: the caller decides it alone), and returns how many keys it did.
  /// With auto_grow on it does nothing (returns 0) unless the newest layer
  /// has room for every key, so no layer opens inside the pass and an
  /// insert() of a key it called maybe changes no bit a later key reads.
  /// absent.size() >= hashes.size(), else std::invalid_argument.
  std::size_t insert_if_absent_batch(std::span<const KeyHash> hashes,
                                     std::span<std::uint8_t> absent);

  /// Prefetches the cache lines `h` will touch in every layer (no effect on
  /// results); the batch paths call it a fixed distance ahead.
  void prefetch(const KeyHash& h) const noexcept;

  /// Batched forms with prefetching; `out[i]` is 1 for maybe, 0 for absent
  /// (out.size() >= hashes.size(), else std::invalid_argument). A query
  /// makes one prefetched pass per layer with the widest probe the CPU has
  /// (bloom_kernel.hpp); ~1.2x a bare random line read at 50M keys.
  void query_batch(std::span<const KeyHash> hashes, std::span<std::uint8_t> out) const;
  void insert_batch(std::span<const KeyHash> hashes);

  /// Opens a new newest layer (collective in a distributed job: every rank
  /// must do it at the same point).
  void add_layer();
  /// True when the newest layer holds `global_inserted` >= its capacity.
  [[nodiscard]] bool layer_full(std::uint64_t global_inserted) const noexcept;
  void set_auto_grow(bool on) noexcept { auto_grow_ = on; }

  /// Makes the filter windowed: replaces every layer by an empty one, one
  /// per tag of `layer_slots` (oldest first, non-decreasing, the newest equal
  /// to `current_slot`), sized for `window` (see the top of this file).
  /// Throws std::invalid_argument on bad tags or window (check_window).
  void start_window(std::uint32_t window, std::uint64_t current_slot,
                    std::span<const std::uint64_t> layer_slots);
  /// Windowed filters only (std::logic_error otherwise): makes `slot` (>
  /// current_slot(), else std::invalid_argument) current, drops the layers
  /// of slots that fall out of the window and opens the new slot's first
  /// layer. Collective in a distributed job, like add_layer().
  void open_slot(std::uint64_t slot);
  /// 0 for a plain filter, else N of --window N.
  [[nodiscard]] std::uint32_t window() const noexcept { return window_; }
  /// The slot new layers are tagged with (0 for a plain filter).
  [[nodiscard]] std::uint64_t current_slot() const noexcept { return current_slot_; }
  /// Slot tag of a layer (0 in a plain filter). std::out_of_range.
  [[nodiscard]] std::uint64_t layer_slot(std::size_t layer) const;

  [[nodiscard]] const ScalableBloomParams& params() const noexcept { return params_; }
  [[nodiscard]] SliceRange owned() const noexcept { return owned_; }
  [[nodiscard]] std::size_t num_layers() const noexcept { return layers_.size(); }
  /// Geometry and statistics of a layer. O(bits): it counts the set bits
  /// (for fill, FPR and cardinality estimates), so it is for reports, not
  /// for every checkpoint; layer_geometry() and layer_inserted() are O(1).
  [[nodiscard]] BloomLayerStats layer_stats(std::size_t layer) const;
  [[nodiscard]] const BloomLayerGeometry& layer_geometry(std::size_t layer) const;
  /// Keys inserted into the layer on this rank.
  [[nodiscard]] std::uint64_t layer_inserted(std::size_t layer) const;
  /// Inserts counted in the newest layer on this rank.
  [[nodiscard]] std::uint64_t newest_layer_inserted() const noexcept;

  /// Raw words of one slice of one layer (8 words per block), for
  /// checkpoints and checksums. Slice is a global slice index in owned();
  /// std::out_of_range otherwise (layer_stats likewise for the layer).
  [[nodiscard]] std::span<const std::uint64_t> slice_words(std::size_t layer,
                                                           std::uint32_t slice) const;
  [[nodiscard]] std::span<std::uint64_t> slice_words(std::size_t layer, std::uint32_t slice);
  /// Rebuild support for checkpoints: set the count of inserts of a layer.
  void set_layer_inserted(std::size_t layer, std::uint64_t inserted);
  /// Total bytes of Bloom bits held.
  [[nodiscard]] std::uint64_t memory_bytes() const noexcept;

 private:
  struct Layer {
    BloomLayerGeometry geometry;
    std::uint64_t inserted = 0;
    std::uint64_t slot = 0;   // slot tag (windowed filters)
    std::uint32_t remix = 0;  // block remix index: the layer's index (in its slot)
    LayerLayout layout;       // where its keys go (from the above and the filter's)
    BlockWords words;         // owned_.size() * blocks_per_slice * 8, 64-byte aligned
  };
  [[nodiscard]] LayerLayout layout(std::size_t index) const noexcept;
  [[nodiscard]] const Layer& layer_at(std::size_t layer) const;  // std::out_of_range

  ScalableBloomParams params_;
  SliceRange owned_;
  bool auto_grow_ = true;
  std::uint32_t window_ = 0;
  std::uint64_t current_slot_ = 0;
  std::vector<Layer> layers_;
};

}  // namespace bloomshard::core
