#include "app/options/fault_options.hpp"

#include <stdexcept>

namespace bloomshard::app {
namespace po = boost::program_options;

void add_fault_options(po::options_description& pool, FaultOptions& f, FaultFlags& flags) {
  // clang-format off
  pool.add_options()
    ("lock-wait", po::value(&f.lock_wait)->default_value(f.lock_wait),
     "seconds to wait for an earlier attempt of this run (orphaned ranks included) to end "
     "before refusing with exit 5")
    ("stall-timeout", po::value(&f.stall_timeout)->default_value(f.stall_timeout),
     "seconds without progress (a stuck file system, a silent peer) after which a rank "
     "reports and ends the job (0: off)")
    ("fencing", po::value(&flags.fencing)->default_value(flags.fencing),
     "how the run's lock file fences earlier attempts: auto (fcntl locks, else a lease "
     "file) | fcntl | lease");
  // clang-format on
}

void apply_fault_flags(const FaultFlags& flags, FaultOptions& f) {
  const auto fencing = parse_fencing_mode(flags.fencing);
  if (!fencing) {
    throw std::invalid_argument("--fencing must be auto, fcntl or lease, not '" + flags.fencing +
                                "'");
  }
  f.fencing = *fencing;
}

std::string fault_problem(const FaultOptions& f) {
  if (!(f.lock_wait >= 0 && f.lock_wait <= 86400)) return "--lock-wait must be in [0, 86400]";
  if (!(f.stall_timeout == 0 || (f.stall_timeout >= 1 && f.stall_timeout <= 86400))) {
    return "--stall-timeout must be 0 (off) or in [1, 86400]";
  }
  return {};
}

}  // namespace bloomshard::app
