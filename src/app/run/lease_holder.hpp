// The run's lease as a job holds it (fencing, run_lease.hpp): rank 0 takes
// the run's lock file, waiting up to --lock-wait for an earlier attempt to
// end, and every other rank joins it; under the heartbeat lease mode rank 0
// beats it from the watchdog thread. An orderly end releases it; an abort
// leaves it, as a kill would.
#pragma once

#include <optional>

#include "app/options/dedup_options.hpp"
#include "app/run/run_lease.hpp"
#include "app/run/watchdog.hpp"
#include "comm/communicator.hpp"

namespace bloomshard::app {

class LeaseHolder {
 public:
  LeaseHolder(const comm::Communicator& world, const DedupConfig& config, Watchdog& watchdog)
      : world_(world), config_(config), watchdog_(watchdog) {}
  LeaseHolder(const LeaseHolder&) = delete;
  LeaseHolder& operator=(const LeaseHolder&) = delete;

  /// Collective: takes the run (rank 0 acquires, the others join). False on
  /// every rank when the wait ran out (rank 0 said why); throws when the
  /// lock cannot be taken at all.
  [[nodiscard]] bool take();

  /// Collective, at an orderly end: the other ranks close the lock file,
  /// then rank 0 removes it (only with fcntl locks, under the write lock).
  void release();

  /// Throws FencedOut unless this attempt still holds the run.
  void check() const { lease_->check(); }

 private:
  std::string acquire_on_rank0();

  const comm::Communicator& world_;
  const DedupConfig& config_;
  Watchdog& watchdog_;
  std::optional<RunLease> lease_;
};

}  // namespace bloomshard::app
