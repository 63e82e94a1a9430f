#include "app/options/window_options.hpp"

#include "app/state/window_slots.hpp"

namespace bloomshard::app {
namespace po = boost::program_options;

void add_window_options(po::options_description& pool, WindowFlags& flags) {
  // clang-format off
  pool.add_options()
    ("window", po::value(&flags.window),
     "keep only the last N slots of history (1..32; needs --state): a key is a duplicate when "
     "it occurred in the current slot or the N before it; a slot is one run on the state, "
     "unless --slot-records or --slot-every")
    ("slot-records", po::value(&flags.slot_records), "with --window: a new slot every M records")
    ("slot-every", po::value(&flags.slot_every),
     "with --window: a new slot every DURATION of job wall time (e.g. 90s, 30m, 24h)");
  // clang-format on
}

void apply_window_flags(const WindowFlags& flags, WindowOptions& w) {
  w.window = parse_window_options(flags.window, flags.slot_records, flags.slot_every);
}

}  // namespace bloomshard::app
