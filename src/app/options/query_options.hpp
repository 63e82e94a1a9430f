// Options of `bloomshard query`: the option groups a query reads (feed,
// output, keys, exchange), registered and checked by the same functions
// as dedup's, plus the query's own. The key scheme (key field,
// normalization, hash seed) is the state's; the flags that would choose one
// are only checked against it (state_key_scheme.hpp). Pure: every rank
// parses the same arguments and agrees without a message.
#pragma once

#include <string>
#include <vector>

#include "app/options/dedup_options.hpp"
#include "app/options/exchange_options.hpp"
#include "app/options/feed_options.hpp"
#include "app/options/key_options.hpp"
#include "app/options/option_groups.hpp"
#include "app/options/output_options.hpp"
#include "app/options/parsed_options.hpp"
#include "app/state/state_key_scheme.hpp"

namespace bloomshard::app {

/// Which records a query writes to its outputs.
enum class QueryEmit : std::uint8_t {
  kHits = 0,    ///< records whose key the state holds (decontamination)
  kMisses = 1,  ///< records whose key it does not hold (filter against a blocklist)
};

/// Inputs, output dir, reading limits and key scheme, in the form InputFeed
/// takes; its key scheme is set from the state's before reading.
using QueryFeed = OptionGroups<FeedOptions, OutputOptions, KeyOptions, ExchangeOptions>;

struct QueryConfig {
  QueryFeed feed;
  std::string state_dir;
  QueryEmit emit = QueryEmit::kHits;
  KeySchemeFlags scheme_flags;  ///< given flags, checked against the state
};

using ParsedQuery = ParsedOptions<QueryConfig>;

/// Parses and validates; never throws for user errors.
[[nodiscard]] ParsedQuery parse_query_options(const std::vector<std::string>& args);

}  // namespace bloomshard::app
