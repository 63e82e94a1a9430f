// The job's safety net, one thread per rank: ends this process, after one
// line on stderr naming the rank, host and what it was doing, when
//  - its launcher is gone (an orphan: getppid() changed while the rank was
//    started by mpirun/orted/srun, i.e. OMPI_COMM_WORLD_* or PMIX_* or
//    SLURM_STEP_ID was set; never for a singleton, which a user may nohup),
//    checked every kPollSeconds, so an orphan ends within ~0.25 s;
//  - no heartbeat (comm::heartbeat) came for --stall-timeout seconds: a
//    stuck file system, or a dead peer that MPI never reports, leaves this
//    rank waiting in a call that would otherwise never return.
// It ends the process with _exit (nothing further is written: no buffered
// output is flushed, no checkpoint is committed); a launcher then tears the
// rest of the job down (Open MPI and srun --kill-on-bad-exit end a job one
// of whose ranks exited non-zero before MPI_Finalize), and every other rank's
// own watchdog is the backstop. It also beats the run's lease (lease mode).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "app/cli/exit_codes.hpp"

namespace bloomshard::app {

/// What this rank is doing, for the watchdog's message. `what` must be a
/// string literal (it is kept as a pointer); `round` 0 means none.
void set_activity(const char* what, std::uint64_t round = 0) noexcept;

/// Exit code of a process ended by the watchdog (stall or orphan).
inline constexpr int kExitWatchdog = kExitStalled;

class Watchdog {
 public:
  static constexpr double kPollSeconds = 0.25;

  /// Records the launcher (parent pid and the environment) now: construct it
  /// first thing in main, before MPI_Init (which can hang without a
  /// launcher). `stall_timeout` 0 disables the stall check.
  explicit Watchdog(double stall_timeout_seconds);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  /// Stops and joins the thread.
  ~Watchdog();

  /// The rank number for messages, once MPI knows it.
  void set_rank(int rank) noexcept { rank_.store(rank, std::memory_order_relaxed); }
  /// Changes the stall timeout (0: off), e.g. after the options are parsed.
  void set_stall_timeout(double seconds) noexcept;
  /// A known, bounded quiet period (waiting for rank 0 to take the run's
  /// lock): the stall check allows `seconds` more from now.
  void allow_quiet(double seconds) noexcept;
  /// Called every RunLease::kBeatSeconds from the watchdog thread (the
  /// lease heartbeat); returns an error text to report once, or empty.
  void set_periodic(std::function<std::string()> fn, double every_seconds);

  /// True if this process was started by a launcher (see the banner).
  [[nodiscard]] bool launched() const noexcept { return launched_; }

 private:
  void loop();
  [[noreturn]] void end_process(const std::string& why) const;

  bool launched_ = false;
  long parent_ = 0;
  std::atomic<int> rank_{-1};
  std::atomic<std::int64_t> stall_ns_{0};
  std::atomic<std::int64_t> quiet_until_ns_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::function<std::string()> periodic_;
  double periodic_every_ = 0;
  std::thread thread_;  // last: starts after every member above exists
};

}  // namespace bloomshard::app
