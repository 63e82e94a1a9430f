// What `bloomshard info` says about a windowed state: one entry
// per slot that holds Bloom layers or tier-2 runs, oldest first, with its
// age in slots, keys, key bytes and run-file bytes, and its Bloom layers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "app/report/json_writer.hpp"
#include "io/checkpoint/checkpoint_store.hpp"

namespace bloomshard::app {

struct SlotReport {
  std::uint64_t slot = 0;
  std::uint64_t age = 0;          ///< slots before the current one (0 = current)
  std::uint64_t runs = 0;         ///< tier-2 runs tagged with the slot
  std::uint64_t keys = 0;         ///< their keys (a key seen in two slots counts in both)
  std::uint64_t key_bytes = 0;    ///< their key bytes
  std::uint64_t file_bytes = 0;   ///< their run files' sizes
  std::uint64_t layers = 0;       ///< Bloom layers tagged with the slot
  std::uint64_t bloom_bytes = 0;  ///< their bits / 8, whole filter
};

/// The slots of a windowed summary (empty without a window).
/// `run_file_bytes[i]` is the size of run i's file.
[[nodiscard]] std::vector<SlotReport> slot_reports(const io::CheckpointSummary& s,
                                                   std::span<const std::uint64_t> run_file_bytes);

/// Adds "window", "current_slot" and the "slots" array to an open JSON
/// object (nothing without a window).
void add_window_json(JsonWriter& j, const io::CheckpointSummary& s,
                     std::span<const std::uint64_t> run_file_bytes);

/// Prints the text form: a "window" line and one line per slot.
void print_window_text(const io::CheckpointSummary& s,
                       std::span<const std::uint64_t> run_file_bytes);

}  // namespace bloomshard::app
