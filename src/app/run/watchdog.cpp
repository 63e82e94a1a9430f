#include "app/run/watchdog.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/heartbeat.hpp"

namespace bloomshard::app {
namespace {

std::atomic<const char*> g_activity{"starting"};
std::atomic<std::uint64_t> g_round{0};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t to_ns(double seconds) { return static_cast<std::int64_t>(seconds * 1e9); }

// A launcher leaves one of these in its ranks' environment; a singleton run
// has none (Open MPI sets OMPI_COMM_WORLD_* only inside MPI_Init then).
bool started_by_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_STEP_ID"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return -1;
}

}  // namespace

void set_activity(const char* what, std::uint64_t round) noexcept {
  g_activity.store(what, std::memory_order_relaxed);
  g_round.store(round, std::memory_order_relaxed);
}

Watchdog::Watchdog(double stall_timeout_seconds)
    : launched_(started_by_launcher()), parent_(static_cast<long>(::getppid())) {
  rank_.store(rank_from_environment(), std::memory_order_relaxed);
  set_stall_timeout(stall_timeout_seconds);
  comm::heartbeat();
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> hold(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::set_stall_timeout(double seconds) noexcept {
  stall_ns_.store(seconds > 0 ? to_ns(seconds) : 0, std::memory_order_relaxed);
  comm::heartbeat();  // the new timeout counts from now
}

void Watchdog::allow_quiet(double seconds) noexcept {
  quiet_until_ns_.store(now_ns() + to_ns(seconds), std::memory_order_relaxed);
}

void Watchdog::set_periodic(std::function<std::string()> fn, double every_seconds) {
  std::lock_guard<std::mutex> hold(mutex_);
  periodic_ = std::move(fn);
  periodic_every_ = every_seconds;
}

void Watchdog::end_process(const std::string& why) const {
  char host[256] = "?";
  (void)::gethostname(host, sizeof host - 1);
  const int rank = rank_.load(std::memory_order_relaxed);
  const std::uint64_t round = g_round.load(std::memory_order_relaxed);
  char line[1024];
  const int n =
      std::snprintf(line, sizeof line,
                    "bloomshard dedup: rank %d on %s (pid %ld): %s while %s%s%s; ending this "
                    "process (watchdog)\n",
                    rank, host, static_cast<long>(::getpid()), why.c_str(),
                    g_activity.load(std::memory_order_relaxed), round != 0 ? " in round " : "",
                    round != 0 ? std::to_string(round).c_str() : "");
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(std::min(n, 1023)));
  ::_exit(kExitWatchdog);
}

void Watchdog::loop() {
  std::int64_t next_periodic = 0;
  bool periodic_failed = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::duration<double>(kPollSeconds));
    if (stop_) break;
    const std::int64_t now = now_ns();
    if (launched_ && static_cast<long>(::getppid()) != parent_) {
      end_process("its launcher (parent pid " + std::to_string(parent_) +
                  ") is gone: an orphaned rank");
    }
    const std::int64_t stall = stall_ns_.load(std::memory_order_relaxed);
    const std::int64_t beat = comm::last_heartbeat_ns();
    if (stall > 0 && beat != 0 && now - beat > stall &&
        now > quiet_until_ns_.load(std::memory_order_relaxed)) {
      end_process("no progress for " + std::to_string((now - beat) / 1'000'000'000) +
                  " s (--stall-timeout " + std::to_string(stall / 1'000'000'000) + ")");
    }
    if (periodic_ && now >= next_periodic) {
      next_periodic = now + to_ns(periodic_every_);
      const std::string err = periodic_();
      if (!err.empty() && !periodic_failed) {
        periodic_failed = true;
        std::fprintf(stderr, "bloomshard dedup: warning: lease heartbeat: %s\n", err.c_str());
      }
    }
  }
}

}  // namespace bloomshard::app
