#include "bloomshard/app/fault_pause.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "bloomshard/app/stderr_line.hpp"
#include "bloomshard/comm/heartbeat.hpp"

namespace bloomshard::app {

void fault_pause_in_finish(const char* point, int rank) {
  const char* wanted = std::getenv("BLOOMSHARD_FAULT_PAUSE_IN_FINISH");
  if (wanted == nullptr || std::strcmp(wanted, point) != 0) return;
  if (rank == 0) write_stderr_line("bloomshard dedup: fault pause at " + std::string(point));
  // Beating keeps the stall watchdog quiet: the pause is the test's, not a hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    comm::heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace bloomshard::app
