// The exchange group: how a round's keys travel between ranks (flat or
// node-aware all-to-all) and the payload one exchange may carry before the
// round is split into sub-rounds (comm::KeyRouter). Dedup registers them;
// query reads the defaults.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "comm/router.hpp"

namespace bloomshard::app {

struct ExchangeOptions {
  /// Payload bytes one rank may send or receive in one exchange; a round
  /// over it is split into sub-rounds (comm::KeyRouter::route).
  std::uint64_t max_exchange_bytes = comm::kDefaultSubroundBudget;
  /// flat, node or auto (comm::ExchangeMode); node-aware from 1024 ranks.
  comm::ExchangeMode exchange = comm::ExchangeMode::kAuto;
};

/// The exchange options as typed, before they are checked.
struct ExchangeFlags {
  std::string exchange = "auto";
};

/// Registers --max-exchange-bytes and --exchange into `pool`.
void add_exchange_options(boost::program_options::options_description& pool,
                          ExchangeOptions& exchange, ExchangeFlags& flags);

/// Turns the typed flags into `exchange`; throws std::invalid_argument.
void apply_exchange_flags(const ExchangeFlags& flags, ExchangeOptions& exchange);

/// The first value out of range (option named), or empty.
[[nodiscard]] std::string exchange_problem(const ExchangeOptions& exchange);

}  // namespace bloomshard::app
