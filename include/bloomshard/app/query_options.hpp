// Options of `bloomshard query`: a plain struct filled by
// Boost.Program_options. The key scheme (key field, normalization, hash
// seed) is the state's; the flags that would choose one are only checked
// against it (state_key_scheme.hpp). Pure: every rank parses the same
// arguments and agrees without a message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bloomshard/app/dedup_options.hpp"
#include "bloomshard/app/state_key_scheme.hpp"

namespace bloomshard::app {

/// Which records a query writes to its outputs.
enum class QueryEmit : std::uint8_t {
  kHits = 0,    ///< records whose key the state holds (decontamination)
  kMisses = 1,  ///< records whose key it does not hold (filter against a blocklist)
};

struct QueryConfig {
  /// Inputs, output dir and the reading limits, in the form InputFeed takes;
  /// its key fields are set from the state's scheme before reading.
  DedupConfig feed;
  std::string state_dir;
  QueryEmit emit = QueryEmit::kHits;
  KeySchemeFlags scheme_flags;  ///< given flags, checked against the state
};

struct ParsedQuery {
  QueryConfig config;
  std::optional<int> exit_code;  ///< set: exit at once after printing `message`
  std::string message;
};

/// Parses and validates; never throws for user errors.
[[nodiscard]] ParsedQuery parse_query_options(const std::vector<std::string>& args);

}  // namespace bloomshard::app
