// The two-tier decision an owner makes for each key, in a batch, in order:
//   Bloom says absent -> new (insert in both tiers);
//   Bloom says maybe  -> ask tier 2 -> duplicate, or new (a counted false
//                        positive, inserted in both tiers).
// In a windowed set a duplicate whose newest copy lies in an older slot is
// inserted again into the current slot (tier 1 and the delta): "seen" means
// seen in the window, so its history restarts in the slot it was last seen.
// A Bloom "absent" is final and every "maybe" is confirmed, so a false
// positive never drops a record. Keys are decided strictly in batch order,
// so the first copy of a key in a batch wins and later copies are
// duplicates, also inside one batch.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "bloomshard/core/counter_table.hpp"
#include "bloomshard/core/exact_shard.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/scalable_bloom.hpp"

namespace bloomshard::core {

enum class Verdict : std::uint8_t {
  kNew = 0,                    ///< Bloom said absent: first time seen
  kDuplicate = 1,              ///< confirmed by tier 2
  kNewAfterFalsePositive = 2,  ///< Bloom said maybe, tier 2 said absent
  /// --unit minhash with --confirm-jaccard (core/minhash/band_confirmation.hpp):
  /// the band key was in tier 2 (not inserted again), but the similarity
  /// estimated against its first record is below the threshold, so the hit
  /// does not make its record a near-duplicate.
  kUnconfirmedHit = 3,
};

/// True for verdicts whose record is kept.
[[nodiscard]] constexpr bool is_kept(Verdict v) noexcept { return v != Verdict::kDuplicate; }

/// One key to decide: its hash and its (normalized) bytes.
struct KeyRef {
  KeyHash hash;
  std::string_view bytes;
};

/// Counters for every path; they add up: decided = tier1_absent + tier1_maybe,
/// tier1_maybe = tier2_lookups = duplicates + false_positives.
struct DecisionCounters {
  std::uint64_t decided = 0;
  std::uint64_t tier1_absent = 0;
  std::uint64_t tier1_maybe = 0;
  std::uint64_t tier2_lookups = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t false_positives = 0;
  /// Windowed sets: duplicates whose newest copy was in an older slot, so
  /// the key was inserted again into the current slot (of `duplicates`).
  std::uint64_t refreshed = 0;
  DecisionCounters& operator+=(const DecisionCounters& o) noexcept;
};

/// Every field of DecisionCounters, once: operator+= walks it, and so may a
/// reduction or a report (a new counter is one line here).
inline constexpr CounterOf<DecisionCounters> kDecisionCounterFields[] = {
    {"decided", &DecisionCounters::decided},
    {"tier1_absent", &DecisionCounters::tier1_absent},
    {"tier1_maybe", &DecisionCounters::tier1_maybe},
    {"tier2_lookups", &DecisionCounters::tier2_lookups},
    {"duplicates", &DecisionCounters::duplicates},
    {"false_positives", &DecisionCounters::false_positives},
    {"refreshed", &DecisionCounters::refreshed},
};
static_assert(std::size(kDecisionCounterFields) * sizeof(std::uint64_t) == sizeof(DecisionCounters),
              "a DecisionCounters field is missing from kDecisionCounterFields");

class TwoTierSet {
 public:
  /// The most delta keys the set reserves index room for up front (8.4M
  /// keys, 90 MB of index); a delta that grows past it doubles its index.
  static constexpr std::uint64_t kMaxReservedDeltaKeys = std::uint64_t{1} << 23;

  TwoTierSet(const ScalableBloomParams& params, SliceRange owned);

  /// Decides keys[i] into out[i] in order, as decide() would one by one: a
  /// Bloom pass over the keys (blocks prefetched kBloomPassDistance ahead),
  /// then tier 2 in the same order (index line prefetched 32 keys ahead, a
  /// maybe's record 16 ahead). If tier 2 throws (allocation), the keys of
  /// the batch after it keep their Bloom bits: future false positives,
  /// which tier 2 corrects.
  /// Throws std::invalid_argument if out.size() != keys.size() or a key's
  /// slice is not in owned(); keys before it stay decided (and counted).
  /// The first call after a layer opens sizes the tier-2 index for this
  /// rank's share of the layer (ExactShard::reserve_delta; at most
  /// kMaxReservedDeltaKeys), so that it does not rebuild while the layer fills.
  void decide_batch(std::span<const KeyRef> keys, std::span<Verdict> out);
  /// Single-key form of decide_batch. A Bloom "absent" is trusted (the key
  /// goes to tier 2 without a lookup), so tier 1 must hold every tier-2 key.
  Verdict decide(const KeyRef& key);

  /// Windowed sets (bloom().window() != 0, slot_window.hpp): makes `slot`
  /// current, dropping the Bloom layers and tier-2 runs of the slots that
  /// fall out of the window and opening the slot's first layer. The delta
  /// must be empty (flushed into a run of the closing slot by a checkpoint),
  /// else std::logic_error: its keys would otherwise outlive their slot.
  /// Collective in a distributed job (every rank at the same round).
  void open_slot(std::uint64_t slot);

  [[nodiscard]] const DecisionCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] ScalableBloom& bloom() noexcept { return bloom_; }
  [[nodiscard]] const ScalableBloom& bloom() const noexcept { return bloom_; }
  [[nodiscard]] ExactShard& exact() noexcept { return exact_; }
  [[nodiscard]] const ExactShard& exact() const noexcept { return exact_; }
  [[nodiscard]] SliceRange owned() const noexcept { return bloom_.owned(); }

 private:
  void reserve_delta_for_newest_layer();
  Verdict decide_reserved(const KeyRef& key);
  Verdict decide_absent(std::uint32_t slice, const KeyRef& key);
  Verdict decide_maybe(std::uint32_t slice, const KeyRef& key);
  // Tier 2 for keys the Bloom pass settled: absent[i] != 0 for new keys.
  void decide_tier2(std::span<const KeyRef> keys, std::span<const std::uint8_t> absent,
                    std::span<Verdict> out);

  ScalableBloom bloom_;
  ExactShard exact_;
  DecisionCounters counters_;
  // The layers (count, current slot) the delta index was last sized for.
  std::pair<std::size_t, std::uint64_t> reserved_for_{0, 0};
  // decide_batch's scratch, kept between batches: the keys' hashes (the
  // Bloom pass reads them densely) and its answers.
  std::vector<KeyHash> hashes_;
  std::vector<std::uint8_t> absent_;
};

}  // namespace bloomshard::core
