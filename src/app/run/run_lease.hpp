// Fencing: at most one live attempt of a run writes its outputs and state.
// Every rank of a live attempt holds a POSIX fcntl READ lock on one lock
// file (STATE/LOCK, or OUTPUT/_bloomshard.lock without --state) for its
// whole life, orphaned ranks included. A new attempt's rank 0 needs the
// WRITE lock, so it waits until every process of any earlier attempt, on
// any node, is gone (the kernel, or the NFSv4/Lustre/GPFS lock manager,
// drops a dead process's locks). Holding it, rank 0 bumps the epoch (the
// fencing token) stored in the file, converts its lock to a read lock, and
// the other ranks take read locks. Where fcntl locks are not supported
// (ENOLCK, ENOSYS, EINVAL, EOPNOTSUPP: e.g. an NFS mount with nolock,
// Lustre without -o flock) the file is a lease instead: the holder beats a
// time stamp into it, a new attempt waits until that beat is older than the
// lease timeout, and every commit and (once a second) every round checks
// that the epoch is still this attempt's. docs/reliability.md has the rules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "app/cli/exit_codes.hpp"
#include "app/report/job_abort.hpp"

namespace bloomshard::app {

/// How the lock file is used: fcntl locks with a lease fallback (auto),
/// fcntl locks only (fail where unsupported), or the lease only.
enum class FencingMode : std::uint8_t { kAuto, kFcntl, kLease };

/// "auto" | "fcntl" | "lease"; nullopt for anything else.
[[nodiscard]] std::optional<FencingMode> parse_fencing_mode(std::string_view text);

/// What the lock file says about its holder (one line of text in it).
struct LeaseRecord {
  std::uint64_t epoch = 0;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t since_unix = 0;      ///< when this epoch began (wall clock, s)
  std::int64_t heartbeat_unix = 0;  ///< last beat of the holder (lease mode only)
  std::string mode;                 ///< "fcntl" or "lease"
  std::int64_t lock_pid = 0;        ///< not stored: the process fcntl says holds the lock
};

/// The record as one line and back (std::nullopt for a line that does not parse).
[[nodiscard]] std::string format_lease(const LeaseRecord& r);
[[nodiscard]] std::optional<LeaseRecord> parse_lease(std::string_view line);

/// "host node7, pid 4242, since 2026-12-01 09:14:03 UTC (epoch 3)".
[[nodiscard]] std::string describe_holder(const LeaseRecord& r);

/// Thrown when this attempt no longer holds the run: a newer attempt bumped
/// the epoch (lease mode), or the lock file was replaced.
class FencedOut : public CommandExit {
 public:
  explicit FencedOut(const std::string& what) : CommandExit(what, kExitRunLocked) {}
};

/// One process's hold on a run. Not copyable; the lock goes with the object
/// (and with the process, whatever kills it).
class RunLease {
 public:
  /// Lease-mode timing: the holder's watchdog thread beats every
  /// kBeatSeconds; a lease whose beat is older than kLeaseTimeoutSeconds is
  /// free. A holder whose main thread hangs still beats, but its stall
  /// watchdog ends it (--stall-timeout < kLeaseTimeoutSeconds); a holder
  /// frozen longer (SIGSTOP, a suspended VM) is fenced by the epoch check
  /// of its next round or commit.
  static constexpr double kBeatSeconds = 5;
  static constexpr double kLeaseTimeoutSeconds = 90;

  /// Rank 0 of a new attempt: opens (creates) `lock_file`, waits up to
  /// `wait_seconds` for the write lock (lease: for the lease to go stale),
  /// polling every 200 ms and calling `on_wait` before each sleep, then
  /// bumps the epoch and records this process. Returns nullopt and fills
  /// `holder` when the wait ran out; throws std::system_error on other I/O
  /// errors.
  static std::optional<RunLease> acquire(const std::filesystem::path& lock_file, FencingMode mode,
                                         double wait_seconds, LeaseRecord& holder,
                                         void (*on_wait)() = nullptr);

  /// Other ranks, after rank 0 acquired epoch `epoch` in mode `mode_used`:
  /// take a read lock (fcntl) and check the file's epoch. Throws FencedOut
  /// or std::system_error.
  static RunLease join(const std::filesystem::path& lock_file, bool fcntl_mode,
                       std::uint64_t epoch);

  RunLease(RunLease&& other) noexcept;
  RunLease& operator=(RunLease&& other) noexcept;
  RunLease(const RunLease&) = delete;
  ~RunLease();

  /// Rank 0 at an orderly end, after every other rank of the attempt closed
  /// its lease: removes the lock file (no leftovers after a run or a
  /// refusal) and closes. Removes only with fcntl locks and only while it
  /// holds the write lock on the file the path still names; in lease mode
  /// the file stays, its handed-back beat is what the next start reads.
  /// True if the file was removed. The epoch starts at 1 again in a new
  /// file: no earlier attempt lives (its locks would have blocked this one).
  bool release_and_remove(const std::filesystem::path& lock_file);

  /// Throws FencedOut unless the file still names this attempt's epoch.
  /// Thread-safe (one pread, ~10 us locally).
  void check() const;

  /// Lease mode, rank 0: writes a fresh heartbeat time. No-op with fcntl
  /// locks. Thread-safe; errors are returned as text (empty: ok).
  [[nodiscard]] std::string beat();

  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] bool uses_fcntl() const noexcept { return fcntl_; }

 private:
  RunLease(int fd, bool fcntl_mode, std::uint64_t epoch, LeaseRecord record);

  int fd_ = -1;
  bool fcntl_ = true;
  std::uint64_t epoch_ = 0;
  LeaseRecord record_;
  mutable std::mutex mutex_;  // pread/pwrite of the watchdog thread vs. the main thread
};

/// The lock file a run uses: STATE/LOCK with a state dir, else
/// OUTPUT/_bloomshard.lock.
[[nodiscard]] std::filesystem::path lock_file_for(const std::string& state_dir,
                                                  const std::string& output_dir);

/// Name of the lock file in the output dir (ignored by the output guard).
inline constexpr const char* kOutputLockName = "_bloomshard.lock";

}  // namespace bloomshard::app
