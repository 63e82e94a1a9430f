// Options of `bloomshard dedup`: the option groups of app/cli/ (feed,
// output, keys, filter, exchange, checkpoint, faults, window) filled by
// Boost.Program_options from the command line and an optional INI job file
// (--config; the command line wins). Validation is pure and runs on every
// rank with the same arguments, so all ranks agree without a message.
#pragma once

#include <string>
#include <vector>

#include "app/options/checkpoint_options.hpp"
#include "app/options/exchange_options.hpp"
#include "app/options/fault_options.hpp"
#include "app/options/feed_options.hpp"
#include "app/options/filter_options.hpp"
#include "app/options/key_options.hpp"
#include "app/options/output_options.hpp"
#include "app/options/parsed_options.hpp"
#include "app/options/window_options.hpp"

namespace bloomshard::app {

/// Every group a dedup job reads. A consumer that needs only some groups
/// takes them by reference to the group or as OptionGroups<...> (InputFeed,
/// Checkpointer), and a DedupConfig converts to either.
struct DedupConfig : FeedOptions,
                     OutputOptions,
                     KeyOptions,
                     FilterOptions,
                     ExchangeOptions,
                     CheckpointOptions,
                     FaultOptions,
                     WindowOptions {
  /// The options the user set (command line or job file), not left at their
  /// defaults: a state overrides some of them, and says so only for these.
  std::vector<std::string> explicit_options;
};

using ParsedDedup = ParsedOptions<DedupConfig>;

/// Why --kept-copy first cannot apply to a job of `c`'s unit and window
/// (the refusal's text), or "" when it can. The one list of where the first
/// copy in input order holds (docs/inputs.md "Which copy of a duplicate is
/// kept"): asked for elsewhere it is refused, and not asked for elsewhere
/// the run keeps the arrival order.
[[nodiscard]] std::string input_order_limit(const DedupConfig& c);

/// Whether the user chose --kept-copy (command line or job file): a resume
/// without it keeps the rule its state was started with.
[[nodiscard]] bool kept_copy_chosen(const DedupConfig& c);

/// Parses and validates; never throws for user errors (they become a
/// message and kExitUsage).
[[nodiscard]] ParsedDedup parse_dedup_options(const std::vector<std::string>& args);

}  // namespace bloomshard::app
