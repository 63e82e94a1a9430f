#include "app/run/fault_pause.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "app/report/stderr_line.hpp"
#include "app/run/stop_signal.hpp"
#include "comm/heartbeat.hpp"

namespace bloomshard::app {

namespace {

void pause_at(const char* point, int rank, bool until_stop) {
  const char* wanted = std::getenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH");
  if (wanted == nullptr || std::strcmp(wanted, point) != 0) return;
  if (rank == 0) write_stderr_line("bloomshard dedup: fault pause at " + std::string(point));
  // Beating keeps the stall watchdog quiet: the pause is the test's, not a hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !(until_stop && stop_requested())) {
    comm::heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

void fault_pause_in_finish(const char* point, int rank) { pause_at(point, rank, false); }

void fault_pause_until_stop(const char* point, int rank) { pause_at(point, rank, true); }

}  // namespace bloomshard::app
