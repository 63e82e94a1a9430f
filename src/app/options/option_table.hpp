// How the option groups (feed, keys, output, filter, exchange, checkpoint,
// faults, window) become one command's option list. Each group registers
// its options once into a pool; a command lists, in a declarative table,
// which options it takes and in what order its --help shows them. Options
// not named are not accepted by that command.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

namespace bloomshard::app {

/// The command an option group is registered for: a shared option keeps
/// one value type, default and validation, and its help text may say what
/// it means for that command ("fails the query" rather than "stops the job").
enum class OptionsFor : std::uint8_t { kDedup, kQuery, kMerge };

/// `dedup_text` for dedup, `other_text` for the command that reads the
/// option differently.
[[nodiscard]] inline const char* help_for(OptionsFor command, const char* dedup_text,
                                          const char* other_text) {
  return command == OptionsFor::kDedup ? dedup_text : other_text;
}

/// Adds to `out`, in the order of `names`, the option of each name from the
/// first of `pools` that has it (the same option object: parsing fills the
/// group's field). Throws std::logic_error for a name no pool has: a table
/// typo is a bug, found by the first parse of any test.
void add_in_order(boost::program_options::options_description& out,
                  std::initializer_list<const boost::program_options::options_description*> pools,
                  std::span<const std::string_view> names);

}  // namespace bloomshard::app
