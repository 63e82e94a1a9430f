// The fault group (docs/reliability.md): one writer per run (the lock wait
// and the fencing of earlier attempts) and no hang (the stall watchdog).
// Dedup only.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "app/run/run_lease.hpp"

namespace bloomshard::app {

struct FaultOptions {
  double lock_wait = 120;     ///< seconds a start waits for an earlier attempt to end (> the
                              ///< 90 s lease timeout and the 60 s stall timeout)
  double stall_timeout = 60;  ///< seconds without progress before a rank ends the job; 0: off
  FencingMode fencing = FencingMode::kAuto;
};

/// The fault options as typed, before they are checked.
struct FaultFlags {
  std::string fencing = "auto";
};

/// Registers --lock-wait, --stall-timeout and --fencing into `pool`.
void add_fault_options(boost::program_options::options_description& pool, FaultOptions& faults,
                       FaultFlags& flags);

/// Turns the typed flags into `faults`; throws std::invalid_argument.
void apply_fault_flags(const FaultFlags& flags, FaultOptions& faults);

/// The first value out of range (option named), or empty.
[[nodiscard]] std::string fault_problem(const FaultOptions& faults);

}  // namespace bloomshard::app
