// The window group (docs/commands.md "Windows"): keep only the last N
// slots of history, a slot being one run, M records or a stretch of wall
// time (app/state/window_slots.hpp). Dedup only; needs --state.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "core/window/slot_window.hpp"

namespace bloomshard::app {

struct WindowOptions {
  /// --window N with --slot-records or --slot-every (window 0: none).
  core::WindowSpec window;
};

/// The window options as typed, before they are checked.
struct WindowFlags {
  std::uint32_t window = 0;
  std::uint64_t slot_records = 0;
  std::string slot_every;
};

/// Registers --window, --slot-records and --slot-every into `pool`.
void add_window_options(boost::program_options::options_description& pool, WindowFlags& flags);

/// Turns the typed flags into `window` (parse_window_options); throws
/// std::invalid_argument naming the option.
void apply_window_flags(const WindowFlags& flags, WindowOptions& window);

}  // namespace bloomshard::app
