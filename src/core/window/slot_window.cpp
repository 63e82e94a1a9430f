// Slot arithmetic of rolling windows; see slot_window.hpp for the rules.
#include "core/window/slot_window.hpp"

#include <charconv>
#include <limits>
#include <stdexcept>

namespace bloomshard::core {
namespace {

constexpr std::string_view kPrefix = "window/v1; ";

std::uint64_t parse_u64(std::string_view text, std::string_view what) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw std::invalid_argument(std::string(what) + " '" + std::string(text) +
                                "' is not a non-negative integer");
  }
  return v;
}

}  // namespace

void check_window(const WindowSpec& w) {
  if (w.window < 1 || w.window > kMaxWindow) {
    throw std::invalid_argument("--window " + std::to_string(w.window) + " outside [1, " +
                                std::to_string(kMaxWindow) + "]");
  }
  if (w.rule == SlotRule::kPerRun && w.every != 0) {
    throw std::invalid_argument("a per-run slot has no size");
  }
  if (w.rule != SlotRule::kPerRun && w.every == 0) {
    throw std::invalid_argument("a slot of 0 records or seconds");
  }
}

std::string window_attribute(const WindowSpec& w) {
  std::string s = std::string(kPrefix) + "slots=" + std::to_string(w.window) + "; slot=";
  switch (w.rule) {
    case SlotRule::kPerRun:
      return s + "run";
    case SlotRule::kRecords:
      return s + "records:" + std::to_string(w.every);
    case SlotRule::kWallSeconds:
      return s + "seconds:" + std::to_string(w.every);
  }
  return s;
}

WindowSpec parse_window_attribute(std::string_view text) {
  if (text.substr(0, kPrefix.size()) != kPrefix) {
    throw std::invalid_argument("window attribute '" + std::string(text) +
                                "' does not start with 'window/v1; '");
  }
  text.remove_prefix(kPrefix.size());
  WindowSpec w;
  bool have_slots = false;
  bool have_slot = false;
  while (!text.empty()) {
    const std::size_t end = text.find("; ");
    const std::string_view item = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 2);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw std::invalid_argument("window item '" + std::string(item) + "' has no '='");
    }
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (name == "slots" && !have_slots) {
      const std::uint64_t n = parse_u64(value, "window slots");
      if (n > kMaxWindow) throw std::invalid_argument("window slots " + std::to_string(n));
      w.window = static_cast<std::uint32_t>(n);
      have_slots = true;
    } else if (name == "slot" && !have_slot) {
      have_slot = true;
      if (value == "run") {
        w.rule = SlotRule::kPerRun;
      } else if (value.substr(0, 8) == "records:") {
        w.rule = SlotRule::kRecords;
        w.every = parse_u64(value.substr(8), "slot records");
      } else if (value.substr(0, 8) == "seconds:") {
        w.rule = SlotRule::kWallSeconds;
        w.every = parse_u64(value.substr(8), "slot seconds");
      } else {
        throw std::invalid_argument("unknown slot rule '" + std::string(value) + "'");
      }
    } else {
      throw std::invalid_argument("unknown or repeated window item '" + std::string(item) + "'");
    }
  }
  if (!have_slots || !have_slot) {
    throw std::invalid_argument("window attribute lacks 'slots' or 'slot'");
  }
  check_window(w);
  return w;
}

std::string describe_window(const WindowSpec& w) {
  if (w.window == 0) return "no --window";
  std::string s = "--window " + std::to_string(w.window);
  if (w.rule == SlotRule::kRecords) s += " --slot-records " + std::to_string(w.every);
  if (w.rule == SlotRule::kWallSeconds) s += " --slot-every " + std::to_string(w.every) + "s";
  return s;
}

std::uint64_t parse_duration_seconds(std::string_view text) {
  std::uint64_t unit = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        text.remove_suffix(1);
        break;
      case 'm':
        unit = 60;
        text.remove_suffix(1);
        break;
      case 'h':
        unit = 3600;
        text.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  const std::uint64_t v = parse_u64(text, "duration");
  if (v == 0 || v > std::numeric_limits<std::uint64_t>::max() / unit) {
    throw std::invalid_argument("duration '" + std::string(text) + "' out of range");
  }
  return v * unit;
}

std::size_t expired_prefix(std::span<const std::uint64_t> slots, std::uint64_t current,
                           std::uint32_t window) noexcept {
  const std::uint64_t live = first_live_slot(current, window);
  std::size_t n = 0;
  while (n < slots.size() && slots[n] < live) ++n;
  return n;
}

std::size_t current_slot_suffix(std::span<const std::uint64_t> slots,
                                std::uint64_t current) noexcept {
  std::size_t n = 0;
  while (n < slots.size() && slots[slots.size() - 1 - n] == current) ++n;
  return n;
}

std::string check_slot_tags(std::span<const std::uint64_t> slots, std::uint64_t current) {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] > current) {
      return "slot tag " + std::to_string(slots[i]) + " at #" + std::to_string(i) +
             " is newer than the current slot " + std::to_string(current);
    }
    if (i > 0 && slots[i] < slots[i - 1]) {
      return "slot tags decrease at #" + std::to_string(i) + " (" + std::to_string(slots[i - 1]) +
             " then " + std::to_string(slots[i]) + ")";
    }
  }
  return {};
}

ScalableBloomParams slot_layer_params(const ScalableBloomParams& params, std::uint32_t window) {
  ScalableBloomParams p = params;
  p.fpr_target = params.fpr_target / (static_cast<double>(window) + 1.0);
  return p;
}

std::uint32_t slot_local_index(std::span<const std::uint64_t> layer_slots, std::size_t layer) {
  std::uint32_t j = 0;
  for (std::size_t i = layer; i > 0 && layer_slots[i - 1] == layer_slots[layer]; --i) ++j;
  return j;
}

}  // namespace bloomshard::core
