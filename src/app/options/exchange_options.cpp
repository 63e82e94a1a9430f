#include "app/options/exchange_options.hpp"

#include <stdexcept>

namespace bloomshard::app {
namespace po = boost::program_options;

void add_exchange_options(po::options_description& pool, ExchangeOptions& e, ExchangeFlags& flags) {
  // clang-format off
  pool.add_options()
    ("max-exchange-bytes",
     po::value(&e.max_exchange_bytes)->default_value(e.max_exchange_bytes),
     "payload bytes a rank sends or receives in one exchange; a larger round (hot keys, many "
     "ranks) is split into sub-rounds (4096 .. 512 MiB)")
    ("exchange", po::value(&flags.exchange)->default_value(flags.exchange),
     "all-to-all over all ranks (flat), or in two steps, inside each node then across nodes "
     "(node: L-1 + N-1 messages per rank instead of R-1); auto: node from 1024 ranks on");
  // clang-format on
}

void apply_exchange_flags(const ExchangeFlags& flags, ExchangeOptions& e) {
  const auto mode = comm::parse_exchange_mode(flags.exchange);
  if (!mode) {
    throw std::invalid_argument("--exchange must be flat, node or auto, not '" + flags.exchange +
                                "'");
  }
  e.exchange = *mode;
}

std::string exchange_problem(const ExchangeOptions& e) {
  // A sub-round may overshoot the budget by one key per sender (up to
  // R x (20 B + max key bytes): 1.07 GB at 16384 ranks and 64 KiB keys);
  // 512 MiB leaves room for that below MPI's 2 GiB int counts.
  if (e.max_exchange_bytes < 4096 || e.max_exchange_bytes > (512ULL << 20)) {
    return "--max-exchange-bytes must be in [4096, 536870912]";
  }
  return {};
}

}  // namespace bloomshard::app
