// Rolling time windows (`dedup --window N`): the pure slot
// arithmetic, MPI- and HDF5-free. A windowed state's history is cut into
// slots numbered 0, 1, 2, ...: one per dedup run on the state (the default),
// one per M records, or one per D seconds of job wall time. A key counts as
// seen when it occurred in the current slot or in one of the N slots before
// it; older slots are expired: their Bloom layers and tier-2 runs are dropped
// whole (no per-key deletion), so a key seen only there is new again.
//
// Consequences for the store (docs/checkpoint-format.md, "Windows"):
//   - every Bloom layer and every tier-2 run is tagged with the slot it was
//     opened / written in; both lists are ordered by slot (oldest first), so
//     expiry always drops a prefix of each;
//   - compaction merges only runs of the current slot (never across slots);
//   - the live slots share the FPR target: each slot's layers are sized for
//     fpr_target / (N + 1), so the compound FPR over N + 1 live slots stays
//     <= the target; a slot's layer j uses the geometry and block remix of
//     layer j of a plain filter with those parameters.
// Limits: N in [1, kMaxWindow]; a windowed generation holds at most 1024 Bloom
// layers (io/checkpoint/checkpoint_layout.hpp), room for ~31 growth layers per slot.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "bloomshard/core/scalable_bloom.hpp"

namespace bloomshard::core {

/// Largest --window: N + 1 live slots, each restarting at layer 0, bound the
/// lookups of a Bloom positive ((N + 1) x --max-runs runs) and the layers.
inline constexpr std::uint32_t kMaxWindow = 32;

/// What starts a new slot.
enum class SlotRule : std::uint8_t {
  kPerRun = 0,       ///< each dedup run on the state (e.g. each daily crawl)
  kRecords = 1,      ///< every `every` records read (all ranks together)
  kWallSeconds = 2,  ///< every `every` seconds of job wall time
};

/// A window: `window` slots before the current one stay live. window == 0
/// means no window (today's behaviour: nothing ever expires).
struct WindowSpec {
  std::uint32_t window = 0;
  SlotRule rule = SlotRule::kPerRun;
  std::uint64_t every = 0;  ///< records or seconds (kRecords, kWallSeconds), else 0
  friend bool operator==(const WindowSpec&, const WindowSpec&) = default;
};

/// Throws std::invalid_argument naming the problem: window outside
/// [1, kMaxWindow], every == 0 for kRecords/kWallSeconds, every != 0 for kPerRun.
void check_window(const WindowSpec& w);

/// The state attribute text: "window/v1; slots=3; slot=run",
/// "window/v1; slots=3; slot=records:5000", "window/v1; slots=3; slot=seconds:86400".
[[nodiscard]] std::string window_attribute(const WindowSpec& w);
/// Inverse of window_attribute; throws std::invalid_argument naming an
/// unknown prefix, item or value.
[[nodiscard]] WindowSpec parse_window_attribute(std::string_view text);
/// "--window 3 --slot-records 5000" style description of a spec
/// ("no --window" for window 0).
[[nodiscard]] std::string describe_window(const WindowSpec& w);

/// "90" or "90s", "30m", "24h" -> seconds (> 0). Throws std::invalid_argument.
[[nodiscard]] std::uint64_t parse_duration_seconds(std::string_view text);

/// Oldest slot that is still live when `current` is the current slot.
[[nodiscard]] constexpr std::uint64_t first_live_slot(std::uint64_t current,
                                                      std::uint32_t window) noexcept {
  return current > window ? current - window : 0;
}
/// Age of a slot in slots (0 = the current one).
[[nodiscard]] constexpr std::uint64_t slot_age(std::uint64_t slot, std::uint64_t current) noexcept {
  return current - slot;
}

/// How many of the oldest entries of `slots_oldest_first` (layer or run
/// tags) are expired at `current`: they form a prefix because tags never
/// decrease.
[[nodiscard]] std::size_t expired_prefix(std::span<const std::uint64_t> slots_oldest_first,
                                         std::uint64_t current, std::uint32_t window) noexcept;
/// How many of the newest entries belong to slot `current`: the only runs a
/// compaction may merge.
[[nodiscard]] std::size_t current_slot_suffix(std::span<const std::uint64_t> slots_oldest_first,
                                              std::uint64_t current) noexcept;

/// "" if the tags are valid for a state whose current slot is `current`
/// (non-decreasing, none newer than `current`), else why not.
[[nodiscard]] std::string check_slot_tags(std::span<const std::uint64_t> slots_oldest_first,
                                          std::uint64_t current);

/// The parameters each slot's layers are sized with: the filter's, with the
/// FPR target shared by the window + 1 live slots.
[[nodiscard]] ScalableBloomParams slot_layer_params(const ScalableBloomParams& params,
                                                    std::uint32_t window);
/// Index of layer `layer` inside its slot (0 for a slot's first layer):
/// the number of earlier layers with the same tag.
[[nodiscard]] std::uint32_t slot_local_index(std::span<const std::uint64_t> layer_slots,
                                             std::size_t layer);

/// True when a kRecords slot that started at `slot_start_records` (job
/// records read when it opened) is full at `records` read.
[[nodiscard]] constexpr bool records_slot_full(std::uint64_t records,
                                               std::uint64_t slot_start_records,
                                               std::uint64_t every) noexcept {
  return every != 0 && records >= slot_start_records && records - slot_start_records >= every;
}

}  // namespace bloomshard::core
